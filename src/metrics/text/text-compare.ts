/**
 * Several of sacreBLEU's metrics (BLEU, chrF/chrF++, TER) over the same systems, each printed and
 * signed on its own as `sacrebleu -m bleu chrf ter` does: the library behind `todeval bleu -m`.
 * The resampling is resolved once (one seed, one test) and every metric runs it on its own
 * per-segment statistics from a fresh generator, as sacreBLEU's PairedTest does per metric.
 */
import { resampleSpec } from '../significance/spec.js';
import { runSteps, type Steps } from '../significance/steps.js';
import type { Seed } from '../significance/pcg64.js';
import type { SystemResult } from '../significance/types.js';
import { compareMetricSteps, lowSegmentsWarning, type BleuComparison, type BleuTestOptions, type MetricComparison } from './bleu-significance.js';
import type { BleuOptions } from './bleu.js';
import type { ChrfOptions } from './chrf.js';
import { pyFixed } from './py-string.js';
import type { TerOptions } from './ter.js';
import { bleuVerbose, textMetric, TEXT_METRICS, type TextMetricKey } from './text-metric.js';

export { TEXT_METRICS, type TextMetricKey, type MetricComparison };

export interface TextCompareOptions {
  /** Which metrics (default: BLEU only); printed in TEXT_METRICS order whatever the order given. */
  metrics?: readonly TextMetricKey[];
  bleu?: BleuOptions;
  chrf?: ChrfOptions;
  ter?: TerOptions;
  test?: BleuTestOptions['test'];
  samples?: number;
  confidence?: boolean;
  confidenceSamples?: number;
  seed?: Seed;
}

export interface ChrfSystemResult extends SystemResult {
  name: string;
}

export interface TerSystemResult extends SystemResult {
  name: string;
  /** Summed edits and average reference lengths (sacreBLEU's num_edits, ref_length). */
  numEdits: number;
  refLength: number;
}

export type TextMetricComparison = BleuComparison | MetricComparison<ChrfSystemResult> | MetricComparison<TerSystemResult>;

type Systems = ReadonlyArray<{ name: string; lines: readonly string[] }>;
type References = ReadonlyArray<ReadonlyArray<string | null>>;

/**
 * Each asked metric of each system against `references` (`references[k][i]`: the k-th reference
 * of segment i), with the test asked for. The first system is the baseline of a paired test.
 */
export function* compareTextMetricsSteps(references: References, systems: Systems, opts: TextCompareOptions = {}): Steps<TextMetricComparison[]> {
  if (systems.length === 0) throw new Error('no system to score');
  const asked = new Set(opts.metrics ?? ['bleu']);
  // One seed for every metric (a drawn one included), as sacreBLEU's SACREBLEU_SEED.
  const spec = resampleSpec({ test: opts.test, samples: opts.samples, confidence: opts.confidence, confidenceSamples: opts.confidenceSamples, seed: opts.seed });
  const out: TextMetricComparison[] = [];
  for (const key of TEXT_METRICS) {
    if (asked.has(key)) out.push((yield* compareMetricSteps(textMetric(key, references, opts), systems, spec)) as TextMetricComparison);
  }
  return out;
}

export function compareTextMetrics(references: References, systems: Systems, opts: TextCompareOptions = {}): TextMetricComparison[] {
  return runSteps(compareTextMetricsSteps(references, systems, opts));
}

function isBleu(r: TextMetricComparison): r is BleuComparison {
  return r.metric === 'BLEU';
}

/** BLEU's details after its score, as sacreBLEU prints them; nothing for the other metrics. */
function verbose(r: TextMetricComparison, i: number): string {
  return isBleu(r) ? ` ${bleuVerbose(r.systems[i])}` : '';
}

/** A score as sacreBLEU's `-b` prints it: the score, and its interval when estimated. */
function scoreText(s: SystemResult, w: number): string {
  let text = pyFixed(s.score, w);
  if (s.mean !== null && s.ci !== null) text += ` (μ = ${pyFixed(s.mean, w)} ± ${pyFixed(s.ci, w)})`;
  return text;
}

/**
 * sacreBLEU's text lines, one per system and metric: `name: chrF2|signature = 59.4 (μ = 59.4 ±
 * 0.6) (p = 0.0010)*`, BLEU with its precisions and brevity penalty after; then one line saying
 * which test ran (p-values at or below `alpha` marked *). With `scoreOnly` (sacreBLEU's -b): the
 * scores alone, one a line, metric by metric.
 */
export function formatTextComparisons(results: readonly TextMetricComparison[], opts: { width?: number; alpha?: number; scoreOnly?: boolean } = {}): string {
  const w = opts.width ?? 1;
  const alpha = opts.alpha ?? 0.05;
  if (results.length === 0) return '';
  if (opts.scoreOnly) return results.flatMap((r) => (r.systems as SystemResult[]).map((s) => scoreText(s, w))).join('\n') + '\n';
  const first = results[0];
  const names = first.systems.map((s, i) => (first.test && i === 0 ? `Baseline: ${s.name}` : s.name));
  const pad = Math.max(...names.map((n) => n.length));
  const lines: string[] = [];
  for (const r of results) {
    (r.systems as (SystemResult & { name: string })[]).forEach((s, i) => {
      let score = scoreText(s, w);
      if (s.pValue !== null) score += ` (p = ${pyFixed(s.pValue, 4)})${s.pValue <= alpha ? '*' : ''}`;
      lines.push(`${names[i].padEnd(pad)}: ${r.metric}|${r.signature} = ${score}${verbose(r, i)}`);
    });
  }
  if (first.test) {
    const what =
      first.test === 'bs'
        ? `paired bootstrap resampling, ${first.n} resamples`
        : first.exact
          ? `exact paired randomization over all ${2 ** first.segments} swap patterns of ${first.segments} segments`
          : `paired approximate randomization, ${first.n} trials`;
    lines.push(`${what}, seed ${first.seed}: * marks p <= ${alpha} (the difference to the baseline is unlikely under the null hypothesis)`);
  }
  if (first.lowUnits) lines.push(lowSegmentsWarning(first.segments));
  return lines.join('\n') + '\n';
}
