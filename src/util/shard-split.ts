// How a run is split N ways. It lives in util because the metrics that merge shards (evaluate's
// SGSAcc section) need it as much as the shard room does, and metrics sit below shard.

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
