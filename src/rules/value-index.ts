import type { Turn } from '../adapters/types.js';
import { fnv1a } from './text.js';

/**
 * Distinct values per (service, slot) seen in the loaded data: the pool negatives draw a
 * "different value of the same slot" from, for free-text slots.
 */
export interface ValueIndex {
  values(service: string, slot: string): readonly string[];
}

export function buildValueIndex(turns: Turn[]): ValueIndex {
  const seen = new Map<string, Map<string, string>>();
  for (const t of turns) {
    for (const a of t.actions) {
      if (a.slot === '' || a.values.length === 0) continue;
      const key = `${a.service}\u0000${a.slot}`;
      let m = seen.get(key);
      if (!m) seen.set(key, (m = new Map()));
      for (const v of a.values) {
        const l = v.toLowerCase();
        if (!m.has(l)) m.set(l, v);
      }
    }
  }
  const sorted = new Map<string, string[]>();
  for (const [k, m] of seen) sorted.set(k, [...m.values()].sort());
  return { values: (service, slot) => sorted.get(`${service}\u0000${slot}`) ?? [] };
}

/**
 * A value from `pool` different (case-insensitively) from all `current` values, chosen by a hash of
 * `seed` so reruns give the same negatives; undefined when the pool has nothing else.
 */
export function pickOther(pool: readonly string[], current: string[], seed: string): string | undefined {
  if (pool.length === 0) return undefined;
  const cur = new Set(current.map((v) => v.toLowerCase()));
  const start = fnv1a(seed) % pool.length;
  for (let k = 0; k < pool.length; k++) {
    const v = pool[(start + k) % pool.length];
    if (!cur.has(v.toLowerCase())) return v;
  }
  return undefined;
}
