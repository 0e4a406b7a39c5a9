/**
 * Corpus BLEU of several systems with sacreBLEU's statistical tests (`--paired-bs`, `--paired-ar`,
 * `--confidence`): the library behind `todeval bleu`. Statistics are extracted once per system
 * against references tokenized once; the tests resample those statistics (src/metrics/significance).
 */
import { bootstrapConfidenceSteps, columnSums, pairedApproximateRandomizationSteps, pairedBootstrapSteps } from '../significance/paired.js';
import type { Seed } from '../significance/pcg64.js';
import { resampleSpec, signatureWithTest, type PairedTestName, type ResampleSpec } from '../significance/spec.js';
import { runSteps, type Steps } from '../significance/steps.js';
import type { StatMetric, SystemResult } from '../significance/types.js';
import { lowUnitsField, MIN_BOOTSTRAP_UNITS } from '../significance/units.js';
import { bleuSignatureFields, type BleuOptions, type BleuResult } from './bleu.js';
import { textMetric, type TextMetric } from './text-metric.js';

export { bleuStatMetric } from './bleu.js';

export type { PairedTestName } from '../significance/spec.js';

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

/** The keys every text metric's comparison shares (`todeval bleu --json`, per metric). */
export interface ComparisonHeader {
  test: PairedTestName | null;
  /** Resamples or trials of the test; of the intervals when only --confidence; null without either. */
  n: number | null;
  /** The seed used (a drawn one included: `--seed none` draws and signs it); null when nothing was resampled. */
  seed: number | string | null;
  /** Segments scored (the units every test resamples). */
  segments: number;
  /** With `--paired-ar` on so few segments that all 2^n swap patterns were counted: true. */
  exact?: true;
  /**
   * With a bootstrap (`--paired-bs`, `--confidence`) over fewer segments than a 95% interval needs
   * (units.ts): true. Absent otherwise.
   */
  lowUnits?: true;
}

/** The JSON of `todeval bleu --json` (documented in docs/significance.md; keep it stable). */
export interface BleuComparison extends ComparisonHeader {
  metric: 'BLEU';
  signature: string;
  systems: BleuSystemResult[];
}

/**
 * Every system's score of `metric` with the test `spec` asks for (the first system the baseline of
 * a paired test), from per-segment statistics: what `bleu` runs for each of its metrics.
 */
export function* resampleSystemsSteps(
  stats: readonly ArrayLike<number>[],
  metric: StatMetric,
  spec: ResampleSpec,
  { asSacrebleu = false }: { asSacrebleu?: boolean } = {},
): Steps<{ results: SystemResult[]; exact: boolean }> {
  const seed = spec.seed;
  if (spec.test === 'bs') {
    const r = yield* pairedBootstrapSteps(stats[0], stats.slice(1), metric, { samples: spec.n!, seed, asSacrebleu });
    return { results: [r.baseline, ...r.systems], exact: false };
  }
  if (spec.test === 'ar') {
    const r = yield* pairedApproximateRandomizationSteps(stats[0], stats.slice(1), metric, { trials: spec.n!, seed, confidenceSamples: spec.confidenceN ?? undefined, asSacrebleu });
    return { results: [r.baseline, ...r.systems], exact: r.exact === true };
  }
  if (spec.confidenceN !== null) {
    const results: SystemResult[] = [];
    for (const s of stats) results.push({ pValue: null, ...(yield* bootstrapConfidenceSteps(s, metric, { samples: spec.confidenceN, seed })) });
    return { results, exact: false };
  }
  return { results: stats.map((s) => ({ score: metric.score(columnSums(s, metric.width), 0), pValue: null, mean: null, ci: null, low: null, high: null })), exact: false };
}

/**
 * sacreBLEU's signature with the test's fields in its order: nrefs, bs, ar, seed, case, eff, tok,
 * smooth, version (the test's fields come from the resample spec).
 */
export function bleuTestSignature(nrefs: number, opts: BleuOptions, spec: ResampleSpec | null): string {
  return signatureWithTest(bleuSignatureFields(nrefs, opts), spec);
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
  return runSteps(compareBleuSteps(references, systems, opts));
}

/** Whether a spec resamples at all (a paired test, or intervals only): its seed and count are then signed. */
export function resampledBy(spec: ResampleSpec): boolean {
  return spec.test !== null || spec.confidenceN !== null;
}

/**
 * The keys every text metric's comparison shares (BleuComparison's test, n, seed, segments, exact,
 * lowUnits), from the spec, the segments resampled and whether randomization was exact.
 */
export function comparisonHeader(
  spec: ResampleSpec,
  segments: number,
  exact: boolean,
): ComparisonHeader {
  const bootstrapped = spec.test === 'bs' || spec.confidenceN !== null;
  return {
    test: spec.test,
    n: spec.n ?? spec.confidenceN,
    seed: resampledBy(spec) ? spec.seedLabel : null,
    segments,
    ...(exact ? { exact: true as const } : {}),
    ...lowUnitsField(segments, bootstrapped),
  };
}

export function* compareBleuSteps(
  references: ReadonlyArray<ReadonlyArray<string | null>>,
  systems: ReadonlyArray<{ name: string; lines: readonly string[] }>,
  opts: BleuTestOptions = {},
): Steps<BleuComparison> {
  if (systems.length === 0) throw new Error('BLEU: no system to score');
  const spec = resampleSpec({ test: opts.test, samples: opts.samples, confidence: opts.confidence, confidenceSamples: opts.confidenceSamples, seed: opts.seed });
  return (yield* compareMetricSteps(textMetric('bleu', references, { bleu: opts }), systems, spec)) as BleuComparison;
}

/** One metric's comparison: what `todeval bleu --json` prints per metric (docs/significance.md). */
export interface MetricComparison<S extends SystemResult & { name: string }> extends ComparisonHeader {
  /** sacreBLEU's name: BLEU, chrF2, chrF2++, TER. */
  metric: string;
  signature: string;
  systems: S[];
}

/**
 * A text metric over several systems with the test `spec` asks for (the first system the baseline
 * of a paired test): each system's score and test result, BLEU's corpus statistics (counts,
 * totals, precisions, bp, lengths) or TER's (edits, reference length) after them.
 */
export function* compareMetricSteps(
  metric: TextMetric,
  systems: ReadonlyArray<{ name: string; lines: readonly string[] }>,
  spec: ResampleSpec,
): Steps<MetricComparison<SystemResult & { name: string }>> {
  if (spec.test && systems.length < 2) throw new Error('a paired test needs a baseline and at least one system');
  const stats = systems.map((s) => metric.segmentStats(s.lines));
  const { results, exact } = yield* resampleSystemsSteps(stats, metric.stat, spec);
  return {
    metric: metric.name,
    ...comparisonHeader(spec, stats[0].length / metric.width, exact),
    signature: signatureWithTest(metric.signatureFields, resampledBy(spec) ? spec : null),
    systems: systems.map((s, i) => {
      const { bleu, ter } = metric.scoreOf(stats[i]);
      return { name: s.name, ...results[i], ...bleu, ...ter };
    }),
  };
}

/** The warning of a bootstrap over too few segments (what lowUnits flags). */
export function lowSegmentsWarning(segments: number): string {
  return `warning: ${segments} segment${segments === 1 ? '' : 's'}: too few for a bootstrap 95% interval or p-value (fewer than ${MIN_BOOTSTRAP_UNITS}; it claims more than it shows, docs/significance.md); --paired-ar counts all 2^n swap patterns (an exact test) when 2^n is at most its trials: 13 segments at the default 10000`;
}
