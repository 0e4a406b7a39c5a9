import { describe, expect, it } from 'vitest';
import { PairCache } from '../../src/nli/pair-cache.js';
import { BoundedMemo } from '../../src/nli/bounded-memo.js';

// serve's pair cache within --max-cache-bytes (issue 42: 1.4 KB a pair, never dropped, a server
// asked new pairs all day ran out of memory). Memory-only caches: no file is written.
const probs = (i: number) => ({ entailment: i / 1e6, neutral: 0.5, contradiction: 0.5 - i / 1e6 });
// Texts of one length (numbers padded), so the cache's size times one pair's bytes is what it holds.
const pair = (i: number) => ({ premise: `premise of turn ${String(i >> 4).padStart(6, '0')}`, hypothesis: `hypothesis number ${String(i).padStart(6, '0')}` });

describe('PairCache byte budget', () => {
  it('holds at most maxBytes of pairs however many are added, and counts every pair it drops', () => {
    const one = PairCache.entryBytes(pair(5000).premise, pair(5000).hypothesis);
    const maxBytes = 1000 * one;
    const cache = new PairCache('m', undefined, maxBytes);
    let most = 0;
    for (let i = 0; i < 20_000; i++) {
      const { premise, hypothesis } = pair(i);
      cache.set(premise, hypothesis, probs(i));
      most = Math.max(most, cache.size);
    }
    expect(most * one).toBeLessThanOrEqual(maxBytes);
    expect(cache.size).toBeGreaterThan(0);
    expect(cache.evictions + cache.size).toBe(20_000);
    // The newest pairs are there; the first are gone.
    expect(cache.get(pair(19_999).premise, pair(19_999).hypothesis)).toEqual(probs(19_999));
    expect(cache.get(pair(0).premise, pair(0).hypothesis)).toBeUndefined();
  });

  it('a pair read while in an older generation survives the drop of that generation (least recently used go first)', () => {
    const one = PairCache.entryBytes(pair(100).premise, pair(100).hypothesis);
    const K = PairCache.GENERATIONS;
    // Generations of 100 pairs each.
    const cache = new PairCache('m', undefined, K * 100 * one);
    const add = (from: number, to: number) => {
      for (let i = from; i < to; i++) cache.set(pair(i).premise, pair(i).hypothesis, probs(i));
    };
    add(100, 100 + (K - 1) * 100 + 50); // 100..199 is now the oldest of K generations
    expect(cache.evictions).toBe(0);
    expect(cache.get(pair(150).premise, pair(150).hypothesis)).toEqual(probs(150)); // read: moves to the youngest
    add(100 + (K - 1) * 100 + 50, 100 + K * 100 + 10); // one more generation begun: the oldest (100..199 but 150) goes
    expect(cache.evictions).toBe(99);
    expect(cache.get(pair(150).premise, pair(150).hypothesis)).toEqual(probs(150));
    expect(cache.get(pair(151).premise, pair(151).hypothesis)).toBeUndefined();
    expect(cache.get(pair(200).premise, pair(200).hypothesis)).toEqual(probs(200));
  });

  it('once full, what it holds stays within one generation of the budget (a drop frees an eighth, not half)', () => {
    const one = PairCache.entryBytes(pair(5000).premise, pair(5000).hypothesis);
    const maxBytes = 800 * one;
    const cache = new PairCache('m', undefined, maxBytes);
    let least = Infinity;
    for (let i = 0; i < 10_000; i++) {
      cache.set(pair(i).premise, pair(i).hypothesis, probs(i));
      if (i >= 800) least = Math.min(least, cache.size);
    }
    // Full from the 800th pair on; a drop leaves K - 1 generations of 100 pairs and the new pair.
    expect(least).toBe(800 - 800 / PairCache.GENERATIONS + 1);
  });

  it('unbounded by default: nothing is dropped', () => {
    const cache = new PairCache('m');
    for (let i = 0; i < 5000; i++) cache.set(pair(i).premise, pair(i).hypothesis, probs(i));
    expect(cache.size).toBe(5000);
    expect(cache.evictions).toBe(0);
  });
});

describe('BoundedMemo (the tokenizer memos) byte budget', () => {
  it('drops its oldest quarter when full, never all of it, and keeps the newest texts', () => {
    const ids = new Int32Array(4);
    const text = (i: number) => `text number ${String(i).padStart(6, '0')}`;
    const one = BoundedMemo.entryBytes(text(0), ids);
    const memo = new BoundedMemo(400 * one);
    let least = Infinity;
    let most = 0;
    for (let i = 0; i < 5000; i++) {
      memo.set(text(i), ids);
      most = Math.max(most, memo.size);
      if (i >= 400) least = Math.min(least, memo.size);
    }
    expect(most).toBe(400);
    // A drop leaves 3 of 4 generations of 100 texts and the new one.
    expect(least).toBe(400 - 400 / BoundedMemo.GENERATIONS + 1);
    expect(memo.get(text(4999))).toBe(ids);
    expect(memo.get(text(0))).toBeUndefined();
  });
});
