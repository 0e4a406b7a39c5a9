import type { ErrorObject } from 'ajv';
import { schemaValidator, type SchemaCheck } from '../util/json-schema.js';
import { InputError } from '../util/errors.js';
import { duplicateTopLevelKey, readTextFile } from '../util/json-file.js';
import { MAX_PAIR_TEXT_CHARS } from '../nli/limits.js';

/**
 * Generated utterances keyed by turn id. Three layouts are accepted because systems publish all
 * three: JSONL `{id, utterance}` per line, a JSON array of those records, or a JSON object
 * id -> utterance. schemas/predictions.schema.json is the contract; ajv checks it here.
 */
export type PredictionsFormat = 'jsonl' | 'json-array' | 'json-object';

export interface LoadedPredictions {
  file: string;
  /** One note per utterance cut to MAX_PAIR_TEXT_CHARS (`<where>: utterance of N characters cut to M`). */
  oversize: string[];
  format: PredictionsFormat;
  byId: Map<string, string>;
  /** Records rejected under skipInvalid (each names file and line/index). */
  invalid: InputError[];
}

export interface IdComparison {
  /** Expected turn ids with no prediction. */
  missing: string[];
  /** Prediction ids that match no expected turn (typo'd or from another split). */
  extra: string[];
}

function getValidators(): { whole: SchemaCheck; record: SchemaCheck } {
  return { whole: schemaValidator('predictions.schema.json'), record: schemaValidator('predictions.schema.json', 'record') };
}

function describeAjvError(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return 'does not match schemas/predictions.schema.json';
  const at = e.instancePath ? `${e.instancePath} ` : '';
  return `${at}${e.message ?? 'is invalid'} (schemas/predictions.schema.json)`;
}

/**
 * Why an object is not an id -> utterance map. ajv's first oneOf error ("must be array") names the
 * other branch; the common slip is mwzeval's dialogue -> [turns] file, which gets its own hint.
 */
function describeObjectError(parsed: unknown, errors: ErrorObject[] | null | undefined): string {
  if (typeof parsed !== 'object' || parsed === null) return describeAjvError(errors);
  const bad = Object.entries(parsed as Record<string, unknown>).find(([, v]) => typeof v !== 'string');
  if (!bad) return describeAjvError(errors);
  const [key, value] = bad;
  if (Array.isArray(value)) {
    return (
      `"${key}" maps to a list: this looks like mwzeval's format (dialogue id -> turns); ` +
      'use `todeval evaluate -i FILE --sgsacc`, or give one {"id": "<dialogue>/<turn>", "utterance"} per turn'
    );
  }
  return `"${key}" must map to an utterance string (schemas/predictions.schema.json)`;
}

/** A JSON object that is itself one record: a one-line JSONL file, not an id -> utterance map. */
/**
 * A one-line JSONL file parses as one JSON object: a record when it has an `id` key (no turn id is
 * the bare word "id"), even without its utterance, so that record is refused for what it lacks
 * rather than read as an id -> utterance map whose one id, "id", matches no turn.
 */
function looksLikeRecord(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && 'id' in v;
}

/**
 * Whether text that JSON.parse refused whole was meant as one JSON document spread over lines
 * rather than as JSONL: it opens with `{` or `[`, and its first two non-blank lines (or its only
 * one) are not JSON on their own, as the lines of such a document are not. JSONL with one broken
 * line keeps its per-line error, and --skip-invalid still skips that line.
 */
function looksLikeOneDocument(text: string): boolean {
  const opening = /\S/.exec(text)?.[0];
  if (opening !== '{' && opening !== '[') return false;
  let checked = 0;
  for (let start = 0; start < text.length && checked < 2; ) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const line = text.slice(start, end).trim();
    start = end + 1;
    if (line === '') continue;
    try {
      JSON.parse(line);
      return false;
    } catch {
      checked++;
    }
  }
  return true;
}

export function loadPredictions(file: string, opts: { skipInvalid?: boolean } = {}): LoadedPredictions {
  const text = readTextFile(file, 'predictions');
  const invalid: InputError[] = [];
  const byId = new Map<string, string>();
  const reject = (err: InputError): void => {
    if (!opts.skipInvalid) throw err;
    invalid.push(err);
  };
  const oversize: string[] = [];
  const put = (id: string, utterance: string, where: string): void => {
    if (byId.has(id)) {
      reject(new InputError(`duplicate prediction id "${id}"`, { file, where }));
      return;
    }
    if (utterance.length > MAX_PAIR_TEXT_CHARS) {
      // Cut here, before any premise string is built from it: the NLI model reads 512 tokens, so the
      // scores are the same, and a 50 MB utterance no longer runs the process out of memory.
      oversize.push(`${where}: utterance of ${utterance.length} characters cut to ${MAX_PAIR_TEXT_CHARS}`);
      utterance = utterance.slice(0, MAX_PAIR_TEXT_CHARS);
    }
    byId.set(id, utterance);
  };
  const { whole, record } = getValidators();

  let parsed: unknown;
  let wholeParsed = true;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    wholeParsed = false;
    // A pretty-printed JSON document with a slip: read as JSONL, its error blamed "line 1" (a
    // lone `{`); JSON.parse's message gives the slip's position instead.
    if (looksLikeOneDocument(text)) throw new InputError(`not valid JSON (${(e as Error).message})`, { file });
  }

  if (wholeParsed && Array.isArray(parsed)) {
    parsed.forEach((item, i) => {
      const where = `record ${i}`;
      if (!record(item)) return reject(new InputError(describeAjvError(record.errors), { file, where }));
      const r = item as { id: string; utterance: string };
      put(r.id, r.utterance, `${where} (id ${r.id})`);
    });
    return { file, format: 'json-array', byId, invalid, oversize };
  }

  if (wholeParsed && !looksLikeRecord(parsed)) {
    if (!whole(parsed)) throw new InputError(describeObjectError(parsed, whole.errors), { file });
    // JSON.parse kept the last of a repeated id; the JSONL and array layouts refuse the repeat.
    // Refused even under skipInvalid: the first copy is already gone, so it cannot be kept as there.
    const repeated = duplicateTopLevelKey(text);
    if (repeated !== undefined) throw new InputError(`duplicate prediction id "${repeated}"`, { file, where: `id ${repeated}` });
    for (const [id, utterance] of Object.entries(parsed as Record<string, string>)) put(id, utterance, `id ${id}`);
    return { file, format: 'json-object', byId, invalid, oversize };
  }

  // JSONL: validated line by line so the error names the line.
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    if (raw === '') continue;
    const where = `line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      reject(new InputError(`not valid JSON (${(e as Error).message})`, { file, where }));
      continue;
    }
    if (!record(value)) {
      reject(new InputError(describeAjvError(record.errors), { file, where }));
      continue;
    }
    const r = value as { id: string; utterance: string };
    put(r.id, r.utterance, `${where} (id ${r.id})`);
  }
  if (byId.size === 0 && invalid.length === 0) throw new InputError('no predictions in file', { file });
  return { file, format: 'jsonl', byId, invalid, oversize };
}

/** Missing and extra ids, both sorted, so neither kind of mismatch is ever silently dropped. */
export function comparePredictionIds(predictions: Map<string, string>, expectedIds: Iterable<string>): IdComparison {
  const expected = new Set(expectedIds);
  const missing = [...expected].filter((id) => !predictions.has(id)).sort();
  const extra = [...predictions.keys()].filter((id) => !expected.has(id)).sort();
  return { missing, extra };
}

/** `<dialogue>/<index>`, also read from the slips `<dialogue>:<index>` and `<dialogue>#<index>`. */
function splitTurnId(id: string): { dialogue: string; index: number; separator: string } | undefined {
  const m = /^(.+?)([/:#])(\d+)$/.exec(id);
  return m ? { dialogue: m[1], separator: m[2], index: Number(m[3]) } : undefined;
}

/**
 * Why prediction ids match no turn, for the one-line error: the first few, the nearest valid id of
 * each, and what the ids should look like. Two slips are recognised: another separator
 * (`1_00000:1`), and ids numbered by system-turn order, which land on USER turns because a turn
 * index counts every turn of the dialogue.
 */
export function describeUnmatchedIds(extra: readonly string[], validIds: readonly string[], show = 3): string {
  const byDialogue = new Map<string, number[]>();
  for (const id of validIds) {
    const p = splitTurnId(id);
    if (!p) continue;
    let list = byDialogue.get(p.dialogue);
    if (!list) byDialogue.set(p.dialogue, (list = []));
    list.push(p.index);
  }
  const nearest = (id: string): string | undefined => {
    const p = splitTurnId(id);
    const indices = p && byDialogue.get(p.dialogue);
    if (p && indices) {
      const best = indices.reduce((a, b) => (Math.abs(b - p.index) < Math.abs(a - p.index) ? b : a));
      return `${p.dialogue}/${best}`;
    }
    // Unknown dialogue: the valid id sharing the longest prefix.
    let bestId: string | undefined;
    let bestLen = 0;
    for (const v of validIds) {
      let n = 0;
      while (n < v.length && n < id.length && v[n] === id[n]) n++;
      if (n > bestLen) [bestId, bestLen] = [v, n];
    }
    return bestId;
  };
  const first = extra.slice(0, show);
  const near = first.map(nearest).filter((x): x is string => x !== undefined);
  const parts = [`first: ${first.join(', ')}${near.length > 0 ? `; nearest valid: ${near.join(', ')}` : ''}`];
  const parsed = extra.map(splitTurnId);
  if (parsed.some((p) => p && p.separator !== '/')) {
    parts.push('ids take a slash: "<dialogue_id>/<turn index>", e.g. "' + (validIds[0] ?? '1_00000/1') + '"');
  } else {
    const onOtherTurns = parsed.filter((p) => p && p.separator === '/' && byDialogue.has(p.dialogue)).length;
    if (onOtherTurns > 0 && onOtherTurns >= extra.length / 2) {
      parts.push(
        'these dialogues exist but those turns are not system turns: the turn index counts every turn of the dialogue ' +
          '(USER turns too), so ids numbered by system-turn order land on USER turns',
      );
    } else {
      parts.push('ids are "<dialogue_id>/<turn index>" with the index into the dialogue\'s turns, as `todeval refs` writes them');
    }
  }
  return parts.join('; ');
}
