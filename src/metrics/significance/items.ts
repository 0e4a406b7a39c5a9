/**
 * Per-item sufficient statistics of a run, as each metric's room hands them to the tests: what an
 * item is (a turn, a dialogue, a rerank item), which dialogue it belongs to, and one row of the
 * metric's statistics per item. Resampling by dialogue sums a dialogue's rows first (every metric
 * here is a function of column sums, so a dialogue's row is as sufficient as its turns').
 */
import type { StatMetric } from './types.js';

export type ItemLevel = 'turn' | 'dialogue' | 'item';

export interface MetricItems {
  metric: StatMetric;
  level: ItemLevel;
  ids: string[];
  /** The dialogue of each item (a dialogue-level item is its own); null when items have none. */
  dialogues: string[] | null;
  /** ids.length rows of metric.width numbers. */
  stats: Float64Array;
}

/** A run's items per metric id ('sgsacc', 'bleu', ...). */
export type RunItems = Record<string, MetricItems>;

/**
 * A rate from summed [numerator, denominator] rows: scale * num / (den + epsilon), 0 for an empty
 * denominator (a resample without any item in the denominator scores 0).
 */
export function ratioMetric(name: string, opts: { scale?: number; epsilon?: number } = {}): StatMetric {
  const scale = opts.scale ?? 100;
  const epsilon = opts.epsilon ?? 0;
  return {
    name,
    width: 2,
    spec: { type: 'ratio', scale, epsilon },
    score: (sums, offset) => {
      const den = sums[offset + 1] + epsilon;
      return den === 0 ? 0 : (scale * sums[offset]) / den;
    },
  };
}

/** Metric items from per-item rows (each row a number array of the metric's width). */
export function metricItems(metric: StatMetric, level: ItemLevel, ids: string[], dialogues: string[] | null, rows: ArrayLike<number>[]): MetricItems {
  const stats = new Float64Array(rows.length * metric.width);
  rows.forEach((row, i) => {
    if (row.length !== metric.width) throw new Error(`${metric.name}: item ${ids[i]} has ${row.length} statistics, expected ${metric.width}`);
    for (let j = 0; j < metric.width; j++) stats[i * metric.width + j] = row[j];
  });
  return { metric, level, ids, dialogues, stats };
}

/** The items `ids` of `m`, in that order (every id must be one of m's). */
export function selectItems(m: MetricItems, ids: readonly string[]): MetricItems {
  const at = new Map(m.ids.map((id, i) => [id, i]));
  const w = m.metric.width;
  const stats = new Float64Array(ids.length * w);
  const dialogues: string[] | null = m.dialogues ? [] : null;
  ids.forEach((id, k) => {
    const i = at.get(id);
    if (i === undefined) throw new Error(`${m.metric.name}: no item ${id}`);
    stats.set(m.stats.subarray(i * w, (i + 1) * w), k * w);
    dialogues?.push(m.dialogues![i]);
  });
  return { ...m, ids: [...ids], dialogues, stats };
}

/** Rows summed per dialogue, dialogues in order of first appearance: the dialogue as the resampling unit. */
export function byDialogue(m: MetricItems): MetricItems {
  if (!m.dialogues) throw new Error(`${m.metric.name}: its items belong to no dialogue`);
  if (m.level === 'dialogue') return m;
  const w = m.metric.width;
  const index = new Map<string, number>();
  for (const d of m.dialogues) if (!index.has(d)) index.set(d, index.size);
  const stats = new Float64Array(index.size * w);
  m.dialogues.forEach((d, i) => {
    const at = index.get(d)! * w;
    for (let j = 0; j < w; j++) stats[at + j] += m.stats[i * w + j];
  });
  const ids = [...index.keys()];
  return { metric: m.metric, level: 'dialogue', ids, dialogues: ids, stats };
}

/** The dialogue of a turn id `<dialogue>/<turn index>` (the adapters' turnId). */
export function dialogueOfTurn(id: string): string {
  const cut = id.lastIndexOf('/');
  return cut < 0 ? id : id.slice(0, cut);
}
