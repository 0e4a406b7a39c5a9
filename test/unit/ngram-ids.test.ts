import { describe, expect, it } from 'vitest';
import { ChrfReferences } from '../../src/metrics/text/chrf.js';
import { FIRST_NODE, NgramIds } from '../../src/metrics/text/ngram-ids.js';

// chrF sizes its n-gram table and its reference arrays by an upper bound (UTF-16 units x orders),
// so the corpus tests never reach NgramIds.grow() or ChrfReferences' reallocation of its arrays.
// These reach both on purpose. Mismatches are gathered and checked once: one expect() per pair
// costs more than the table under test.

/**
 * A 32-bit linear congruential generator (Numerical Recipes' constants): the same draws every run.
 * It returns the state's top 16 bits: the low bits of such a generator repeat with a short period.
 */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state >>> 16;
  };
}

describe('NgramIds from the smallest table', () => {
  it('10,000 pairs forming a prefix tree: one id each across every growth, found again, and no false find', () => {
    // Capacity 1 starts with room for ids below 8 (6 nodes past the two roots), so the thousands
    // of distinct pairs below make the table grow about ten times.
    const table = new NgramIds(1);
    const draw = lcg(20240611);
    /** Each distinct pair interned ('parent,symbol') and the id it got first. */
    const idOf = new Map<string, number>();
    /** The ids given out, in order: the parents a later pair extends. */
    const given: number[] = [];
    const problems: string[] = [];
    for (let k = 0; k < 10_000; k++) {
      const [a, b, c] = [draw(), draw(), draw()];
      // A root (0 or 1) one time in eight, or else a node given out before: a prefix tree. Few
      // symbols, so some pairs come again and must get their first id back.
      const parent = given.length === 0 || a % 8 === 0 ? (a >>> 3) % 2 : given[b % given.length];
      const symbol = c % 40;
      const key = `${parent},${symbol}`;
      const before = idOf.get(key);
      if (before === undefined && table.find(parent, symbol) !== -1) problems.push(`${key} found before it was interned`);
      const id = table.intern(parent, symbol);
      if (before === undefined) {
        idOf.set(key, id);
        given.push(id);
      } else if (id !== before) problems.push(`${key} interned again: ${id}, first ${before}`);
    }
    expect(problems).toEqual([]);
    // Enough distinct pairs that the table grew many times over.
    expect(idOf.size).toBeGreaterThan(5000);

    const ids = [...idOf.values()];
    expect(new Set(ids).size).toBe(ids.length);
    expect(Math.min(...ids)).toBe(FIRST_NODE);
    // Ids are dense: an array indexed by id is `size` long and has no hole.
    expect(table.size).toBe(FIRST_NODE + ids.length);
    expect(Math.max(...ids)).toBe(table.size - 1);

    for (const [key, id] of idOf) {
      const [parent, symbol] = key.split(',').map(Number);
      if (table.find(parent, symbol) !== id) problems.push(`find ${key}: ${table.find(parent, symbol)}, not ${id}`);
      if (table.intern(parent, symbol) !== id) problems.push(`intern ${key} again: ${table.intern(parent, symbol)}, not ${id}`);
    }
    expect(problems).toEqual([]);
    expect(table.size).toBe(FIRST_NODE + ids.length);

    // Pairs never interned: a node with a symbol outside the 40 drawn, a parent that is no id, and
    // a node with a drawn symbol that the build happened not to pair it with.
    let absent = 0;
    for (let k = 0; k < 2000; k++) {
      const [a, b, c] = [draw(), draw(), draw()];
      const candidates: [number, number][] = [
        [given[a % given.length], 40 + (b % 1000)],
        [table.size + (b % 1000), c % 40],
        [given[c % given.length], a % 40],
      ];
      for (const [parent, symbol] of candidates) {
        if (idOf.has(`${parent},${symbol}`)) continue;
        absent++;
        if (table.find(parent, symbol) !== -1) problems.push(`find ${parent},${symbol} (never interned): ${table.find(parent, symbol)}`);
      }
    }
    expect(problems).toEqual([]);
    expect(absent).toBeGreaterThan(4000);
    // find interned nothing.
    expect(table.size).toBe(FIRST_NODE + ids.length);
  });
});

/**
 * sacreBLEU's chrF statistics of one hypothesis against one reference (chrf.py, written again here
 * from its definition): character n-grams of orders 1..6 over code points with whitespace removed
 * (this file's strings hold no whitespace but ASCII spaces); per order [hypothesis n-grams (0 when
 * the reference has no n-gram of that order), reference n-grams, matches = sum over n-grams of the
 * smaller count].
 */
function chrfRow(hypothesis: string, reference: string, orders = 6): number[] {
  const points = (s: string) => [...s].filter((c) => c !== ' ');
  const counts = (p: string[], n: number) => {
    const m = new Map<string, number>();
    // Code points joined by a space (removed above), so that no two n-grams share a key.
    for (let i = 0; i + n <= p.length; i++) {
      const g = p.slice(i, i + n).join(' ');
      m.set(g, (m.get(g) ?? 0) + 1);
    }
    return m;
  };
  const h = points(hypothesis);
  const r = points(reference);
  const row: number[] = [];
  for (let n = 1; n <= orders; n++) {
    const hc = counts(h, n);
    const rc = counts(r, n);
    let hypTotal = 0;
    let match = 0;
    for (const [g, c] of hc) {
      hypTotal += c;
      match += Math.min(c, rc.get(g) ?? 0);
    }
    let refTotal = 0;
    for (const c of rc.values()) refTotal += c;
    row.push(rc.size > 0 ? hypTotal : 0, refTotal, match);
  }
  return row;
}

describe('chrF with lowercase on references that lengthen when lower-cased', () => {
  it("'İ' (one unit, two code points lower-cased) past the tables' pre-size: statistics equal a string-keyed count", () => {
    // Three segments of M letters each, every one after an 'İ': 'İ' + a CJK letter of its own
    // (no case; U+4E00 on, a different run per segment). Lower-cased, 'İ' is 'i' + U+0307, so a
    // reference of 2M units has 3M code points. Every n-gram with a letter in it is distinct (only
    // 'i', U+0307 and their bigram are shared), so the references hold 45M - 42 distinct n-grams of
    // orders 1..6, past the 36M (units x orders) the table is sized for: 36 x 455 = 16,380, which
    // NgramIds rounds up to room for 16,384 ids, and 20,433 make it grow. The id arrays (also 36M
    // long) are reallocated at the third reference, after the first two's n-grams are in them: those
    // hold 2 x (15M - 12) distinct n-grams, and the third reference needs room for its 18M - 15.
    const M = 455;
    const letter = (s: number, k: number) => String.fromCharCode(0x4e00 + s * M + k);
    const references: string[] = [];
    const hypotheses: string[] = [];
    for (let s = 0; s < 3; s++) {
      let ref = '';
      let hyp = '';
      for (let k = 0; k < M; k++) {
        ref += `İ${letter(s, k)}`;
        // The hypothesis: some 'İ' as 'I' (lower-cased 'i' with no dot), some letters from the next
        // segment's reference (in the table, not in this reference), a space now and then (removed).
        hyp += (k % 5 === 2 ? 'I' : 'İ') + (k % 7 === 3 ? letter((s + 1) % 3, (k * 31) % M) : letter(s, k));
        if (k % 50 === 49) hyp += ' ';
      }
      references.push(ref);
      hypotheses.push(hyp);
    }
    // The premise: lower-casing lengthens the references past the bound the tables start from.
    const units = references.reduce((n, r) => n + r.length, 0);
    const distinct = new Set<string>();
    for (const ref of references) {
      const p = [...ref.toLowerCase()];
      for (let n = 1; n <= 6; n++) for (let i = 0; i + n <= p.length; i++) distinct.add(`${n}:${p.slice(i, i + n).join(' ')}`);
    }
    expect(references[0].toLowerCase().length).toBe(3 * M);
    expect(distinct.size).toBe(45 * M - 42);
    expect(distinct.size).toBeGreaterThan(units * 6);

    const refs = new ChrfReferences([references], { lowercase: true });
    const rows = Array.from(refs.segmentStats(hypotheses));
    const expected = hypotheses.flatMap((h, i) => chrfRow(h.toLowerCase(), references[i].toLowerCase()));
    expect(rows).toEqual(expected);
    // Not trivially equal: every segment matches some n-grams of every order and misses others.
    for (let o = 0; o < rows.length; o += 3) {
      expect(rows[o + 2]).toBeGreaterThan(0);
      expect(rows[o + 2]).toBeLessThan(rows[o]);
    }
    // The references scored again give every n-gram of theirs matched.
    const self = Array.from(refs.segmentStats(references));
    expect(self).toEqual(references.flatMap((r) => chrfRow(r.toLowerCase(), r.toLowerCase())));
  });
});
