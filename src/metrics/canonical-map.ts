import { readJsonFile } from '../util/json-file.js';
import { InputError } from '../util/errors.js';

/**
 * Value paraphrases -> canonical values, in the layout of GCDF1's `multiwoz21_canonical_map.json`:
 *
 *   { slot: { canonical: [surface, ...], ..., special_keys: {...} } }            (domain-independent)
 *   { slot: { domain: { canonical: [surface, ...], special_keys: {...} }, ... } } (per domain)
 *
 * `special_keys.not_in_goal` holds more canonical -> surfaces entries (values seen in dialogues but
 * not in goals), so it is merged in; `special_keys.noise` and `special_keys.multiple_acts` list
 * annotation errors and multi-value spans that must not make two values equivalent, so they are
 * ignored. The loader knows nothing about SER: GCDF1 and other stages can use the same index.
 */
export class CanonicalMap {
  /** slot -> domain ('*' when the slot is not split by domain) -> canonical -> surfaces. */
  private readonly classes = new Map<string, Map<string, Map<string, Set<string>>>>();
  /** slot -> domain -> surface -> canonicals it belongs to. */
  private readonly reverse = new Map<string, Map<string, Map<string, Set<string>>>>();

  constructor(readonly source: string) {}

  /** Register one surface form of a canonical value (both lowercased: the map is case-insensitive). */
  add(slot: string, domain: string, canonical: string, surface: string): void {
    const c = canonical.toLowerCase();
    const s = surface.toLowerCase();
    const byCanon = getOrCreate(getOrCreate(this.classes, slot, () => new Map()), domain, () => new Map());
    const surfaces = getOrCreate(byCanon, c, () => new Set<string>());
    surfaces.add(c);
    surfaces.add(s);
    const bySurface = getOrCreate(getOrCreate(this.reverse, slot, () => new Map()), domain, () => new Map());
    getOrCreate(bySurface, s, () => new Set<string>()).add(c);
    getOrCreate(bySurface, c, () => new Set<string>()).add(c);
  }

  slots(): string[] {
    return [...this.classes.keys()].sort();
  }

  hasSlot(slot: string): boolean {
    return this.classes.has(slot);
  }

  /** Canonical values a surface form maps to (empty when unknown). */
  canonicalsOf(slot: string, value: string, domain?: string): string[] {
    const out = new Set<string>();
    for (const table of this.tablesFor(this.reverse, slot, domain)) {
      for (const c of table.get(value.toLowerCase()) ?? []) out.add(c);
    }
    return [...out];
  }

  /**
   * Every surface form equivalent to `value`: the surfaces of each canonical value it maps to.
   * Lowercased; always includes the value itself.
   */
  equivalents(slot: string, value: string, domain?: string): string[] {
    const out = new Set<string>([value.toLowerCase()]);
    const canonicals = this.canonicalsOf(slot, value, domain);
    for (const table of this.tablesFor(this.classes, slot, domain)) {
      for (const c of canonicals) for (const s of table.get(c) ?? []) out.add(s);
    }
    return [...out];
  }

  /** The domain-specific table when the slot is split by domain, else the shared one. */
  private tablesFor<T>(index: Map<string, Map<string, T>>, slot: string, domain?: string): T[] {
    const byDomain = index.get(slot);
    if (!byDomain) return [];
    if (byDomain.has('*')) return [byDomain.get('*')!];
    if (domain !== undefined) {
      const t = byDomain.get(domain.toLowerCase());
      return t ? [t] : [];
    }
    // No domain given for a per-domain slot: any domain's paraphrases may apply.
    return [...byDomain.values()];
  }
}

function getOrCreate<K, V>(m: Map<K, V>, k: K, make: () => V): V {
  let v = m.get(k);
  if (v === undefined) {
    v = make();
    m.set(k, v);
  }
  return v;
}

type Json = unknown;

function isStringArray(x: Json): x is string[] {
  return Array.isArray(x) && x.every((s) => typeof s === 'string');
}

function isObject(x: Json): x is Record<string, Json> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** A table of canonical -> surfaces (plus special_keys); true when every entry has that shape. */
function isValueTable(x: Json): x is Record<string, Json> {
  if (!isObject(x)) return false;
  return Object.entries(x).every(([k, v]) => k === 'special_keys' || isStringArray(v));
}

function addTable(map: CanonicalMap, slot: string, domain: string, table: Record<string, Json>): void {
  for (const [canonical, surfaces] of Object.entries(table)) {
    if (canonical === 'special_keys') continue;
    if (!isStringArray(surfaces)) continue;
    map.add(slot, domain, canonical, canonical);
    for (const s of surfaces) map.add(slot, domain, canonical, s);
  }
  const special = table.special_keys;
  if (isObject(special) && isObject(special.not_in_goal)) {
    for (const [canonical, surfaces] of Object.entries(special.not_in_goal)) {
      // not_in_goal also nests a `noise` object; only canonical -> list entries are paraphrases.
      if (!isStringArray(surfaces)) continue;
      map.add(slot, domain, canonical, canonical);
      for (const s of surfaces) map.add(slot, domain, canonical, s);
    }
  }
}

/** Build a CanonicalMap from parsed JSON; `source` names the file in error messages. */
export function parseCanonicalMap(json: Json, source: string): CanonicalMap {
  if (!isObject(json)) throw new InputError('canonical map must be a JSON object of slot -> values', { file: source });
  const map = new CanonicalMap(source);
  for (const [slotRaw, entry] of Object.entries(json)) {
    const slot = slotRaw.toLowerCase();
    if (isValueTable(entry)) {
      addTable(map, slot, '*', entry);
    } else if (isObject(entry) && Object.values(entry).every(isValueTable)) {
      for (const [domain, table] of Object.entries(entry)) addTable(map, slot, domain.toLowerCase(), table as Record<string, Json>);
    } else {
      throw new InputError('expected canonical -> [paraphrases] or domain -> {canonical -> [paraphrases]}', {
        file: source,
        where: `slot ${slotRaw}`,
      });
    }
  }
  return map;
}

export function loadCanonicalMap(file: string): CanonicalMap {
  return parseCanonicalMap(readJsonFile(file), file);
}

/** Where the GCDF1 resources keep the MultiWOZ 2.1 map inside a data dir. */
export const MULTIWOZ_CANONICAL_MAP = ['gcdf1', 'resources', 'multiwoz21_canonical_map.json'] as const;
