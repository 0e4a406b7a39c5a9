/**
 * A resampling as asked, resolved once: which paired test (or intervals only), how many resamples,
 * the seed (drawn here when none was given, so that it can be printed and signed), the unit of
 * turn-level metrics. Every command and library call that resamples resolves its options here and
 * writes the test's signature fields from here, so `bleu`, `compare`, `report` and `--confidence`
 * cannot disagree on a default. (How a metric's statistics are summed, sacreBLEU's float32 rule
 * for BLEU, is the metric's own: StatMetric.float32.)
 */
import { randomInt } from 'node:crypto';
import { totalmem } from 'node:os';
import { InputError } from '../../util/errors.js';
import { formatFields, type SignatureField } from '../../util/signature.js';
import type { Seed } from './pcg64.js';

/** sacreBLEU's default seed (SACREBLEU_SEED). */
export const DEFAULT_SEED = 12345;
export const DEFAULT_BOOTSTRAP_SAMPLES = 1000;
export const DEFAULT_AR_TRIALS = 10000;

export type PairedTestName = 'bs' | 'ar';
export type ResampleUnit = 'turn' | 'dialogue';

/** A seed as it is used: never null (a drawn one is kept), with the label signatures print. */
export interface ResolvedSeed {
  seed: Exclude<Seed, null>;
  /** The number (or its decimal text, past 2^53; a list joined by commas). */
  label: number | string;
}

/**
 * The seed to use. None given: sacreBLEU's 12345. null (`--seed none`): a fresh one drawn from the
 * OS, 48 bits (randomInt's range; plenty to tell runs apart), which the caller prints and the
 * signature carries, so the run can be repeated with `--seed <it>`. NumPy draws 128 bits of entropy
 * for seed=None and never says which; the draws that follow from any given seed are NumPy's.
 */
export function resolveSeed(seed: Seed | undefined): ResolvedSeed {
  if (seed === undefined) return { seed: DEFAULT_SEED, label: DEFAULT_SEED };
  if (seed === null) {
    const drawn = randomInt(2 ** 48 - 1);
    return { seed: drawn, label: drawn };
  }
  return { seed, label: seedLabel(seed) };
}

export function seedLabel(seed: Exclude<Seed, null>): number | string {
  if (typeof seed === 'number') return seed;
  return Array.isArray(seed) ? seed.join(',') : String(seed);
}

/** What a caller may ask for; every field optional, defaults as sacreBLEU's. */
export interface ResampleRequest {
  /** Paired test of systems against the first; null or absent: none. */
  test?: PairedTestName | null;
  /** Resamples (bs, default 1000) or trials (ar, default 10000) of the test. */
  samples?: number;
  /** Bootstrap intervals besides (or without) a test. */
  confidence?: boolean;
  /** Resamples of the intervals (default 1000). */
  confidenceSamples?: number;
  /** NumPy seed (default 12345); null draws one. */
  seed?: Seed;
  /** What turn-level metrics resample (default dialogue). */
  unit?: ResampleUnit;
}

export interface ResampleSpec {
  readonly test: PairedTestName | null;
  /** Resamples or trials of the test; null without a test. */
  readonly n: number | null;
  /** Resamples of the intervals; null without them. */
  readonly confidenceN: number | null;
  readonly seed: Exclude<Seed, null>;
  readonly seedLabel: number | string;
  readonly unit: ResampleUnit;
}

export function resampleSpec(req: ResampleRequest = {}): ResampleSpec {
  const test = req.test ?? null;
  const s = resolveSeed(req.seed);
  for (const [v, what] of [
    [req.samples, 'resample count'],
    [req.confidenceSamples, 'confidence resample count'],
  ] as const) {
    if (v !== undefined && !(Number.isSafeInteger(v) && v > 0)) throw new InputError(`${what} must be a positive integer, not ${v}`);
  }
  return {
    test,
    n: test === null ? null : (req.samples ?? (test === 'bs' ? DEFAULT_BOOTSTRAP_SAMPLES : DEFAULT_AR_TRIALS)),
    confidenceN: req.confidence ? (req.confidenceSamples ?? DEFAULT_BOOTSTRAP_SAMPLES) : null,
    seed: s.seed,
    seedLabel: s.label,
    unit: req.unit ?? 'dialogue',
  };
}

/**
 * The test's signature fields in sacreBLEU's order: `bs` (the test's resamples, or the intervals'),
 * `ar` (trials), `seed`; none when nothing is resampled.
 */
export function testFields(spec: ResampleSpec): SignatureField[] {
  const bs = spec.test === 'bs' ? spec.n : spec.confidenceN;
  if (bs === null && spec.test !== 'ar') return [];
  return [
    ['bs', bs ?? undefined],
    ['ar', spec.test === 'ar' ? spec.n! : undefined],
    ['seed', spec.seedLabel],
  ];
}

/**
 * A text metric's sacreBLEU signature with the test's fields (none for `null`) right after the
 * first field, nrefs, as sacreBLEU orders them: nrefs, bs, ar, seed, then the metric's own.
 */
export function signatureWithTest(fields: readonly SignatureField[], spec: ResampleSpec | null): string {
  const [nrefs, ...rest] = fields;
  return formatFields([nrefs, ...(spec ? testFields(spec) : []), ...rest]);
}

/** `bs:1000|seed:12345|unit:dialogue`: the test's fields and the unit actually resampled. */
export function testSignature(spec: ResampleSpec, unit: string): string {
  return formatFields([...testFields(spec), ['unit', unit]]);
}

/**
 * The memory resampling may take: a quarter of the machine's, so that a mistyped count is refused
 * with the largest one that fits instead of filling the machine (a hundred million resamples of
 * three systems needed 4 GB and ran for minutes). TODEVAL_RESAMPLE_MEMORY (bytes) sets it.
 */
export function resampleBudget(env = process.env): number {
  const set = Number(env.TODEVAL_RESAMPLE_MEMORY);
  return Number.isFinite(set) && set > 0 ? set : totalmem() / 4;
}

function gb(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${Math.ceil(bytes / 2 ** 20)} MiB`;
}

/**
 * Refuses a resampling whose arrays (`bytesEach` per resample or trial) would not fit the budget,
 * naming the count asked and the largest that fits.
 */
export function assertFits(count: number, bytesEach: number, what: string): void {
  const budget = resampleBudget();
  if (count * bytesEach <= budget) return;
  const most = Math.floor(budget / bytesEach);
  throw new InputError(
    `${count} ${what} need ${gb(count * bytesEach)} of memory (${bytesEach} bytes each); at most ${most} fit in the ${gb(budget)} resampling may use ` +
      '(a quarter of the machine\'s memory; TODEVAL_RESAMPLE_MEMORY sets it)',
  );
}
