import path from 'node:path';
import { rulesDir } from '../rules/paths.js';
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

/** The 2.2 suffix for a 2.1 slot in a domain (Addr -> address), or undefined when unmapped. */
export function mapSlot(map: MultiwozSlotMap, domain: string, slot21: string): string | undefined {
  return map.domains[domain]?.[slot21] ?? map.default[slot21];
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
