import { isDeepStrictEqual } from 'node:util';
import { InputError } from './errors.js';

type Json = Record<string, unknown>;

export interface RecordLinesOptions {
  /** 1-based line number of the first line given (2 after a header line). */
  firstLine?: number;
  /**
   * A line that is not a JSON record with a string id (`parsed`: it is JSON, just not a record):
   * what to do. `skip` leaves it out (a torn last line that resuming recomputes); else it is
   * refused (the callback may throw its own message; the default is "not a record").
   */
  onBadLine?: (lineNumber: number, isLast: boolean, parsed: boolean) => 'skip' | undefined;
  /**
   * Top-level fields a later line may fill in or recompute for an id already seen (the references
   * store appends a record again once it gains its ground truth or hallucination premise). The
   * later record replaces the earlier when everything else of the earlier is still in it.
   */
  completedFields?: readonly string[];
}

/**
 * The one reader of todeval's record files (per-turn results, references, rerank items) used by
 * resume, merge, compare, report and the references store: the records by id, in the order their
 * ids first appear. A line repeating an id with the same record is that one record (a run that
 * wrote it twice); a later line that completes the earlier (completedFields) replaces it; a
 * conflicting duplicate is refused naming the id and both lines, since keeping either (last wins)
 * silently changes the scores.
 */
export function readRecordLines<T extends { id: string }>(lines: readonly string[], file: string, opts: RecordLinesOptions = {}): Map<string, T> {
  const first = opts.firstLine ?? 1;
  const lastIndex = lastNonEmpty(lines);
  const byId = new Map<string, T>();
  const lineOf = new Map<string, number>();
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    if (raw === '') continue;
    const lineNumber = first + i;
    const { rec, parsed } = parseRecord(raw);
    if (!rec) {
      if (opts.onBadLine?.(lineNumber, i === lastIndex, parsed) === 'skip') continue;
      throw new InputError('not a record (a JSON object with a string id)', { file, where: `line ${lineNumber}` });
    }
    const earlier = byId.get(rec.id);
    if (earlier !== undefined && !isDeepStrictEqual(earlier, rec)) {
      if (!completes(earlier, rec, opts.completedFields ?? [])) {
        throw new InputError(
          `id ${JSON.stringify(rec.id)} appears twice with different records (lines ${lineOf.get(rec.id)} and ${lineNumber}); ` +
            'two runs wrote this file at once, or it was edited: keep one of the two lines',
          { file },
        );
      }
    }
    if (earlier === undefined || !isDeepStrictEqual(earlier, rec)) {
      byId.set(rec.id, rec as unknown as T);
      lineOf.set(rec.id, lineNumber);
    }
  }
  return byId;
}

function lastNonEmpty(lines: readonly string[]): number {
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i].trim() !== '') return i;
  return -1;
}

function parseRecord(raw: string): { rec?: Json & { id: string }; parsed: boolean } {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return { parsed: false };
  }
  const isRecord = !!v && typeof v === 'object' && !Array.isArray(v) && typeof (v as Json).id === 'string';
  return { rec: isRecord ? (v as Json & { id: string }) : undefined, parsed: true };
}

/**
 * How a record met again for an id relates to the one kept, by readRecordLines' rule, for readers
 * that join several files (todeval merge): the same record, one that completes it (replaces it),
 * one it already completes (nothing to add), or a conflict that neither may silently win.
 */
export function recordRelation(kept: object, again: object, completedFields: readonly string[]): 'same' | 'completes' | 'completed' | 'conflict' {
  const k = kept as Json;
  const a = again as Json;
  if (isDeepStrictEqual(k, a)) return 'same';
  // Files joined come in any order (unlike one file's lines, where a completion is always later):
  // a record replaces another only when it has every completed field the other has, so a shard's
  // older record never takes the ground truth away from the one already kept.
  const hasAllOf = (x: Json, y: Json) => completedFields.every((f) => y[f] === undefined || x[f] !== undefined);
  if (completes(k, a, completedFields) && hasAllOf(a, k)) return 'completes';
  if (completes(a, k, completedFields) && hasAllOf(k, a)) return 'completed';
  return 'conflict';
}

/** `later` keeps all of `earlier` (deeply) but the completed fields: it adds to the record, never changes it. */
function completes(earlier: Json, later: Json, completedFields: readonly string[]): boolean {
  if (completedFields.length === 0) return false;
  const keep = (r: Json) => Object.fromEntries(Object.entries(r).filter(([k]) => !completedFields.includes(k)));
  return isDeepSubset(keep(earlier), keep(later));
}

function isDeepSubset(a: unknown, b: unknown): boolean {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => isDeepSubset(x, b[i]));
  if (a && typeof a === 'object') {
    if (!b || typeof b !== 'object' || Array.isArray(b)) return false;
    return Object.entries(a as Json).every(([k, v]) => k in (b as Json) && isDeepSubset(v, (b as Json)[k]));
  }
  return Object.is(a, b);
}
