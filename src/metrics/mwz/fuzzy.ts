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

/**
 * partialRatio(a, b) where it may reach `min`, else 0 (below any `min` it prunes for): callers
 * that only compare the ratio with a threshold (`>= min`, `> min`) get the same answers. Most
 * pairs the database filters compare (a predicted name against every venue's) share too few
 * characters to reach 90, and proving that costs one pass over the strings where
 * fuzzball's matching blocks and edit distances took most of an evaluation's CPU.
 */
export function partialRatioOrBelow(a: string, b: string, min: number): number {
  if (a === b) return 100;
  if (a.length === 0 || b.length === 0) return 0;
  // The bound is within 1 of the rounded ratio at most (rounding, float error): prune below min - 1.
  if (min > 1 && partialRatioBound(a, b) < min - 1) return 0;
  return partialRatio(a, b);
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * An upper bound (0-100, unrounded) of fuzzball's partial_ratio(a, b) for non-empty ASCII strings,
 * Infinity for others (no bound: fuzzball normalizes Unicode first). fuzzball takes the shorter
 * string s (a on a tie, length m) and, at some start offsets in the longer one, the window w of up
 * to m characters there (k of them); each scores round(100 * 2 * LCS(s, w) / (m + k)) (edit
 * distance with substitutions costing 2), and the ratio is the best of them. LCS(s, w) is at most
 * the characters the two have in common counted with multiplicity, I, and at most k; so
 * 100 * 2 * min(I, k) / (m + k) over every start offset bounds every window fuzzball can pick.
 * One sliding pass updates I as the window moves.
 */
export function partialRatioBound(a: string, b: string): number {
  if (!ASCII.test(a) || !ASCII.test(b)) return Infinity;
  const [s, l] = a.length <= b.length ? [a, b] : [b, a];
  const m = s.length;
  const n = l.length;
  const need = NEED;
  const have = HAVE;
  for (let i = 0; i < m; i++) need[s.charCodeAt(i)]++;
  // The window at offset 0: l[0, m).
  let common = 0;
  for (let i = 0; i < m; i++) {
    const c = l.charCodeAt(i);
    if (have[c] < need[c]) common++;
    have[c]++;
  }
  let best = (2 * common) / (2 * m);
  for (let start = 1; start < n; start++) {
    // Drop l[start - 1]; add l[start + m - 1] while the window still has m characters.
    const out = l.charCodeAt(start - 1);
    have[out]--;
    if (have[out] < need[out]) common--;
    const end = start + m - 1;
    let k = m;
    if (end < n) {
      const c = l.charCodeAt(end);
      if (have[c] < need[c]) common++;
      have[c]++;
    } else {
      k = n - start;
    }
    const r = (2 * Math.min(common, k)) / (m + k);
    if (r > best) best = r;
  }
  // Back to zeros for the next call: only the characters counted were touched.
  for (let i = 0; i < m; i++) need[s.charCodeAt(i)] = 0;
  for (let i = 0; i < n; i++) have[l.charCodeAt(i)] = 0;
  return 100 * best;
}

// Character counts of the two sides, reused across calls (DST bounds tens of thousands of pairs, and
// two fresh arrays a pair cost more than the pass itself).
const NEED = new Int32Array(128);
const HAVE = new Int32Array(128);
