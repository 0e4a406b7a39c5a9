import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { ShardSpec } from '../util/shard-split.js';

export { shardLabel, shardPositions, type ShardSpec } from '../util/shard-split.js';

/** Commander parser for `--shard K/N`. */
export function parseShardFlag(v: string): ShardSpec {
  const m = /^(\d+)\/(\d+)$/.exec(v.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(count) || count < 1 || index < 1 || index > count) {
    throw new InvalidArgumentError('--shard must be K/N with 1 <= K <= N (e.g. 2/8)');
  }
  return { index, count };
}

/** A path as a shard report records it: relative to the report's folder, so the folder can move. */
export function pathFromReport(reportFile: string, file: string): string {
  return path.relative(path.dirname(path.resolve(reportFile)), path.resolve(file));
}

/** The file a shard report names, found relative to that report's folder. */
export function pathInReport(reportFile: string, recorded: string): string {
  return path.resolve(path.dirname(path.resolve(reportFile)), recorded);
}

/** What every shard report carries besides the command's own fields. */
export interface ShardBlock {
  index: number;
  count: number;
  /** The unit shards are cut along: a dialogue never spans two shards. */
  by: 'dialogue';
  /**
   * Where this shard's listed entries stand in the unsharded run's order, so the merge can put them
   * back: rerank's `items`, score's `predictions.missing`.
   */
  positions: number[];
  /** The shard's record files (relative to the report's folder), which `todeval merge` joins too. */
  files: { turns?: string; references?: string };
}
