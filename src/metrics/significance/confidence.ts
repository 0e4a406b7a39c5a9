/**
 * `--confidence` for a whole run: a bootstrap 95% interval of every metric the run's per-item
 * statistics support, resampling dialogues (or turns) as asked. The JSON block it returns is what
 * `score --confidence` and `evaluate --confidence` add to their reports (docs/significance.md).
 */
import { byDialogue, type MetricItems, type RunItems } from './items.js';
import { bootstrapConfidence, DEFAULT_BOOTSTRAP_SAMPLES, DEFAULT_SEED } from './paired.js';
import type { Seed } from './pcg64.js';

export type ResampleUnit = 'turn' | 'dialogue';

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

export function seedLabel(seed: Seed): number | string {
  if (seed === null) return 'none';
  if (typeof seed === 'number') return seed;
  return Array.isArray(seed) ? seed.join(',') : String(seed);
}

export function runConfidence(items: RunItems, opts: { samples?: number; seed?: Seed; unit?: ResampleUnit } = {}): ConfidenceBlock {
  const samples = opts.samples ?? DEFAULT_BOOTSTRAP_SAMPLES;
  const seed = opts.seed === undefined ? DEFAULT_SEED : opts.seed;
  const unit = opts.unit ?? 'dialogue';
  const metrics: Record<string, MetricConfidence> = {};
  for (const [id, m] of Object.entries(items)) {
    const u = resamplingUnits(m, unit);
    if (u.ids.length === 0) continue;
    const r = bootstrapConfidence(u.stats, u.metric, { samples, seed });
    metrics[id] = { metric: m.metric.name, score: r.score, mean: r.mean, ci: r.ci, low: r.low, high: r.high, unit: u.level, units: u.ids.length };
  }
  return { test: 'bootstrap', n: samples, seed: seedLabel(seed), unit, metrics };
}

/** Text lines in sacreBLEU's words: `SGSAcc  81.23 (μ = 81.20 ± 1.31, 95% [79.92, 82.54], 300 dialogues)`. */
export function formatConfidence(block: ConfidenceBlock, digits = 2): string {
  const rows = Object.values(block.metrics);
  if (rows.length === 0) return '';
  const pad = Math.max(...rows.map((r) => r.metric.length));
  const lines = [`95% confidence (bootstrap, ${block.n} resamples, seed ${block.seed}):`];
  for (const r of rows) {
    const f = (x: number) => x.toFixed(digits);
    lines.push(`  ${r.metric.padEnd(pad)}  ${f(r.score)} (μ = ${f(r.mean)} ± ${f(r.ci)}, 95% [${f(r.low)}, ${f(r.high)}], ${r.units} ${r.unit}s)`);
  }
  return lines.join('\n') + '\n';
}
