import * as fuzz from 'fuzzball';
import { describe, expect, it } from 'vitest';
import { partialRatio, partialRatioBound, partialRatioOrBelow } from '../../src/metrics/mwz/fuzzy.js';
import { mulberry32 } from '../helpers/mulberry32.js';

// The database and DST prune fuzzball's partial_ratio with partialRatioBound: the bound must never
// fall below the ratio fuzzball computes, or a venue or slot that matches would be dropped.

const NAMES = ['pizza hut city centre', 'the golden curry', 'cambridge', 'london kings cross', 'a and b guest house', 'curry garden', 'ely', 'stevenage', 'nandos city centre', 'the cow pizza kitchen and bar'];

/** Seeded pairs: venue-like names, their edits (near misses, where the bound is tightest), and random strings over small alphabets. */
function pairs(seed: number, count: number): [string, string][] {
  const r = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const randomString = (alphabet: string, max: number): string =>
    Array.from({ length: 1 + Math.floor(r() * max) }, () => alphabet[Math.floor(r() * alphabet.length)]).join('');
  const edit = (s: string): string => {
    const chars = [...s];
    for (let e = Math.floor(r() * 4); e > 0; e--) {
      const at = Math.floor(r() * (chars.length + 1));
      const op = r();
      if (op < 0.4) chars.splice(at, 1);
      else if (op < 0.7) chars.splice(at, 0, pick([...'abcdeirst ']));
      else chars[Math.min(at, chars.length - 1)] = pick([...'aeiou ']);
    }
    return chars.join('');
  };
  const out: [string, string][] = [];
  for (let i = 0; i < count; i++) {
    const kind = r();
    if (kind < 0.35) out.push([pick(NAMES), edit(pick(NAMES))]);
    else if (kind < 0.6) {
      const n = pick(NAMES);
      // a part of a name, edited: partial_ratio's own case (the shorter side inside the longer)
      const from = Math.floor(r() * n.length);
      out.push([edit(n.slice(from, from + 1 + Math.floor(r() * n.length))), n]);
    } else if (kind < 0.8) out.push([randomString('ab', 12), randomString('ab', 12)]);
    else out.push([randomString('abc de', 20), randomString('abcde ', 20)]);
  }
  return out.filter(([a, b]) => a.length > 0 && b.length > 0);
}

describe('partialRatioBound: never below fuzzball partial_ratio', () => {
  for (const seed of [1, 2]) {
    it(`seed ${seed}: 1,500 pairs either way round`, () => {
      // Disagreements collected and compared once: an expect per pair would cost more than the pairs.
      const wrong: string[] = [];
      let tight = 0;
      for (const [a, b] of pairs(seed, 1500)) {
        for (const [x, y] of [[a, b], [b, a]]) {
          const exact = fuzz.partial_ratio(x, y, { full_process: false });
          const bound = partialRatioBound(x, y);
          // fuzzball rounds a score that is at most the bound
          if (exact > Math.round(bound)) wrong.push(`${JSON.stringify(x)} vs ${JSON.stringify(y)}: ${exact} > bound ${bound}`);
          if (Math.round(bound) === exact) tight++;
          for (const min of [50, 80, 90, 95, 96]) {
            const pruned = partialRatioOrBelow(x, y, min);
            if (pruned >= min !== exact >= min || pruned > min !== exact > min) wrong.push(`${JSON.stringify(x)} vs ${JSON.stringify(y)} at ${min}: ${pruned} for ${exact}`);
          }
        }
      }
      expect(wrong).toEqual([]);
      // the bound is reached (not just an upper limit far above): it prunes because it is tight
      expect(tight).toBeGreaterThan(100);
    });
  }

  it('gives no bound for non-ASCII strings (fuzzball normalizes Unicode first)', () => {
    expect(partialRatioBound('café', 'cafe')).toBe(Infinity);
    expect(partialRatioOrBelow('café', 'cafe', 90)).toBe(partialRatio('café', 'cafe'));
  });

  it('keeps partialRatio special cases: equal strings 100, an empty side 0', () => {
    expect(partialRatioOrBelow('', '', 90)).toBe(100);
    expect(partialRatioOrBelow('', 'x', 90)).toBe(0);
    expect(partialRatioOrBelow('pizza hut', 'pizza hut city centre', 90)).toBe(100);
    expect(partialRatioOrBelow('xyz', 'pizza hut city centre', 90)).toBe(0);
  });
});
