/**
 * The significance columns of `todeval report`: each run's 95% bootstrap interval (the "±" that
 * `--confidence` gives) and its p-value against the first run, the baseline (what `todeval compare
 * BASELINE RUN` gives), from the runs' per-item statistics. Nothing is resampled here that
 * compare.ts and the significance room do not already do: this module only decides which runs can
 * be compared and says why the others cannot.
 */
import { runConfidenceSteps, type ConfidenceBlock, type MetricConfidence, type ResampleUnit } from '../metrics/significance/confidence.js';
import type { RunItems } from '../metrics/significance/items.js';
import type { Seed } from '../metrics/significance/pcg64.js';
import { resampleSpec } from '../metrics/significance/spec.js';
import { tooFewForBootstrap } from '../metrics/significance/units.js';
import { InputError } from '../util/errors.js';
import { runSteps, type Steps } from '../metrics/significance/steps.js';
import { compareRunsSteps, type CompareResult } from './compare.js';
import type { ItemSource } from './item-files.js';

/** The metrics the report's main columns show, in the table's order: column key -> metric id. */
export const COLUMN_METRICS: readonly (readonly [column: string, metric: string])[] = [
  ['validated', 'sgsacc'],
  ['unvalidated', 'sgsacc-all'],
  ['ser', 'ser'],
  ['bleu', 'bleu'],
  ['inform', 'inform'],
  ['success', 'success'],
];

export interface RunSignificanceOptions {
  /** The paired test: bootstrap (default) or approximate randomization. */
  test?: 'bs' | 'ar';
  /** Resamples (bs) or trials (ar) of the paired test. */
  samples?: number;
  /** Resamples of each run's interval (the "±"; default 1000). */
  confidenceSamples?: number;
  seed?: Seed;
  unit?: ResampleUnit;
  /** p-values at or below it are marked significant (default 0.05). */
  alpha?: number;
  /** Compare on the items both runs have instead of leaving a run without a p-value. */
  commonItems?: boolean;
  /** The metric the ± and "vs baseline" columns show (a compare metric id); default the table's first that has statistics. */
  metric?: string;
}

/** One run's figures: its interval and p-value per metric id. */
export interface RunFigures {
  /** null when the run has neither per-item statistics nor a matching --confidence block. */
  confidence: Record<string, MetricConfidence> | null;
  /** null for the baseline and for runs that could not be compared with it. */
  pValues: Record<string, number> | null;
  /** Metric ids whose p-value rests on a bootstrap over too few units (units.ts): marked †. */
  lowUnits?: string[];
}

export interface RunSignificance {
  test: 'bs' | 'ar';
  n: number;
  confidenceN: number;
  seed: number | string;
  unit: ResampleUnit;
  alpha: number;
  /** Index of the baseline run (always the first). */
  baseline: 0;
  /** The metric of the ± and "vs baseline" columns, and its display name. */
  metric: string;
  metricName: string;
  runs: RunFigures[];
  /** Why a run has no interval or no p-value, one line each. */
  notes: string[];
}

/** A run as this module sees it: its name, its per-item statistics, its own --confidence block. */
export interface SignificanceInput {
  name: string;
  source: ItemSource | null;
  confidence?: ConfidenceBlock | null;
}

function sameSeed(a: number | string, b: number | string): boolean {
  return String(a) === String(b);
}

/**
 * Intervals for every run that has statistics (or its own `--confidence` block with the same
 * resamples, seed and unit), p-values of every other run against the first. Returns null when no
 * run has either (the report then shows no significance columns).
 */
export function runSignificance(inputs: readonly SignificanceInput[], opts: RunSignificanceOptions = {}): RunSignificance | null {
  return runSteps(runSignificanceSteps(inputs, opts));
}

export function* runSignificanceSteps(inputs: readonly SignificanceInput[], opts: RunSignificanceOptions = {}): Steps<RunSignificance | null> {
  // Resolved once: a drawn seed (--seed none) is the same for every interval and test below.
  const spec = resampleSpec({ test: opts.test ?? 'bs', samples: opts.samples, confidence: true, confidenceSamples: opts.confidenceSamples, seed: opts.seed, unit: opts.unit });
  const test = spec.test!;
  const n = spec.n!;
  const confidenceN = spec.confidenceN!;
  const unit = spec.unit;
  const alpha = opts.alpha ?? 0.05;
  const notes: string[] = [];
  const runs: RunFigures[] = inputs.map(() => ({ confidence: null, pValues: null }));
  const ownConfidence = function* (items: RunItems): Steps<Record<string, MetricConfidence>> {
    return (yield* runConfidenceSteps(items, spec)).metrics;
  };
  const lowOf = (r: CompareResult) => r.comparisons.filter((c) => c.lowUnits).map((c) => c.id);

  const base = inputs[0].source;
  const compared = inputs.map((r, k) => (k > 0 && base && r.source ? k : -1)).filter((k) => k > 0);
  // A paired bootstrap gives every run the interval bootstrapConfidence gives it with the same seed
  // and resamples (the same draws, over the same items in the same order): with the bootstrap as the
  // test and as many resamples for both, one compare of all runs yields the ± and the p-values.
  const metricsOf = (k: number) => Object.keys(inputs[k].source!.items).sort().join(',');
  const sameMetrics = base !== null && compared.every((k) => metricsOf(k) === metricsOf(0));
  const joint = test === 'bs' && confidenceN === n && sameMetrics && compared.length > 0 ? yield* tryCompare([0, ...compared]) : null;
  if (joint) {
    for (const [pos, k] of [0, ...compared].entries()) {
      const conf: Record<string, MetricConfidence> = {};
      for (const c of joint.comparisons) {
        const own = inputs[k].source!.items[c.id];
        const sameOrder = own.ids.length === base!.items[c.id].ids.length && own.ids.every((id, i) => id === base!.items[c.id].ids[i]);
        if (!sameOrder) continue;
        const x = c.systems[pos];
        conf[c.id] = { metric: c.metric, score: x.score, mean: x.mean!, ci: x.ci!, low: x.low!, high: x.high!, unit: c.unit, units: c.units, ...(tooFewForBootstrap(c.units) ? { lowUnits: true as const } : {}) };
      }
      // Metrics outside the joint comparison (or items in another order) get their own bootstrap.
      const rest = Object.fromEntries(Object.entries(inputs[k].source!.items).filter(([id]) => !conf[id]));
      runs[k].confidence = { ...conf, ...(yield* ownConfidence(rest)) };
      if (pos > 0) {
        runs[k].pValues = Object.fromEntries(joint.comparisons.map((c) => [c.id, c.systems[pos].pValue!]));
        runs[k].lowUnits = lowOf(joint);
      }
    }
  } else {
    for (let k = 1; k < inputs.length && base; k++) {
      if (!inputs[k].source) continue;
      // Each run against the baseline alone, as `todeval compare BASELINE RUN` does it.
      const r = yield* tryCompare([0, k], true);
      if (r) {
        runs[k].pValues = Object.fromEntries(r.comparisons.map((c) => [c.id, c.systems[1].pValue!]));
        runs[k].lowUnits = lowOf(r);
      }
    }
  }
  for (const [k, r] of inputs.entries()) {
    if (runs[k].confidence) continue;
    if (r.source) {
      runs[k].confidence = yield* ownConfidence(r.source.items);
      continue;
    }
    const own = r.confidence;
    if (own && own.n === confidenceN && sameSeed(own.seed, spec.seedLabel) && own.unit === unit) {
      runs[k].confidence = own.metrics;
      continue;
    }
    notes.push(
      `${r.name}: no interval or p-value: no per-item statistics (pass its per-turn file with --turns, or evaluate's --items file with --items)` +
        (own ? `; its own --confidence block used ${own.n} resamples, seed ${own.seed}, unit ${own.unit}, not the report's` : ''),
    );
  }
  if (runs.every((r) => r.confidence === null)) return null;
  if (inputs.length > 1 && !base) notes.unshift(`no p-values: the baseline ${inputs[0].name} has no per-item statistics`);

  const has = (id: string) => runs.some((r) => r.confidence?.[id] || r.pValues?.[id] !== undefined);
  const available = [...new Set(runs.flatMap((r) => [...Object.keys(r.confidence ?? {}), ...Object.keys(r.pValues ?? {})]))];
  let metric = opts.metric;
  if (metric !== undefined && !has(metric)) {
    throw new InputError(`--significance-metric ${metric}: no run has statistics for it (these runs have: ${available.join(', ')})`);
  }
  metric ??= COLUMN_METRICS.map(([, id]) => id).find(has) ?? available.at(0);
  // Statistics files without any metric (an empty run): nothing to show.
  if (metric === undefined) return null;
  const metricName = runs.map((r) => r.confidence?.[metric]?.metric).find((x) => x !== undefined) ?? metric;
  return { test, n, confidenceN, seed: spec.seedLabel, unit, alpha, baseline: 0, metric, metricName, runs, notes };

  /**
   * compareRuns over these runs, or null when they cannot be compared; with `note`, the reason is
   * kept for the page (the joint attempt falls back to pairs, which then say what is wrong).
   */
  function* tryCompare(which: number[], note = false): Steps<CompareResult | null> {
    try {
      return yield* compareRunsSteps(
        which.map((k) => inputs[k].source!),
        { spec, commonItems: note && opts.commonItems === true },
      );
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      if (note) notes.push(`${inputs[which[1]].name}: no p-value: ${e.message}`);
      return null;
    }
  }
}

/** The line under the runs table that says what the ± and "vs baseline" columns are. */
export function significanceCaption(s: RunSignificance, baselineName: string, paired: boolean, metricLabel = s.metricName): string {
  const test = s.test === 'bs' ? `paired bootstrap resampling, n = ${s.n} resamples` : `paired approximate randomization, n = ${s.n} trials`;
  const unit = s.unit === 'dialogue' ? 'dialogues' : 'turns (dialogue-level metrics: dialogues)';
  return [
    `${paired ? '± and vs baseline are' : '± is'} for ${metricLabel}; the run's other metrics are in its detail row.`,
    `±: half the width of the 95% bootstrap interval (${s.confidenceN} resamples).`,
    ...(paired ? [`vs baseline: the p-value against ${baselineName}, the first run (${test}); * marks p ≤ ${s.alpha}.`] : []),
    `Seed ${s.seed}; unit resampled: ${unit}. As todeval compare and --confidence compute them (docs/significance.md).`,
  ].join(' ');
}
