/**
 * The canonical value map kept in its raw, ordered shape. The shared CanonicalMap index
 * (src/metrics/canonical-map.ts) merges tables and forgets which values are goal values, which
 * entries are `not_in_goal` and the order of the entries; GCDF1's value normalization needs all
 * three (candidates from goal values first, then the whole table; the first canonical value that
 * lists a paraphrase wins), so this view keeps them.
 */
import { InputError } from '../../util/errors.js';
import { readJsonFile } from '../../util/json-file.js';

/** A node of the map: an ordered table of key -> node, or a list of paraphrases. */
export type CmapNode = CmapTable | string[];
export type CmapTable = Map<string, CmapNode>;

export function isTable(n: CmapNode | undefined): n is CmapTable {
  return n instanceof Map;
}

/**
 * JSON objects lose the order of integer-like keys ("1", "10", "9") in JavaScript, so keys are put
 * back in sorted order: the released map is written with sorted keys, which makes this its file order.
 */
function toNode(x: unknown, file: string, at: string): CmapNode {
  if (Array.isArray(x)) {
    if (!x.every((s) => typeof s === 'string')) throw new InputError(`${at}: paraphrases must be strings`, { file });
    return [...new Set(x as string[])];
  }
  if (typeof x === 'object' && x !== null) {
    const table: CmapTable = new Map();
    for (const key of Object.keys(x).sort()) table.set(key, toNode((x as Record<string, unknown>)[key], file, `${at}.${key}`));
    return table;
  }
  throw new InputError(`${at}: expected an object or a list of strings`, { file });
}

export interface CanonicalValues {
  source: string;
  root: CmapTable;
}

export function parseCanonicalValues(json: unknown, source: string): CanonicalValues {
  const root = toNode(json, source, 'map');
  if (!isTable(root)) throw new InputError('canonical map must be a JSON object of slot -> values', { file: source });
  return { source, root };
}

export function loadCanonicalValues(file: string): CanonicalValues {
  return parseCanonicalValues(readJsonFile(file), file);
}

/** Keys of a table, or the paraphrases of a list (the reference calls list() on either). */
export function entriesOf(n: CmapNode | undefined): string[] {
  if (n === undefined) return [];
  return isTable(n) ? [...n.keys()] : n;
}

export function contains(n: CmapNode | undefined, value: string): boolean {
  if (n === undefined) return false;
  return isTable(n) ? n.has(value) : n.includes(value);
}
