// bench:nli's length twins (scripts/lib/length-twins.ts): every later pass and the untimed pass
// get other pairs of exactly pass 1's token lengths, so every pass cuts the same batch shapes,
// with no text a timed pair has (a tokenizer memo or the pair cache would answer it).
import { describe, expect, it } from 'vitest';
import { lengthTwins } from '../scripts/lib/length-twins.js';
import type { NliPair } from '../src/nli/types.js';

/** A fake length: the words of both sides (the bench passes the real tokenizer's count). */
const words = (p: NliPair) => `${p.premise} ${p.hypothesis}`.split(' ').length;
const pair = (premise: string, hypothesis: string): NliPair => ({ premise, hypothesis });

// Premises of 1-4 words, three of each length, each with hypotheses of 1-3 words: lengths 2-7.
const pool: NliPair[] = [];
for (let n = 1; n <= 4; n++) {
  for (let v = 0; v < 3; v++) {
    const premise = Array.from({ length: n }, (_, w) => `p${n}.${v}w${w}`).join(' ');
    for (let h = 1; h <= 3; h++) pool.push(pair(premise, Array.from({ length: h }, (_, w) => `h${n}.${v}.${h}w${w}`).join(' ')));
  }
}
const texts = (ps: NliPair[]) => ps.flatMap((p) => [p.premise, p.hypothesis]);

describe('lengthTwins', () => {
  it('gives each set the lengths of the model set, pair for pair, with no text twice', () => {
    const like = [pool[0], pool[13], pool[25]]; // lengths 2, 4, 5
    const sets = lengthTwins(pool, like, 2, words);
    expect(sets).toHaveLength(2);
    for (const set of sets) expect(set.map(words)).toEqual(like.map(words));
    const all = texts([...like, ...sets.flat()]);
    expect(new Set(all).size).toBe(all.length);
  });

  it('leaves out the texts it is told to avoid, and gives the same sets on every call', () => {
    const like = [pool[1]]; // 1-word premise + 2 words
    const avoid = [pool[4]]; // the second 1-word premise with 2 words: else the first twin
    const [[twin]] = lengthTwins(pool, like, 1, words, avoid);
    expect(words(twin)).toBe(3);
    expect(texts([twin]).some((t) => texts([...like, ...avoid]).includes(t))).toBe(false);
    expect(twin).toEqual(pool[7]); // the third 1-word premise's 2-word hypothesis
    expect(lengthTwins(pool, like, 1, words, avoid)).toEqual([[twin]]);
    // Reading from another start takes another pair of that length.
    expect(lengthTwins(pool, like, 1, words, avoid, 9)[0][0]).toEqual(pool[9]); // a 2-word premise + 1 word
  });

  it('names the lengths it could not match when the pool runs short', () => {
    // Length 2 (a 1-word premise + a 1-word hypothesis) exists three times; the model pair is one.
    expect(() => lengthTwins(pool, [pool[0]], 3, words)).toThrow(/1 of 2 tokens missing/);
  });
});
