import { createHash } from 'node:crypto';
import { byContent, inputLabel } from './input-label.js';
import { TODEVAL_VERSION } from '../version.js';

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
  'maxLength',
  'device',
  'validation',
  'context',
  'referenceSelection',
  'hallucination',
  'granularity',
  'contextControl',
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
  'dbFuzzyRatio',
  'dstFuzzyRatio',
  'stateSource',
  'domainSource',
] as const;

export type SignatureKey = (typeof SIGNATURE_KEYS)[number];
type SignatureValue = string | number | boolean | null | undefined;
export type SignatureFields = Partial<Record<SignatureKey, SignatureValue>>;

const KNOWN = new Set<string>(SIGNATURE_KEYS);

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
export function formatSignature(sig: Signature): string {
  const keys = ['tool', 'version', ...Object.keys(sig).filter((k) => k !== 'tool' && k !== 'version').sort()];
  return keys
    .filter((k) => sig[k] !== undefined)
    .map((k) => `${k}:${String(sig[k])}`)
    .join('|');
}

/** Short stable digest of a signature, for keying stored references and caches. */
export function signatureDigest(sig: Signature): string {
  return createHash('sha256').update(formatSignature(sig)).digest('hex').slice(0, 16);
}

/**
 * A file as a signature names it: its path relative to the data directory (when inside it) or the
 * working directory, and the first 12 hex of the sha256 of its content (src/util/input-label.ts).
 */
export function fileSignature(file: string, dataDir?: string): string {
  return inputLabel(file, dataDir);
}

/**
 * Whether two signatures describe the same configuration: equal once old key spellings are renamed
 * and inputs are compared by content, not by the relative path they were reached by (a run resumed
 * from another working directory, shards run on machines with other checkouts).
 */
export function sameConfiguration(a: Signature, b: Signature): boolean {
  return formatSignature(byContentSignature(normalizeSignature(a))) === formatSignature(byContentSignature(normalizeSignature(b)));
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
