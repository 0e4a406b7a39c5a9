import path from 'node:path';
import { InvalidArgumentError } from 'commander';

/**
 * One part of a run split N ways: `--shard K/N`, K counted from 1 like test runners' shards.
 * (A Kubernetes Indexed Job's JOB_COMPLETION_INDEX counts from 0: the entrypoint adds 1.)
 */
export interface ShardSpec {
  index: number;
  count: number;
}

/** `K/N` as written on the command line and in signatures. */
export function shardLabel(s: ShardSpec): string {
  return `${s.index}/${s.count}`;
}

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

/**
 * Positions (in `units`' order) of the units shard `s` takes. Units of one group (a dialogue) never
 * span shards: groups are taken in order of first appearance and cut into N contiguous runs of
 * about equal size in units, so shard k starts at the group where the running count reaches
 * (k-1)/N of the total. The answer depends only on the units and their groups, so every machine
 * running the same input (after --limit) computes the same split.
 */
export function shardPositions<T>(units: readonly T[], groupOf: (unit: T, position: number) => string, s: ShardSpec): number[] {
  const groups = new Map<string, number[]>();
  units.forEach((u, i) => {
    const g = groupOf(u, i);
    const list = groups.get(g);
    if (list) list.push(i);
    else groups.set(g, [i]);
  });
  const taken: number[] = [];
  let before = 0;
  for (const members of groups.values()) {
    // Integer arithmetic: the same split on every platform, no float rounding at the boundaries.
    const shard = Math.floor((before * s.count) / Math.max(1, units.length));
    if (shard === s.index - 1) taken.push(...members);
    before += members.length;
  }
  return taken.sort((a, b) => a - b);
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
