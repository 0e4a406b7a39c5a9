/**
 * The significance columns of `todeval report`: each run's 95% bootstrap interval (the "±" that
 * `--confidence` gives) and its p-value against the first run, the baseline (what `todeval compare
 * BASELINE RUN` gives), from the runs' per-item statistics. Nothing is resampled here that
 * compare.ts and the significance room do not already do: this module only decides which runs can
 * be compared and says why the others cannot.
 */
import { runConfidenceSteps, type ConfidenceBlock, type MetricConfidence, type ResampleUnit } from '../../metrics/significance/confidence.js';
import type { RunItems } from '../../metrics/significance/items.js';
import type { Seed } from '../../metrics/significance/pcg64.js';
import { resampleSpec, type ResampleSpec } from '../../metrics/significance/spec.js';
import { lowUnitsField } from '../../metrics/significance/units.js';
import { InputError } from '../../util/errors.js';
import type { Steps } from '../../metrics/significance/steps.js';
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
 * run has either (the report then shows no significance columns). Steps: the report runs them
 * (runSteps, or in a worker that reports progress).
 */
export function* runSignificanceSteps(inputs: readonly SignificanceInput[], opts: RunSignificanceOptions = {}): Steps<RunSignificance | null> {
  // Resolved once: a drawn seed (--seed none) is the same for every interval and test below.
  const spec = resampleSpec({ test: opts.test ?? 'bs', samples: opts.samples, confidence: true, confidenceSamples: opts.confidenceSamples, seed: opts.seed, unit: opts.unit });
  const job: SignificanceJob = { inputs, opts, spec, notes: [], runs: inputs.map(() => ({ confidence: null, pValues: null })) };
  if (!(yield* jointFigures(job))) yield* pairwiseFigures(job);
  yield* remainingIntervals(job);
  const { runs, notes } = job;
  if (runs.every((r) => r.confidence === null)) return null;
  if (inputs.length > 1 && !inputs[0].source) notes.unshift(`no p-values: the baseline ${inputs[0].name} has no per-item statistics`);
  const shown = shownMetric(runs, opts.metric);
  // Statistics files without any metric (an empty run): nothing to show.
  if (shown === undefined) return null;
  const alpha = opts.alpha ?? 0.05;
  return { test: spec.test!, n: spec.n!, confidenceN: spec.confidenceN!, seed: spec.seedLabel, unit: spec.unit, alpha, baseline: 0, ...shown, runs, notes };
}

/** What the steps below share: the runs, the options, the resolved spec, and the figures and notes so far. */
interface SignificanceJob {
  inputs: readonly SignificanceInput[];
  opts: RunSignificanceOptions;
  spec: ResampleSpec;
  runs: RunFigures[];
  notes: string[];
}

/**
 * A paired bootstrap gives every run the interval bootstrapConfidence gives it with the same seed
 * and resamples (the same draws, over the same items in the same order): with the bootstrap as the
 * test and as many resamples for both, one compare of all runs yields the ± and the p-values. False
 * where that does not hold or the runs cannot be compared all at once.
 */
function* jointFigures(job: SignificanceJob): Steps<boolean> {
  const { inputs, spec, runs } = job;
  const base = inputs[0].source;
  const compared = inputs.map((r, k) => (k > 0 && base && r.source ? k : -1)).filter((k) => k > 0);
  const metricsOf = (k: number) => Object.keys(inputs[k].source!.items).sort().join(',');
  const sameMetrics = base !== null && compared.every((k) => metricsOf(k) === metricsOf(0));
  const joint = spec.test === 'bs' && spec.confidenceN === spec.n && sameMetrics && compared.length > 0 ? yield* tryCompare(job, [0, ...compared]) : null;
  if (!joint) return false;
  for (const [pos, k] of [0, ...compared].entries()) {
    const own = inputs[k].source!;
    const conf = jointIntervals(joint, pos, own, base!);
    // Metrics outside the joint comparison (or items in another order) get their own bootstrap.
    const rest = Object.fromEntries(Object.entries(own.items).filter(([id]) => !conf[id]));
    runs[k].confidence = { ...conf, ...(yield* ownIntervals(rest, spec)) };
    if (pos > 0) setPValues(runs[k], joint, pos);
  }
  return true;
}

/** The intervals the joint compare gave the run at `pos`, for the metrics whose items it has in the baseline's order. */
function jointIntervals(joint: CompareResult, pos: number, own: ItemSource, base: ItemSource): Record<string, MetricConfidence> {
  const conf: Record<string, MetricConfidence> = {};
  for (const c of joint.comparisons) {
    const ids = own.items[c.id].ids;
    const baseIds = base.items[c.id].ids;
    const sameOrder = ids.length === baseIds.length && ids.every((id, i) => id === baseIds[i]);
    if (!sameOrder) continue;
    const x = c.systems[pos];
    conf[c.id] = { metric: c.metric, score: x.score, mean: x.mean!, ci: x.ci!, low: x.low!, high: x.high!, unit: c.unit, units: c.units, ...lowUnitsField(c.units) };
  }
  return conf;
}

/** Each run with statistics against the baseline alone, as `todeval compare BASELINE RUN` does it. */
function* pairwiseFigures(job: SignificanceJob): Steps<void> {
  const { inputs, runs } = job;
  for (let k = 1; k < inputs.length && inputs[0].source; k++) {
    if (!inputs[k].source) continue;
    const r = yield* tryCompare(job, [0, k], true);
    if (r) setPValues(runs[k], r, 1);
  }
}

/** The p-values of the system at `pos` of a compare, and the metrics whose bootstrap had too few units. */
function setPValues(run: RunFigures, r: CompareResult, pos: number): void {
  run.pValues = Object.fromEntries(r.comparisons.map((c) => [c.id, c.systems[pos].pValue!]));
  run.lowUnits = r.comparisons.filter((c) => c.lowUnits).map((c) => c.id);
}

/**
 * Runs still without an interval: their own bootstrap over their statistics, else their own
 * --confidence block where it used the report's resamples, seed and unit, else a note saying why not.
 */
function* remainingIntervals(job: SignificanceJob): Steps<void> {
  const { inputs, spec, runs, notes } = job;
  for (const [k, r] of inputs.entries()) {
    if (runs[k].confidence) continue;
    if (r.source) {
      runs[k].confidence = yield* ownIntervals(r.source.items, spec);
      continue;
    }
    const own = r.confidence;
    if (own && own.n === spec.confidenceN && sameSeed(own.seed, spec.seedLabel) && own.unit === spec.unit) {
      runs[k].confidence = own.metrics;
      continue;
    }
    notes.push(
      `${r.name}: no interval or p-value: no per-item statistics (pass its per-turn file with --turns, or evaluate's --items file with --items)` +
        (own ? `; its own --confidence block used ${own.n} resamples, seed ${own.seed}, unit ${own.unit}, not the report's` : ''),
    );
  }
}

function* ownIntervals(items: RunItems, spec: ResampleSpec): Steps<Record<string, MetricConfidence>> {
  return (yield* runConfidenceSteps(items, spec)).metrics;
}

/**
 * The metric of the ± and "vs baseline" columns: the one asked for (refused when no run has it),
 * else the table's first that has figures, else any; undefined when no run has any metric.
 */
function shownMetric(runs: RunFigures[], requested: string | undefined): { metric: string; metricName: string } | undefined {
  const has = (id: string) => runs.some((r) => r.confidence?.[id] || r.pValues?.[id] !== undefined);
  const available = [...new Set(runs.flatMap((r) => [...Object.keys(r.confidence ?? {}), ...Object.keys(r.pValues ?? {})]))];
  if (requested !== undefined && !has(requested)) {
    throw new InputError(`--significance-metric ${requested}: no run has statistics for it (these runs have: ${available.join(', ')})`);
  }
  const metric = requested ?? COLUMN_METRICS.map(([, id]) => id).find(has) ?? available.at(0);
  if (metric === undefined) return undefined;
  const metricName = runs.map((r) => r.confidence?.[metric]?.metric).find((x) => x !== undefined) ?? metric;
  return { metric, metricName };
}

/**
 * compareRuns over these runs, or null when they cannot be compared; with `note`, the reason is
 * kept for the page (the joint attempt falls back to pairs, which then say what is wrong).
 */
function* tryCompare(job: SignificanceJob, which: number[], note = false): Steps<CompareResult | null> {
  const { inputs, spec, opts } = job;
  try {
    return yield* compareRunsSteps(
      which.map((k) => inputs[k].source!),
      { spec, commonItems: note && opts.commonItems === true },
    );
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    if (note) job.notes.push(`${inputs[which[1]].name}: no p-value: ${e.message}`);
    return null;
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
