import { describe, expect, it } from 'vitest';
import { corpusChrf } from '../../src/metrics/text/chrf.js';

// sacreBLEU's chrF counts the characters of a Python str, which are code points: it removes
// whitespace with ''.join(line.split()) and never pairs surrogates that were not a pair in the
// line. Lone surrogates reach us through the library API or a JSON \u escape (a file decoded as
// UTF-8 gives U+FFFD instead). Statistics are [hypothesis, reference, matching] n-grams per order;
// an order the reference has no n-gram of counts nothing for the hypothesis either.

/** `orders` orders of empty statistics. */
const none = (orders: number): number[] => new Array<number>(3 * orders).fill(0);

describe('chrF reads code points as Python does', () => {
  it('a lone high surrogate, whitespace, a lone low surrogate stay two characters, not one astral character', () => {
    // sacreBLEU: two unigrams against one, none matching, and no reference bigram: score 0.
    // Pairing after removing the space gave one unigram matching U+1F600: [1, 1, 1] and 100.
    const r = corpusChrf(['\uD83D \uDE00'], [['\u{1F600}']]);
    expect(r.stats).toEqual([2, 1, 0, ...none(5)]);
    expect(r.score).toBe(0);
  });

  it('the same with chrF++: the character orders and the words agree (two words, no match)', () => {
    const r = corpusChrf(['\uD83D\t\uDE00'], [['\u{1F600}']], { wordOrder: 2 });
    expect(r.stats).toEqual([2, 1, 0, ...none(5), 2, 1, 0, ...none(1)]);
    expect(r.score).toBe(0);
  });

  it('lone surrogates with no whitespace between count one code point each, a low before a high included', () => {
    // Hypothesis D83D a DE00, reference a DE00 D83D (a low then a high surrogate is no pair).
    const r = corpusChrf(['\uD83Da\uDE00'], [['a\uDE00\uD83D']]);
    expect(r.stats).toEqual([3, 3, 3, 2, 2, 1, 1, 1, 0, ...none(3)]);
  });

  it('a real pair stays one character when whitespace around it goes', () => {
    const r = corpusChrf([' \u{1F600}\t\u{1F600} '], [['\u{1F600}\u{1F600}']]);
    expect(r.stats).toEqual([2, 2, 2, 1, 1, 1, ...none(4)]);
    expect(r.score).toBe(100);
  });

  it('with whitespace kept, the space between lone surrogates is a third character', () => {
    const r = corpusChrf(['\uD83D \uDE00'], [['\u{1F600}']], { whitespace: true });
    expect(r.stats).toEqual([3, 1, 0, ...none(5)]);
  });
});
