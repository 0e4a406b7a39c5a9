/**
 * Corpus BLEU of several systems with sacreBLEU's statistical tests (`--paired-bs`, `--paired-ar`,
 * `--confidence`): the library behind `todeval bleu`. Statistics are extracted once per system
 * against references tokenized once; the tests resample those statistics (src/metrics/significance).
 */
import { bootstrapConfidence, DEFAULT_AR_TRIALS, DEFAULT_BOOTSTRAP_SAMPLES, DEFAULT_SEED, pairedApproximateRandomization, pairedBootstrap } from '../significance/paired.js';
import type { Seed } from '../significance/pcg64.js';
import type { StatMetric, SystemResult } from '../significance/types.js';
import { pyFixed } from './py-string.js';
import { BLEU_MAX_ORDER, BLEU_STATS_WIDTH, BleuReferences, bleuFromSegmentStats, bleuSignature, makeBleuScorer, type BleuOptions, type BleuResult } from './bleu.js';

export type PairedTestName = 'bs' | 'ar';

export interface BleuTestOptions extends BleuOptions {
  /** Paired test of every system against the first (the baseline); null: none. */
  test?: PairedTestName | null;
  /** Bootstrap resamples (bs, default 1000) or randomization trials (ar, default 10000). */
  samples?: number;
  /**
   * Bootstrap confidence intervals: for each system on its own when no paired test runs; with
   * `ar`, sacreBLEU's `n_ar_confidence` (paired-bs gives intervals anyway).
   */
  confidence?: boolean;
  /** Resamples for `confidence` (default 1000). */
  confidenceSamples?: number;
  /** NumPy seed (default 12345); null draws from the OS (sacreBLEU's SACREBLEU_SEED=none). */
  seed?: Seed;
}

export interface BleuSystemResult extends SystemResult, Pick<BleuResult, 'counts' | 'totals' | 'precisions' | 'bp' | 'sysLen' | 'refLen'> {
  name: string;
}

/** The JSON of `todeval bleu --json` (documented in docs/significance.md; keep it stable). */
export interface BleuComparison {
  metric: 'BLEU';
  test: PairedTestName | null;
  /** Resamples or trials of the test; of the intervals when only --confidence; null without either. */
  n: number | null;
  /** The seed used, 'none' when drawn from the OS; null when nothing was resampled. */
  seed: number | string | null;
  signature: string;
  systems: BleuSystemResult[];
}

/** BLEU as a StatMetric over BLEU_STATS_WIDTH rows (the score of summed segment statistics). */
export function bleuStatMetric(opts: BleuOptions = {}): StatMetric {
  const score = makeBleuScorer(opts);
  // The options that change the score, as a stored metric is rebuilt from them.
  const options = Object.fromEntries(
    Object.entries({ tokenize: opts.tokenize, lowercase: opts.lowercase || undefined, smoothMethod: opts.smoothMethod, smoothValue: opts.smoothValue, effectiveOrder: opts.effectiveOrder || undefined }).filter(([, v]) => v !== undefined),
  );
  return { name: 'BLEU', width: BLEU_STATS_WIDTH, spec: { type: 'bleu', options }, score: (sums, offset) => score(sums, offset) };
}

/**
 * sacreBLEU's signature with the test's fields in its order: nrefs, bs, ar, seed, case, eff, tok,
 * smooth, version.
 */
export function bleuTestSignature(nrefs: number, opts: BleuOptions, test: { bs?: number; ar?: number; seed?: string }): string {
  const fields = bleuSignature(nrefs, opts).split('|');
  const extra = [test.bs !== undefined ? `bs:${test.bs}` : '', test.ar !== undefined ? `ar:${test.ar}` : '', test.seed !== undefined ? `seed:${test.seed}` : ''].filter(Boolean);
  return [fields[0], ...extra, ...fields.slice(1)].join('|');
}

function seedText(seed: Seed): string {
  if (seed === null) return 'none';
  return Array.isArray(seed) ? seed.join(',') : String(seed);
}

/**
 * BLEU of each system against `references` (`references[k][i]`: the k-th reference of segment i),
 * with the requested test. The first system is the baseline of a paired test.
 */
export function compareBleu(
  references: ReadonlyArray<ReadonlyArray<string | null>>,
  systems: ReadonlyArray<{ name: string; lines: readonly string[] }>,
  opts: BleuTestOptions = {},
): BleuComparison {
  if (systems.length === 0) throw new Error('BLEU: no system to score');
  const test = opts.test ?? null;
  if (test && systems.length < 2) throw new Error('a paired test needs a baseline and at least one system');
  const refs = new BleuReferences(references, opts);
  const stats = systems.map((s) => refs.segmentStats(s.lines));
  const metric = bleuStatMetric(opts);
  const seed = opts.seed === undefined ? DEFAULT_SEED : opts.seed;
  const confidenceN = opts.confidence ? (opts.confidenceSamples ?? DEFAULT_BOOTSTRAP_SAMPLES) : undefined;
  let results: SystemResult[];
  let n: number | null = null;
  let signature: string;
  if (test === 'bs') {
    n = opts.samples ?? DEFAULT_BOOTSTRAP_SAMPLES;
    const r = pairedBootstrap(stats[0], stats.slice(1), metric, { samples: n, seed, float32: true });
    results = [r.baseline, ...r.systems];
    signature = bleuTestSignature(refs.nrefs, opts, { bs: n, seed: seedText(seed) });
  } else if (test === 'ar') {
    n = opts.samples ?? DEFAULT_AR_TRIALS;
    const r = pairedApproximateRandomization(stats[0], stats.slice(1), metric, { trials: n, seed, confidenceSamples: confidenceN, float32: true });
    results = [r.baseline, ...r.systems];
    signature = bleuTestSignature(refs.nrefs, opts, { bs: confidenceN, ar: n, seed: seedText(seed) });
  } else if (confidenceN !== undefined) {
    n = confidenceN;
    results = stats.map((s) => ({ pValue: null, ...bootstrapConfidence(s, metric, { samples: confidenceN, seed, float32: true }) }));
    signature = bleuTestSignature(refs.nrefs, opts, { bs: confidenceN, seed: seedText(seed) });
  } else {
    results = stats.map((s) => ({ score: metric.score(sumRows(s), 0), pValue: null, mean: null, ci: null, low: null, high: null }));
    signature = refs.signature;
  }
  return {
    metric: 'BLEU',
    test,
    n,
    seed: n === null ? null : seed === null ? 'none' : typeof seed === 'number' ? seed : seedText(seed),
    signature,
    systems: systems.map((s, i) => {
      const b = bleuFromSegmentStats(stats[i], opts, signature);
      return {
        name: s.name,
        ...results[i],
        counts: b.counts.slice(0, BLEU_MAX_ORDER),
        totals: b.totals.slice(0, BLEU_MAX_ORDER),
        precisions: b.precisions,
        bp: b.bp,
        sysLen: b.sysLen,
        refLen: b.refLen,
      };
    }),
  };
}

function sumRows(stats: Int32Array): Float64Array {
  const sums = new Float64Array(BLEU_STATS_WIDTH);
  for (let i = 0; i < stats.length; i++) sums[i % BLEU_STATS_WIDTH] += stats[i];
  return sums;
}

/**
 * sacreBLEU's text line per system: `name: BLEU|signature = 22.1 (μ = 22.1 ± 0.6) (p = 0.0010)*
 * 54.4/28.1/16.7/10.3 (BP = ...)`; p-values at or below `alpha` are marked with `*`.
 */
export function formatBleuComparison(r: BleuComparison, opts: { width?: number; alpha?: number } = {}): string {
  const w = opts.width ?? 1;
  const alpha = opts.alpha ?? 0.05;
  const names = r.systems.map((s, i) => (r.test && i === 0 ? `Baseline: ${s.name}` : s.name));
  const pad = Math.max(...names.map((n) => n.length));
  const lines = r.systems.map((s, i) => {
    let score = pyFixed(s.score, w);
    if (s.mean !== null && s.ci !== null) score += ` (μ = ${pyFixed(s.mean, w)} ± ${pyFixed(s.ci, w)})`;
    if (s.pValue !== null) score += ` (p = ${pyFixed(s.pValue, 4)})${s.pValue <= alpha ? '*' : ''}`;
    const prec = s.precisions.map((p) => pyFixed(p, 1)).join('/');
    const ratio = s.refLen ? s.sysLen / s.refLen : 0;
    return `${names[i].padEnd(pad)}: BLEU|${r.signature} = ${score} ${prec} (BP = ${pyFixed(s.bp, 3)} ratio = ${pyFixed(ratio, 3)} hyp_len = ${s.sysLen} ref_len = ${s.refLen})`;
  });
  if (r.test) {
    const what = r.test === 'bs' ? `paired bootstrap resampling, ${r.n} resamples` : `paired approximate randomization, ${r.n} trials`;
    lines.push(`${what}, seed ${r.seed}: * marks p <= ${alpha} (the difference to the baseline is unlikely under the null hypothesis)`);
  }
  return lines.join('\n') + '\n';
}
