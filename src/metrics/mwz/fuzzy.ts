import * as fuzz from 'fuzzball';

// Memoized: the database and DST compare the same few hundred value pairs thousands of times.
const cache = new Map<string, number>();
const OPTS = { full_process: false } as const;

/**
 * fuzzywuzzy's partial_ratio as mwzeval calls it: no preprocessing (fuzzball lower-cases and strips
 * punctuation by default, fuzzywuzzy's partial_ratio does not), equal strings score 100 even when
 * empty, and an empty side otherwise scores 0.
 */
export function partialRatio(a: string, b: string): number {
  if (a === b) return 100;
  if (a.length === 0 || b.length === 0) return 0;
  const key = `${a}\u0000${b}`;
  let r = cache.get(key);
  if (r === undefined) {
    r = fuzz.partial_ratio(a, b, OPTS);
    if (cache.size > 200_000) cache.clear();
    cache.set(key, r);
  }
  return r;
}
