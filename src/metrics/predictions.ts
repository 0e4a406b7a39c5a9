import { Ajv, type ValidateFunction, type ErrorObject } from 'ajv';
import { InputError } from '../util/errors.js';
import { readTextFile } from '../util/json-file.js';
import { readPackageJson } from '../util/package-file.js';

/**
 * Generated utterances keyed by turn id. Three layouts are accepted because systems publish all
 * three: JSONL `{id, utterance}` per line, a JSON array of those records, or a JSON object
 * id -> utterance. schemas/predictions.schema.json is the contract; ajv checks it here.
 */
export type PredictionsFormat = 'jsonl' | 'json-array' | 'json-object';

export interface LoadedPredictions {
  file: string;
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

let validators: { whole: ValidateFunction; record: ValidateFunction } | undefined;

function getValidators(): { whole: ValidateFunction; record: ValidateFunction } {
  if (validators) return validators;
  const schema = readPackageJson<Record<string, unknown>>('schemas', 'predictions.schema.json');
  const ajv = new Ajv({ allErrors: false, strict: false });
  ajv.addSchema(schema);
  const id = schema.$id as string;
  validators = { whole: ajv.getSchema(id)!, record: ajv.getSchema(`${id}#/definitions/record`)! };
  return validators;
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
function looksLikeRecord(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && 'id' in v && 'utterance' in v;
}

export function loadPredictions(file: string, opts: { skipInvalid?: boolean } = {}): LoadedPredictions {
  const text = readTextFile(file, 'predictions');
  const invalid: InputError[] = [];
  const byId = new Map<string, string>();
  const reject = (err: InputError): void => {
    if (!opts.skipInvalid) throw err;
    invalid.push(err);
  };
  const put = (id: string, utterance: string, where: string): void => {
    if (byId.has(id)) {
      reject(new InputError(`duplicate prediction id "${id}"`, { file, where }));
      return;
    }
    byId.set(id, utterance);
  };
  const { whole, record } = getValidators();

  let parsed: unknown;
  let wholeParsed = true;
  try {
    parsed = JSON.parse(text);
  } catch {
    wholeParsed = false;
  }

  if (wholeParsed && Array.isArray(parsed)) {
    parsed.forEach((item, i) => {
      const where = `record ${i}`;
      if (!record(item)) return reject(new InputError(describeAjvError(record.errors), { file, where }));
      const r = item as { id: string; utterance: string };
      put(r.id, r.utterance, `${where} (id ${r.id})`);
    });
    return { file, format: 'json-array', byId, invalid };
  }

  if (wholeParsed && !looksLikeRecord(parsed)) {
    if (!whole(parsed)) throw new InputError(describeObjectError(parsed, whole.errors), { file });
    for (const [id, utterance] of Object.entries(parsed as Record<string, string>)) byId.set(id, utterance);
    return { file, format: 'json-object', byId, invalid };
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
  return { file, format: 'jsonl', byId, invalid };
}

/** Missing and extra ids, both sorted, so neither kind of mismatch is ever silently dropped. */
export function comparePredictionIds(predictions: Map<string, string>, expectedIds: Iterable<string>): IdComparison {
  const expected = new Set(expectedIds);
  const missing = [...expected].filter((id) => !predictions.has(id)).sort();
  const extra = [...predictions.keys()].filter((id) => !expected.has(id)).sort();
  return { missing, extra };
}
