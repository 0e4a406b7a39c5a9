import type { Turn } from '../adapters/types.js';
import { fnv1a } from './text.js';

/**
 * Distinct values per (service, slot) seen in the loaded data: the pool negatives draw a
 * "different value of the same slot" from, for free-text slots. Each value also keeps its
 * canonical form (SGD canonical_values) so "afternoon 12" is never a negative for "12 pm".
 */
export interface ValueIndex {
  values(service: string, slot: string): readonly string[];
  /** Canonical key of a value seen for the slot (lower case), or the value's own key. */
  canonical(service: string, slot: string, value: string): string;
}

const NUMBER_WORDS: Record<string, string> = {
  zero: '0', one: '1', two: '2', three: '3', four: '4', five: '5', six: '6', seven: '7', eight: '8', nine: '9', ten: '10',
};

/** Case-folded, with number words as digits: the cheapest equivalence that still catches "two" vs "2". */
export function valueKey(v: string): string {
  const l = v.trim().toLowerCase();
  return NUMBER_WORDS[l] ?? l;
}

export function buildValueIndex(turns: Turn[]): ValueIndex {
  const seen = new Map<string, Map<string, { value: string; canon: string }>>();
  for (const t of turns) {
    for (const a of t.actions) {
      if (a.slot === '' || a.values.length === 0) continue;
      const key = `${a.service}\u0000${a.slot}`;
      let m = seen.get(key);
      if (!m) seen.set(key, (m = new Map()));
      a.values.forEach((v, i) => {
        const k = valueKey(v);
        // A blank value is no other value of the slot: drawn as the tamper, it gave no negative at all.
        if (k === '') return;
        const c = a.canonicalValues?.[i];
        if (!m.has(k)) m.set(k, { value: v, canon: c ? valueKey(c) : k });
      });
    }
  }
  const sorted = new Map<string, string[]>();
  const canon = new Map<string, Map<string, string>>();
  for (const [k, m] of seen) {
    sorted.set(k, [...m.values()].map((e) => e.value).sort());
    canon.set(k, new Map([...m].map(([vk, e]) => [vk, e.canon])));
  }
  return {
    values: (service, slot) => sorted.get(`${service}\u0000${slot}`) ?? [],
    canonical: (service, slot, value) => {
      const k = valueKey(value);
      return canon.get(`${service}\u0000${slot}`)?.get(k) ?? k;
    },
  };
}

/**
 * A value from `pool` that is not the same as any current value (`same` decides; by default
 * case- and number-word-insensitive equality), chosen by a hash of `seed` so reruns give the
 * same negatives; undefined when the pool has nothing else.
 */
export function pickOther(
  pool: readonly string[],
  current: string[],
  seed: string,
  same?: (candidate: string) => boolean,
): string | undefined {
  if (pool.length === 0) return undefined;
  const cur = new Set(current.map(valueKey));
  const isSame = same ?? ((v: string) => cur.has(valueKey(v)));
  const start = fnv1a(seed) % pool.length;
  for (let k = 0; k < pool.length; k++) {
    const v = pool[(start + k) % pool.length];
    if (!isSame(v)) return v;
  }
  return undefined;
}
