import type { NliPair } from '../../src/nli/types.js';

/**
 * `sets` sets of pairs, each the twin of `like` token for token: set s's i-th pair has as many
 * tokens as like[i]. bench:nli times every pass on such a set, so every pass cuts batches of the
 * very same shapes (the runner's planner and the peer's look at lengths only) while no pair repeats
 * (the runner's pair cache would answer a repeat). With fresh pairs of other lengths each pass, a
 * pass of few large batches and one of many small ones moved torch's int8 rate against ours by more
 * than any drift (docs/nli.md "A bench whose ratios hold still").
 *
 * A twin shares neither its premise nor its hypothesis with `like`, `avoid` or another twin, so no
 * timed text is in a tokenizer's memo before its turn. The pool is read from `start` on, wrapping
 * round, each pair taken by the first open slot of its length: the same sets on every machine.
 * Throws when the pool has too few pairs of some length.
 */
export function lengthTwins(
  pool: readonly NliPair[],
  like: readonly NliPair[],
  sets: number,
  tokens: (p: NliPair) => number,
  avoid: readonly NliPair[] = [],
  start = 0,
): NliPair[][] {
  const used = new Set<string>();
  for (const p of [...like, ...avoid]) used.add(p.premise).add(p.hypothesis);
  /** Open slots [set, index] by token length, in set order. */
  const open = new Map<number, [number, number][]>();
  for (let s = 0; s < sets; s++) {
    like.forEach((p, i) => {
      const n = tokens(p);
      open.set(n, [...(open.get(n) ?? []), [s, i]]);
    });
  }
  const out: NliPair[][] = Array.from({ length: sets }, () => new Array<NliPair>(like.length));
  let left = sets * like.length;
  for (let k = 0; k < pool.length && left > 0; k++) {
    const p = pool[(start + k) % pool.length];
    if (used.has(p.premise) || used.has(p.hypothesis)) continue;
    const slots = open.get(tokens(p));
    const slot = slots?.shift();
    if (!slot) continue;
    out[slot[0]][slot[1]] = p;
    used.add(p.premise).add(p.hypothesis);
    left--;
  }
  if (left > 0) {
    const short = [...open].filter(([, s]) => s.length > 0).map(([n, s]) => `${s.length} of ${n} tokens`);
    throw new Error(`length twins: the pool has too few unused pairs (${short.join(', ')} missing)`);
  }
  return out;
}
