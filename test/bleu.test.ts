// Expected values were derived by hand from sacreBLEU 2.x's rules (tokenizer_13a.py,
// tokenizer_re.py, metrics/bleu.py): n-gram counts are worked out in the comments and the score is
// the formula bp * exp(mean(log p_n)) written out, not our own output pasted back.
import { describe, expect, it } from 'vitest';
import { closestRefLength, corpusBleu, tokenize13a } from '../src/metrics/text/bleu.js';

describe('tokenize13a', () => {
  it('pads ! and splits a comma that is not between digits', () => {
    expect(tokenize13a('Hello, world!')).toBe('Hello , world !');
  });

  it('keeps 5,300.50 together but splits the final period', () => {
    expect(tokenize13a('It costs 5,300.50 dollars.')).toBe('It costs 5,300.50 dollars .');
  });

  it("leaves apostrophes and intra-word hyphens, splits a hyphen after a digit", () => {
    expect(tokenize13a("don't e-mail 1-2")).toBe("don't e-mail 1 - 2");
  });

  it('unescapes &quot; &amp; &lt; &gt; and then pads them', () => {
    expect(tokenize13a('&quot;hi&quot; &amp; <b>')).toBe('" hi " & < b >');
  });

  it('pads underscores and braces (they are in the [-` and {-~ ranges)', () => {
    expect(tokenize13a('a_b {c}')).toBe('a _ b { c }');
  });

  it('keeps a period before a digit and a comma after one only when a digit follows', () => {
    expect(tokenize13a('3.5, x')).toBe('3.5 , x');
  });

  it('does not split non-ASCII punctuation', () => {
    expect(tokenize13a('weird» ok…')).toBe('weird» ok…');
  });

  it('drops <skipped> and joins lines', () => {
    expect(tokenize13a('a <skipped> b\nc')).toBe('a b c');
  });
});

describe('corpusBleu (sacreBLEU defaults)', () => {
  it('is 100 for an identical segment, with the sacreBLEU signature', () => {
    const r = corpusBleu(['the cat sat on the mat'], [['the cat sat on the mat']]);
    expect(r.score).toBeCloseTo(100, 10);
    expect(r.counts).toEqual([6, 5, 4, 3]);
    expect(r.totals).toEqual([6, 5, 4, 3]);
    expect(r.bp).toBe(1);
    expect(r.signature).toBe('nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x');
  });

  it('clips counts and takes the geometric mean of the precisions', () => {
    // hyp: the cat sat on the mat / ref: the cat sat on a mat
    // 1-grams: the(min 2,1)+cat+sat+on+mat = 5/6; 2-grams: the cat, cat sat, sat on = 3/5
    // 3-grams: the cat sat, cat sat on = 2/4; 4-grams: the cat sat on = 1/4-1 = 1/3
    const r = corpusBleu(['the cat sat on the mat'], [['the cat sat on a mat']]);
    expect(r.counts).toEqual([5, 3, 2, 1]);
    expect(r.totals).toEqual([6, 5, 4, 3]);
    const expected = Math.exp((Math.log(500 / 6) + Math.log(60) + Math.log(50) + Math.log(100 / 3)) / 4);
    expect(r.score).toBeCloseTo(expected, 10);
    expect(r.score).toBeCloseTo(53.7285, 3);
  });

  it('tokenizes with 13a before matching', () => {
    // "Hello, world!" and "Hello , world !" are the same four 13a tokens
    expect(corpusBleu(['Hello, world!'], [['Hello , world !']]).score).toBeCloseTo(100, 10);
  });

  it('smooths a zero n-gram count exponentially but scores 0 when an order has no n-grams at all', () => {
    // hyp "a b c" vs "a b d": p1 = 2/3, p2 = 1/2, p3: 0 matches -> 100 / (2 * 1) = 50,
    // p4: no 4-grams in the hypothesis -> loop stops, p4 stays 0 -> log floored -> score 0
    const r = corpusBleu(['a b c'], [['a b d']]);
    expect(r.precisions[0]).toBeCloseTo(200 / 3, 10);
    expect(r.precisions[1]).toBeCloseTo(50, 10);
    expect(r.precisions[2]).toBeCloseTo(50, 10);
    expect(r.precisions[3]).toBe(0);
    expect(r.score).toBe(0);
  });

  it('uses the maximum count over references for clipping and doubles the smoothing per zero order', () => {
    // hyp "the the the the"; refs "the cat" and "the the dog": max count of "the" = 2 -> 2/4,
    // "the the" appears once in ref 2 -> 1/3; 3-grams 0/2 -> 100/(2*2) = 25; 4-grams 0/1 -> 100/(4*1) = 25
    // lengths: hyp 4, refs 2 and 3 -> closest 3 -> no brevity penalty
    const r = corpusBleu(['the the the the'], [['the cat'], ['the the dog']]);
    expect(r.counts).toEqual([2, 1, 0, 0]);
    expect(r.refLen).toBe(3);
    const expected = Math.exp((Math.log(50) + Math.log(100 / 3) + Math.log(25) + Math.log(25)) / 4);
    expect(r.score).toBeCloseTo(expected, 10);
    expect(r.signature.startsWith('nrefs:2|')).toBe(true);
  });

  it('applies the brevity penalty against the closest reference length', () => {
    // hyp 4 tokens; refs of 6 and 5 tokens -> closest 5 -> bp = exp(1 - 5/4); all n-grams match
    const r = corpusBleu(['a b c d'], [['a b c d e f'], ['a b c d e']]);
    expect(r.refLen).toBe(5);
    expect(r.bp).toBeCloseTo(Math.exp(-0.25), 12);
    expect(r.score).toBeCloseTo(100 * Math.exp(-0.25), 10);
  });

  it('breaks a tie in reference length towards the shorter reference', () => {
    expect(closestRefLength(4, [5, 3])).toBe(3);
    const r = corpusBleu(['a b c d'], [['a b c d e'], ['a b c']]);
    expect(r.refLen).toBe(3);
    expect(r.bp).toBe(1);
    expect(r.score).toBeCloseTo(100, 10);
  });

  it('aggregates statistics over the corpus before computing the score', () => {
    // segment 1 identical (counts = totals = [4,3,2,1]); segment 2 "x y" vs "z y": 1-grams 1/2, 2-grams 0/1
    // corpus: counts [5,3,2,1], totals [6,4,2,1]; lengths 6 vs 6
    const r = corpusBleu(['a b c d', 'x y'], [['a b c d', 'z y']]);
    expect(r.counts).toEqual([5, 3, 2, 1]);
    expect(r.totals).toEqual([6, 4, 2, 1]);
    const expected = Math.exp((Math.log(500 / 6) + Math.log(75) + Math.log(100) + Math.log(100)) / 4);
    expect(r.score).toBeCloseTo(expected, 10);
  });

  it('is 0 with no matches, and the brevity penalty is 0 for an empty system output', () => {
    expect(corpusBleu(['p q r s'], [['a b c d']]).score).toBe(0);
    const empty = corpusBleu([''], [['a b']]);
    expect(empty.score).toBe(0);
    expect(empty.bp).toBe(0);
  });

  it('can lower-case (signature says case:lc)', () => {
    const r = corpusBleu(['THE CAT'], [['the cat']], { lowercase: true });
    expect(r.counts[0]).toBe(2);
    expect(r.signature).toContain('case:lc');
  });

  it('rejects reference streams of a different length than the hypotheses', () => {
    expect(() => corpusBleu(['a', 'b'], [['a']])).toThrow(/reference stream 0/);
  });
});
