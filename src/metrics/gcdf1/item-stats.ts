/**
 * The sufficient statistics of I-GCDF1 and R-GCDF1 per dialogue (docs/significance.md). Both are
 * macro averages: the combined score is the mean of each dialogue's combined F1 over the dialogues
 * that have one (aggregate() in evaluate.ts), so a dialogue contributes [its F1, 1], or [0, 0]
 * when it has no combined score, and a resample's score is the first sum over the second.
 */
import { metricItems, ratioMetric, type RunItems } from '../significance/items.js';
import type { F1Scores, MetricName } from './record.js';

export const GCDF1_METRICS = { igcdf1: 'I-GCDF1', rgcdf1: 'R-GCDF1' } as const;

/** Dialogue id -> its scores, as DialogueRecord and `gcdf1 --per-dialogue` hold them. */
export type Gcdf1DialogueScores = Record<string, { scores: Record<MetricName, Record<string, F1Scores>> }>;

export function gcdf1ItemStats(dialogues: Gcdf1DialogueScores): RunItems {
  const ids = Object.keys(dialogues);
  const rows = (metric: MetricName) =>
    ids.map((id) => {
      const combined = dialogues[id].scores[metric]?.combined;
      return combined ? [combined.f1, 1] : [0, 0];
    });
  return {
    igcdf1: metricItems(ratioMetric(GCDF1_METRICS.igcdf1, { scale: 1 }), 'dialogue', ids, ids, rows('igcd_f1')),
    rgcdf1: metricItems(ratioMetric(GCDF1_METRICS.rgcdf1, { scale: 1 }), 'dialogue', ids, ids, rows('rgcd_f1')),
  };
}
