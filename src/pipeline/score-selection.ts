import type { Turn } from '../adapters/types.js';
import { comparePredictionIds } from '../metrics/predictions-file.js';
import { shardPositions, type ShardSpec } from '../shard/spec.js';

/** Which turns a score run covers, decided before any model loads. */
export interface ScoreSelection {
  /** Every system turn of the loaded data (extra prediction ids are judged against these). */
  allTurns: Turn[];
  /** The turns scored: the --limit slice, cut to the shard, less turns without a prediction. */
  turns: Turn[];
  /** Position of each turn of the --limit slice in it: where a shard's turns stand in the whole run. */
  positionOf: Map<string, number>;
  /** Turns of the slice (shard) with no prediction, in order. */
  missing: string[];
  /** Prediction ids that match no turn of the whole data. */
  extra: string[];
}

/**
 * --limit picks the same turns with or without --shard; the shard is then cut from them, by
 * dialogue. Predictions: extra ids are judged against the whole dataset, missing ones against the
 * slice, and the turns left to score are those with a prediction (the caller decides whether
 * missing ones are allowed before anything runs).
 */
export function selectScoreTurns(allTurns: Turn[], opts: { limit?: number; shard?: ShardSpec; predictions?: Map<string, string> }): ScoreSelection {
  let turns = opts.limit ? allTurns.slice(0, opts.limit) : allTurns;
  const positionOf = new Map(turns.map((t, i) => [t.id, i]));
  if (opts.shard) {
    const sliced = turns;
    turns = shardPositions(sliced, (t) => t.dialogueId, opts.shard).map((i) => sliced[i]);
  }
  let missing: string[] = [];
  let extra: string[] = [];
  const predictions = opts.predictions;
  if (predictions) {
    extra = comparePredictionIds(predictions, allTurns.map((t) => t.id)).extra;
    missing = comparePredictionIds(predictions, turns.map((t) => t.id)).missing;
    if (missing.length > 0) turns = turns.filter((t) => predictions.has(t.id));
  }
  return { allTurns, turns, positionOf, missing, extra };
}
