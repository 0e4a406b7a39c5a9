/**
 * `--confidence` for a whole run: a bootstrap 95% interval of every metric the run's per-item
 * statistics support, resampling dialogues (or turns) as asked. The JSON block it returns is what
 * `score --confidence` and `evaluate --confidence` add to their reports (docs/significance.md).
 */
import { byDialogue, type MetricItems, type RunItems } from './items.js';
import { bootstrapConfidenceSteps } from './paired.js';
import type { Seed } from './pcg64.js';
import { resampleSpec, type ResampleSpec, type ResampleUnit } from './spec.js';
import { runSteps, type Steps } from './steps.js';
import { lowUnitsField, MIN_BOOTSTRAP_UNITS } from './units.js';

export type { ResampleUnit } from './spec.js';

export interface MetricConfidence {
  /** Display name ('SGSAcc', 'BLEU', ...). */
  metric: string;
  score: number;
  mean: number;
  /** Half the 95% interval's width (sacreBLEU's ±). */
  ci: number;
  low: number;
  high: number;
  /** What was resampled and how many of them. */
  unit: 'turn' | 'dialogue' | 'item';
  units: number;
  /** Fewer units than a 95% bootstrap interval needs (units.ts, docs/significance.md); absent otherwise. */
  lowUnits?: true;
}

export interface ConfidenceBlock {
  test: 'bootstrap';
  n: number;
  seed: number | string;
  /** The unit asked for; dialogue-level metrics always resample dialogues, rerank items themselves. */
  unit: ResampleUnit;
  metrics: Record<string, MetricConfidence>;
}

/** The items as resampled under `unit`: turn-level metrics grouped by dialogue unless unit is turn. */
export function resamplingUnits(m: MetricItems, unit: ResampleUnit): MetricItems {
  return unit === 'dialogue' && m.level === 'turn' && m.dialogues ? byDialogue(m) : m;
}

/** What runConfidence takes: a spec (its seed already drawn), or the options to resolve one from. */
export type ConfidenceOptions = ResampleSpec | { samples?: number; seed?: Seed; unit?: ResampleUnit };

function confidenceSpec(opts: ConfidenceOptions): ResampleSpec {
  return 'seedLabel' in opts ? opts : resampleSpec({ confidence: true, confidenceSamples: opts.samples, seed: opts.seed, unit: opts.unit });
}

export function runConfidence(items: RunItems, opts: ConfidenceOptions = {}): ConfidenceBlock {
  return runSteps(runConfidenceSteps(items, opts));
}

export function* runConfidenceSteps(items: RunItems, opts: ConfidenceOptions = {}): Steps<ConfidenceBlock> {
  const spec = confidenceSpec(opts);
  const samples = spec.confidenceN ?? spec.n!;
  const metrics: Record<string, MetricConfidence> = {};
  for (const [id, m] of Object.entries(items)) {
    const u = resamplingUnits(m, spec.unit);
    if (u.ids.length === 0) continue;
    const r = yield* bootstrapConfidenceSteps(u.stats, u.metric, { samples, seed: spec.seed });
    metrics[id] = {
      metric: m.metric.name,
      score: r.score,
      mean: r.mean,
      ci: r.ci,
      low: r.low,
      high: r.high,
      unit: u.level,
      units: u.ids.length,
      ...lowUnitsField(u.ids.length),
    };
  }
  return { test: 'bootstrap', n: samples, seed: spec.seedLabel, unit: spec.unit, metrics };
}

/** The line that says which intervals rest on too few units, or '' when none do. */
export function lowUnitsNote(rows: readonly { metric: string; units: number; unit: string; lowUnits?: true }[]): string {
  const low = rows.filter((r) => r.lowUnits);
  if (low.length === 0) return '';
  const which = low.map((r) => `${r.metric} (${r.units} ${r.unit}${r.units === 1 ? '' : 's'})`).join(', ');
  return `warning: too few units for a bootstrap 95% interval (fewer than ${MIN_BOOTSTRAP_UNITS}; it covers less than it says, docs/significance.md): ${which}`;
}

/** Text lines in sacreBLEU's words: `SGSAcc  81.23 (μ = 81.20 ± 1.31, 95% [79.92, 82.54], 300 dialogues)`. */
export function formatConfidence(block: ConfidenceBlock, digits = 2): string {
  const rows = Object.values(block.metrics);
  if (rows.length === 0) return '';
  const pad = Math.max(...rows.map((r) => r.metric.length));
  const lines = [`95% confidence (bootstrap, ${block.n} resamples, seed ${block.seed}):`];
  for (const r of rows) {
    const f = (x: number) => x.toFixed(digits);
    lines.push(`  ${r.metric.padEnd(pad)}  ${f(r.score)} (μ = ${f(r.mean)} ± ${f(r.ci)}, 95% [${f(r.low)}, ${f(r.high)}], ${r.units} ${r.unit}s)${r.lowUnits ? ' †' : ''}`);
  }
  const note = lowUnitsNote(rows);
  if (note) lines.push(`  † ${note}`);
  return lines.join('\n') + '\n';
}
