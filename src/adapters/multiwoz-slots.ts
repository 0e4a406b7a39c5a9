import path from 'node:path';
import { rulesDir } from '../util/rules-dir.js';
import type { SchemaIndex } from '../schema/schema-index.js';
import { readJsonFile } from '../util/json-file.js';

/** rules/multiwoz/slot-map.json: how MultiWOZ 2.1 act slots map onto MultiWOZ 2.2 schema slots. */
export interface MultiwozSlotMap {
  default: Record<string, string>;
  domains: Record<string, Record<string, string>>;
  extraSlots: Record<string, string>;
  noneMeans: Record<string, string>;
}

export function slotMapFile(): string {
  return path.join(rulesDir(), 'multiwoz', 'slot-map.json');
}

let cached: MultiwozSlotMap | undefined;
export function loadSlotMap(): MultiwozSlotMap {
  cached ??= readJsonFile<MultiwozSlotMap>(slotMapFile());
  return cached;
}

const lowerMaps = new WeakMap<MultiwozSlotMap, { default: Map<string, string>; domains: Map<string, Map<string, string>>; suffixes: Set<string> }>();

function lowered(map: MultiwozSlotMap) {
  let l = lowerMaps.get(map);
  if (!l) {
    const lower = (o: Record<string, string>) => new Map(Object.entries(o).map(([k, v]) => [k.toLowerCase(), v]));
    l = {
      default: lower(map.default),
      domains: new Map(Object.entries(map.domains).map(([d, o]) => [d, lower(o)])),
      suffixes: new Set([...Object.values(map.default), ...Object.keys(map.extraSlots)]),
    };
    lowerMaps.set(map, l);
  }
  return l;
}

/**
 * The 2.2 suffix for an act slot in a domain (Addr -> address), or undefined when unmapped.
 * MultiWOZ 2.1 writes "Addr"; MultiWOZ 2.2's dialog_acts.json writes slots in lower case, some
 * already as 2.2 names ("address", "leaveat"), so the lookup falls back to case-insensitive
 * matching and then to the name itself when it is a known 2.2 suffix.
 */
export function mapSlot(map: MultiwozSlotMap, domain: string, slot: string): string | undefined {
  const exact = map.domains[domain]?.[slot] ?? map.default[slot];
  if (exact) return exact;
  const l = lowered(map);
  const key = slot.toLowerCase();
  return l.domains.get(domain)?.get(key) ?? l.default.get(key) ?? (l.suffixes.has(key) ? key : undefined);
}

/**
 * Adds the pseudo-slots (choice, ref, booking slots of domains without them ...) to every service
 * of a MultiWOZ 2.2 schema, so references for such acts can still use a description.
 */
export function addMultiwozPseudoSlots(schema: SchemaIndex, map: MultiwozSlotMap): void {
  for (const svc of schema.allServices()) {
    const have = new Set(svc.slots.map((s) => s.name));
    const extra = Object.entries(map.extraSlots)
      .filter(([suffix]) => !have.has(`${svc.name}-${suffix}`))
      .map(([suffix, desc]) => ({
        name: `${svc.name}-${suffix}`,
        description: desc.replaceAll('{domain}', svc.name),
        isCategorical: false,
        possibleValues: [],
      }));
    if (extra.length) schema.add({ ...svc, slots: [...svc.slots, ...extra] });
  }
}
