import { holdingMwzData } from './held-data.js';
import { filesStamp, StampedCache } from '../../util/stamped-cache.js';
import path from 'node:path';
import { dataFile } from '../../data/data-dir.js';
import { readJsonFile, type FileRead } from '../../util/json-file.js';
import { InputError } from '../../util/errors.js';
import { partialRatioOrBelow } from './fuzzy.js';
import { DONTCARE_VALUES, normalizeStateSlotValue, timeStrToMinutes } from './normalize-state.js';

export const VENUE_DOMAINS = ['restaurant', 'hotel', 'attraction', 'train'] as const;
export type VenueDomain = (typeof VENUE_DOMAINS)[number];

// Columns mwzeval drops before matching: free text or structures no state slot can constrain.
const IGNORED_COLUMNS: Record<string, string[]> = {
  attraction: ['location', 'openhours'],
  hotel: ['location', 'price', 'takesbookings'],
  restaurant: ['location', 'introduction', 'signature'],
};

// Columns compared with partial_ratio >= 90 instead of equality: surface forms vary most here.
const FUZZY_COLUMNS: Record<string, Set<string>> = {
  hotel: new Set(['name']),
  attraction: new Set(['name']),
  restaurant: new Set(['name', 'food']),
  train: new Set(['departure', 'destination']),
};

type Row = Record<string, unknown>;

export interface QueryOptions {
  fuzzyRatio?: number;
  /**
   * Optimistic ("reduced search") mode of the paper: when the constraints name a venue or a train
   * id, every other constraint is ignored.
   */
  reducedSearch?: boolean;
}

function normalizeColumnName(name: string): string {
  if (name === 'id') return name;
  const n = name.toLowerCase().replaceAll(' ', '');
  if (n === 'arriveby') return 'arrive';
  if (n === 'leaveat') return 'leave';
  return n;
}

const isVenueDomain = (d: string): d is VenueDomain => (VENUE_DOMAINS as readonly string[]).includes(d);

/**
 * The MultiWOZ venue database as mwzeval queries it: a row matches when every constrained column
 * agrees (times as arrive-by/leave-after bounds, fuzzy names), '?' cells match anything, and the
 * result is the list of venue ids (train ids for trains). Results are memoized per query.
 */
/** The databases this process loaded, by their files' paths, while their sizes and mtimes hold (MwzDatabase.load). */
const heldDatabases = new StampedCache<MwzDatabase>();

export class MwzDatabase {
  readonly rows: Record<VenueDomain, Row[]>;
  readonly columns: Record<VenueDomain, string[]>;
  private readonly cache = new Map<string, string[]>();
  private readonly filters = new Map<string, Uint8Array>();
  /**
   * Each constraint value as the query compares it (normalizeStateSlotValue, minutes for times), by
   * slot and raw value: an evaluation queries the same few hundred values tens of thousands of times.
   */
  private readonly normalized = new Map<string, string | number>();

  constructor(rows: Record<VenueDomain, Row[]>) {
    this.rows = {} as Record<VenueDomain, Row[]>;
    this.columns = {} as Record<VenueDomain, string[]>;
    for (const domain of VENUE_DOMAINS) {
      const ignored = IGNORED_COLUMNS[domain] ?? [];
      this.rows[domain] = rows[domain].map((raw) => {
        const row: Row = {};
        for (const [k, v] of Object.entries(raw)) {
          if (ignored.includes(k)) continue;
          row[normalizeColumnName(k)] = v;
        }
        // time bounds are compared in minutes; parse each cell once
        if (domain === 'train') {
          row.__arrive = timeStrToMinutes(String(row.arrive ?? ''));
          row.__leave = timeStrToMinutes(String(row.leave ?? ''));
        }
        return row;
      });
      this.columns[domain] = Object.keys(this.rows[domain][0] ?? {}).filter((k) => !k.startsWith('__'));
    }
  }

  /**
   * Load `<dataDir>/multiwoz/db/{restaurant,hotel,attraction,train}_db.json`. While holdMwzData is
   * on (`todeval stdio`), the database is kept by its files' paths, sizes and mtimes and loaded once
   * (its query caches depend on the rows only, so sharing them is sharing answers).
   */
  static load(dataDir: string, read?: FileRead): MwzDatabase {
    if (!holdingMwzData()) return MwzDatabase.read(dataDir, read);
    const files = VENUE_DOMAINS.map((domain) => dataFile(dataDir, 'multiwoz', 'db', `${domain}_db.json`));
    // A missing file has no stamp: nothing is kept, and MwzDatabase.read names it.
    return heldDatabases.get(files.map((f) => path.resolve(f)).join('\n'), filesStamp(files), () => MwzDatabase.read(dataDir, read));
  }

  private static read(dataDir: string, read?: FileRead): MwzDatabase {
    const rows = {} as Record<VenueDomain, Row[]>;
    for (const domain of VENUE_DOMAINS) {
      const file = dataFile(dataDir, 'multiwoz', 'db', `${domain}_db.json`);
      const data = readJsonFile<Row[]>(file, read);
      if (!Array.isArray(data) || data.length === 0) {
        throw new InputError('expected a non-empty JSON array of database rows', { file: path.resolve(file) });
      }
      rows[domain] = data;
    }
    return new MwzDatabase(rows);
  }

  /** Ids of rows matching the constraints (slot -> value, state-normalized slot names). */
  query(domain: string, constraints: Record<string, unknown>, opts: QueryOptions = {}): string[] {
    if (!isVenueDomain(domain)) return [];
    const fuzzyRatio = opts.fuzzyRatio ?? 90;
    const query: [string, string | number][] = [];
    for (const key of this.columns[domain]) {
      if (!(key in constraints)) continue;
      const raw = constraints[key];
      if (raw === undefined || raw === null) continue;
      const value = typeof raw === 'string' ? raw : String(raw);
      if (DONTCARE_VALUES.has(value)) continue;
      const memo = `${key}\u0000${value}`;
      let norm = this.normalized.get(memo);
      if (norm === undefined) {
        const n = normalizeStateSlotValue(key, value);
        norm = key === 'arrive' || key === 'leave' ? timeStrToMinutes(n) : n;
        this.normalized.set(memo, norm);
      }
      query.push([key, norm]);
    }
    const active = opts.reducedSearch ? reduce(query, domain) : query;
    const cacheKey = `${domain}|${fuzzyRatio}|${JSON.stringify(active)}`;
    const hit = this.cache.get(cacheKey);
    if (hit) return hit;

    const rows = this.rows[domain];
    let ok: Uint8Array | undefined;
    for (const [k, v] of active) {
      const pass = this.columnFilter(domain, k, v, fuzzyRatio);
      if (!ok) ok = pass.slice();
      else for (let i = 0; i < ok.length; i++) ok[i] &= pass[i];
    }
    const results: string[] = [];
    rows.forEach((row, i) => {
      if (!ok || ok[i]) results.push(String(domain === 'train' ? row.trainid : row.id));
    });
    this.cache.set(cacheKey, results);
    return results;
  }

  /**
   * Rows passing one constraint, memoized per (column, value): a query is the AND of these, so
   * fuzzy comparisons run once per distinct cell value rather than once per row and query.
   */
  private columnFilter(domain: VenueDomain, k: string, v: string | number, fuzzyRatio: number): Uint8Array {
    const key = `${domain}|${k}|${fuzzyRatio}|${typeof v}|${v}`;
    const hit = this.filters.get(key);
    if (hit) return hit;
    const rows = this.rows[domain];
    const pass = new Uint8Array(rows.length);
    const fuzzy = FUZZY_COLUMNS[domain];
    const byCell = new Map<unknown, boolean>();
    rows.forEach((row, i) => {
      const cell = row[k];
      if (cell === '?') {
        pass[i] = 1; // unknown cells never exclude a venue
        return;
      }
      let ok: boolean;
      if (k === 'arrive') ok = !((row.__arrive as number) > (v as number));
      else if (k === 'leave') ok = !((row.__leave as number) < (v as number));
      else {
        const known = byCell.get(cell);
        if (known !== undefined) ok = known;
        else {
          ok = fuzzy.has(k) ? partialRatioOrBelow(String(cell), v as string, fuzzyRatio) >= fuzzyRatio : cell === v;
          byCell.set(cell, ok);
        }
      }
      pass[i] = ok ? 1 : 0;
    });
    this.filters.set(key, pass);
    return pass;
  }
}

/** Keep only the identifying constraint when one is present (optimistic evaluation). */
function reduce(query: [string, string | number][], domain: VenueDomain): [string, string | number][] {
  const idKey = domain === 'train' ? 'trainid' : 'name';
  const id = query.filter(([k]) => k === idKey);
  return id.length > 0 ? id : query;
}
