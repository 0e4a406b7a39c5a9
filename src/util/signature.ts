import { createHash } from 'node:crypto';
import { byContent, byContentShown, inputLabel } from './input-label.js';
import { TODEVAL_VERSION } from './version.js';

/**
 * The exact configuration behind a score, in the spirit of sacreBLEU's signature: two scores are
 * comparable only when their signatures are equal.
 */
export interface Signature {
  tool: string;
  version: string;
  [key: string]: string | number | boolean | null | undefined;
}

/**
 * The one vocabulary of signature keys: the same key means the same thing in every command's
 * report. docs/cli-conventions.md documents each in one table (test/signature-keys.test.ts holds
 * the two together); a key outside this list is a programming error, refused when a signature is made.
 */
export const SIGNATURE_KEYS = [
  'tool',
  'version',
  'metric',
  'dataset',
  'data',
  'dataDir',
  'schema',
  'rules',
  'model',
  'revision',
  'dtype',
  'family',
  'pairEncoding',
  'kernels',
  'maxLength',
  'device',
  'validation',
  'context',
  'referenceSelection',
  'hallucination',
  'granularity',
  'contextControl',
  'delexicalized',
  'rankBy',
  'systems',
  'system',
  'predictions',
  'input',
  'limit',
  'shard',
  'dialogues',
  'skipped',
  'missingPredictions',
  'match',
  'robust',
  'canonicalMap',
  'config',
  'configFile',
  'groundTruthBuilder',
  'bleu',
  'chrf',
  'ter',
  'dbFuzzyRatio',
  'dstFuzzyRatio',
  'stateSource',
  'domainSource',
] as const;

export type SignatureKey = (typeof SIGNATURE_KEYS)[number];
type SignatureValue = string | number | boolean | null | undefined;
export type SignatureFields = Partial<Record<SignatureKey, SignatureValue>>;

const KNOWN = new Set<string>(SIGNATURE_KEYS);

/**
 * Builds a signature from its fields. Each product has one builder that calls this (SGSAcc:
 * metrics/sgsacc/signature.ts; rerank: rerank/signature.ts; NLI: nli/signature.ts; MultiWOZ
 * evaluate: metrics/mwz/signature.ts; GCDF1: metrics/gcdf1/signature.ts; SER: pipeline/ser.ts;
 * refs: pipeline/refs.ts); what a run adds on top (its shard, the predictions file of an items
 * file) goes through extendSignature. test/signature-pins.test.ts pins each builder's output.
 */
export function makeSignature(fields: SignatureFields): Signature {
  // Spreads of another signature escape the type check: the same rule, at run time.
  const unknown = Object.keys(fields).filter((k) => !KNOWN.has(k));
  if (unknown.length > 0) throw new Error(`signature key(s) outside the vocabulary (src/util/signature.ts): ${unknown.join(', ')}`);
  return { tool: 'todeval', version: TODEVAL_VERSION, ...fields } as Signature;
}

/**
 * Earlier spellings of keys, read wherever a stored signature is compared (resumed per-turn and
 * references files, the HTML report), so files written before the vocabulary was unified still load.
 */
const OLD_KEYS: Record<string, SignatureKey> = {
  source: 'data',
  ruleset: 'dataset',
  canonical_map: 'canonicalMap',
  config_file: 'configFile',
  invalidSkipped: 'skipped',
  ground_truth: 'data',
  ground_truth_builder: 'groundTruthBuilder',
  db_fuzzy_ratio: 'dbFuzzyRatio',
  dst_fuzzy_ratio: 'dstFuzzyRatio',
  state_source: 'stateSource',
  domain_source: 'domainSource',
  data_source: 'dataDir',
  sgsacc_model: 'model',
  sgsacc_revision: 'revision',
  sgsacc_dtype: 'dtype',
  sgsacc_referenceSelection: 'referenceSelection',
};

/** A stored signature in today's vocabulary (old key spellings renamed; a new spelling wins). */
export function normalizeSignature(sig: Signature): Signature {
  const out: Record<string, SignatureValue> = { ...sig };
  // ser wrote the dialogues' source under `dataset`, which now names the dataset format.
  if (sig.metric === 'ser' && sig.data === undefined && typeof sig.dataset === 'string' && sig.dataset.includes(':')) {
    out.data = sig.dataset;
    out.dataset = sig.dataset.slice(0, sig.dataset.indexOf(':'));
  }
  for (const [old, now] of Object.entries(OLD_KEYS)) {
    if (!(old in sig)) continue;
    if (out[now] === undefined) out[now] = sig[old];
    delete out[old];
  }
  return out as Signature;
}

/** `tool:todeval|version:0.1.0|model:...`, keys in a fixed order so equal configs print equally. */
/**
 * A signature with fields added (or replaced, each in its place): a shard's label, the
 * predictions file an items file names, the SGSAcc section of an evaluate run. Keys are checked
 * as makeSignature checks them.
 */
export function extendSignature(base: Signature, fields: SignatureFields): Signature {
  return makeSignature({ ...(base as SignatureFields), ...fields });
}

export function formatSignature(sig: Signature): string {
  const keys = ['tool', 'version', ...Object.keys(sig).filter((k) => k !== 'tool' && k !== 'version').sort()];
  return keys
    .filter((k) => sig[k] !== undefined)
    .map((k) => `${k}:${String(sig[k])}`)
    .join('|');
}

/**
 * Short stable digest of what a signature compares (comparableSignature), for keying stored
 * references and caches: the same bytes give the same key from any folder or machine.
 */
export function signatureDigest(sig: Signature): string {
  return createHash('sha256').update(formatSignature(comparableSignature(sig))).digest('hex').slice(0, 16);
}

/**
 * Keys that say where something came from, never what decides the numbers: how the data directory
 * was found (`--data-dir`, `$TODEVAL_DATA`, ./data). Kept for people (provenance), never compared.
 */
export const PROVENANCE_KEYS: ReadonlySet<string> = new Set(['dataDir']);

/** A model revision that is the digest of the model's bytes (a local export), not a hub commit. */
const CONTENT_REVISION = /^sha256:[0-9a-f]+$/;

/**
 * The model as a comparison names it: by its bytes' digest when it has one (a local folder's name
 * is where it lies, not what it is: the same file in two folders is one model), else by hub id and
 * revision. Also the pair cache's model key, so cached pairs follow the bytes too.
 */
export function modelContentName(modelId: string, revision: string): string {
  return CONTENT_REVISION.test(revision) ? revision : `${modelId}@${revision}`;
}

/**
 * The part of a signature that decides the numbers and is compared everywhere (compare, report,
 * merge, resumed files, caches): old key spellings renamed, each input by its content digest (not
 * the path it was reached by), provenance keys dropped, and a local model by its bytes' digest (its
 * folder name dropped). Two runs on the same bytes have equal comparable signatures from any folder,
 * machine, `$TODEVAL_DATA` or `--data-dir`; one changed byte of an input, the model or the rules
 * changes the field that names it.
 */
export function comparableSignature(sig: Signature): Signature {
  const out = byContentSignature(normalizeSignature(sig)) as Record<string, SignatureValue>;
  for (const k of PROVENANCE_KEYS) delete out[k];
  if (typeof out.revision === 'string' && CONTENT_REVISION.test(out.revision)) delete out.model;
  return out as Signature;
}

/**
 * Where a run's inputs came from, for people: the provenance keys, a local model's folder name and
 * each input's path (what comparableSignature leaves out). `dataDir:env|model:local:x|data:sgd:a/b.json`.
 */
export function formatProvenance(sig: Signature): string {
  const norm = normalizeSignature(sig);
  // The comparable form changes a value only where it drops where it came from (a path, a folder).
  const compared = comparableSignature(norm) as Record<string, SignatureValue>;
  const fields: SignatureField[] = [];
  for (const k of Object.keys(norm).sort()) {
    const v = norm[k];
    if (v === undefined || v === null) continue;
    if (PROVENANCE_KEYS.has(k) || String(compared[k]) !== String(v)) fields.push([k, String(v)]);
  }
  return formatFields(fields);
}

/** A signature value as a difference names it: a key one side lacks is "not set", not "undefined". */
function shownValue(v: SignatureValue): string {
  return v === undefined ? 'not set' : String(v);
}

/** One compared field that differs: its key and each side's value as written (paths included), for people. */
export interface FieldDifference {
  key: string;
  a: string;
  b: string;
}

/**
 * The compared fields that differ, in key order (empty when the configurations are the same):
 * decided on the comparable parts (comparableSignature), shown as written, `ignore` keys left out.
 * The one rule compare, the report, merge, resume and the references store decide by.
 */
export function fieldDifferences(a: Signature, b: Signature, ignore: Iterable<string> = []): FieldDifference[] {
  const skip = new Set(ignore);
  const ca = comparableSignature(a);
  const cb = comparableSignature(b);
  const [na, nb] = [normalizeSignature(a), normalizeSignature(b)];
  const keys = [...new Set([...Object.keys(ca), ...Object.keys(cb)])].filter((k) => !skip.has(k)).sort();
  return keys.filter((k) => String(ca[k]) !== String(cb[k])).map((k) => ({ key: k, a: shownValue(na[k]), b: shownValue(nb[k]) }));
}

/** fieldDifferences as `key: a vs b`. */
export function signatureDifferences(a: Signature, b: Signature, ignore: Iterable<string> = []): string[] {
  return fieldDifferences(a, b, ignore).map((d) => `${d.key}: ${d.a} vs ${d.b}`);
}

/**
 * The kinds of run whose signatures are compared across systems: run reports (`score -o`,
 * `evaluate -o`) and per-item outputs (score's and rerank's --turns, evaluate's --items, mwzeval
 * predictions evaluated by compare, gcdf1's per-dialogue report).
 */
export type SignedRunKind = 'score' | 'evaluate' | 'score-turns' | 'rerank' | 'evaluate-items' | 'mwz-predictions' | 'gcdf1';

const EVALUATE_SYSTEM_KEYS: readonly SignatureKey[] = ['predictions', 'stateSource', 'domainSource', 'dialogues', 'skipped'];

/**
 * What names the system in each kind's signature (docs/significance.md): these keys may differ
 * between runs compared with each other (compare, the report), no other key may. For evaluate, what a
 * system supplies decides where Inform's states and domains come from; a score report also counts
 * the turns its system left without a prediction.
 */
export const SYSTEM_KEYS: Readonly<Record<SignedRunKind, readonly SignatureKey[]>> = {
  score: ['system', 'predictions', 'missingPredictions'],
  'score-turns': ['system', 'predictions'],
  evaluate: EVALUATE_SYSTEM_KEYS,
  'evaluate-items': EVALUATE_SYSTEM_KEYS,
  'mwz-predictions': EVALUATE_SYSTEM_KEYS,
  rerank: ['input', 'systems', 'rankBy'],
  gcdf1: ['data', 'dialogues', 'skipped'],
};

/**
 * Why two runs' numbers cannot be compared, in one line naming the fields compared and how they
 * differ (`data: a vs b, rules: x vs y`), or null when they can: the same kind of run and equal
 * signatures apart from what names the system (SYSTEM_KEYS). compare refuses on it; the report warns.
 */
export function systemsNotComparable(a: { kind: SignedRunKind; signature: Signature }, b: { kind: SignedRunKind; signature: Signature }): string | null {
  if (a.kind !== b.kind) return `${b.kind} output against ${a.kind} output: compare runs of the same command`;
  const diff = signatureDifferences(a.signature, b.signature, SYSTEM_KEYS[a.kind]);
  return diff.length > 0 ? diff.join(', ') : null;
}

/** A run's signature without the keys that name its system: what every system compared with it shares. */
export function sharedSignature(sig: Signature, kind: SignedRunKind): Signature {
  const out: Signature = { ...sig };
  for (const k of SYSTEM_KEYS[kind]) delete out[k];
  return out;
}

/**
 * A file as a signature names it: its path relative to the data directory (when inside it) or the
 * working directory, and the first 12 hex of the sha256 of its content (src/util/input-label.ts).
 */
export function fileSignature(file: string, dataDir?: string): string {
  return inputLabel(file, dataDir);
}

/**
 * Whether two signatures describe the same configuration: equal comparable parts (comparableSignature:
 * old key spellings renamed, inputs and local models by content, provenance left out), so a run
 * resumed from another working directory, shards run on machines with other checkouts and runs of
 * the same bytes found through `$TODEVAL_DATA` or `--data-dir` all match.
 */
export function sameConfiguration(a: Signature, b: Signature): boolean {
  return formatSignature(comparableSignature(a)) === formatSignature(comparableSignature(b));
}

/**
 * The comparable form as printed for people (compare's shared signature): the same fields, with a
 * data-dir split's name kept (`data:sgd:test@…`, not `data:sgd:@…`); paths are still left out.
 */
export function formatComparable(sig: Signature): string {
  const shown = Object.fromEntries(Object.entries(normalizeSignature(sig)).map(([k, v]) => [k, byContentShown(v)])) as Signature;
  const compared = comparableSignature(sig) as Record<string, SignatureValue>;
  return formatSignature(Object.fromEntries(Object.keys(compared).map((k) => [k, shown[k]])) as Signature);
}

/** A signature with each input named by content only (byContent), for comparing. */
export function byContentSignature(sig: Signature): Signature {
  return Object.fromEntries(Object.entries(sig).map(([k, v]) => [k, byContent(v)])) as Signature;
}

/** One field of a signature in a fixed order; undefined values are left out. */
export type SignatureField = readonly [key: string, value: string | number | undefined];

/** `k:v|k:v` from fields in the order given (sacreBLEU's signatures are ordered, not sorted). */
export function formatFields(fields: readonly SignatureField[]): string {
  return fields
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}:${v}`)
    .join('|');
}
