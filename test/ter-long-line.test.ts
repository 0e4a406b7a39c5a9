import { describe, expect, it } from 'vitest';
import { corpusTer, tercomTokens, translationEditRate, type TerWork } from '../src/metrics/text/ter.js';
import { mulberry32 } from './helpers/mulberry32.js';

// TER on one long line: sacreBLEU bounds its shift search (blocks of at most 10 words moved at most
// 50 positions, 1,000 shift candidates a segment, an edit distance within a beam of 25 around the
// diagonal), and so do we, with the same choices: the edits below are sacreBLEU 2.x's on the same
// lines. Where sacreBLEU still builds and copies full rows of the edit-distance matrix for every
// hypothesis word (quadratic in the line: 241 s on the 2,000-word line here), we keep only the
// beam's cells of each row, so the work is linear in the line, and bounded by arithmetic below.

/**
 * A reference of `n` words from 300 and a hypothesis made from it: blocks of 1-6 words moved up
 * to 30 positions, then 8% of words replaced, 2% dropped, 2% inserted. Seeded (mulberry32).
 */
function longLinePair(n: number, seed: number): { hyp: string; ref: string } {
  const rand = mulberry32(seed);
  const vocab = Array.from({ length: 300 }, (_, i) => `w${i}`);
  const ref = Array.from({ length: n }, () => vocab[Math.floor(rand() * vocab.length)]);
  const hyp = [...ref];
  for (let k = 0; k < n / 20; k++) {
    const len = 1 + Math.floor(rand() * 6);
    const from = Math.floor(rand() * (hyp.length - len));
    const block = hyp.splice(from, len);
    const to = Math.max(0, Math.min(hyp.length, from + Math.floor(rand() * 60) - 30));
    hyp.splice(to, 0, ...block);
  }
  for (let i = 0; i < hyp.length; i++) {
    const r = rand();
    if (r < 0.08) hyp[i] = vocab[Math.floor(rand() * vocab.length)];
    else if (r < 0.1) hyp.splice(i, 1);
    else if (r < 0.12) hyp.splice(i, 0, vocab[Math.floor(rand() * vocab.length)]);
  }
  return { hyp: hyp.join(' '), ref: ref.join(' ') };
}

// sacreBLEU 2.x (../shared/tools/sacrebleu) on longLinePair(n, 7 + n):
//   TER().corpus_score([hyp], [[ref]]).num_edits
const SACREBLEU_EDITS: [n: number, edits: number][] = [
  [100, 21],
  [500, 170],
  [1000, 359],
];

/** Word ids of both lines, as TerReferences gives them (one vocabulary). */
function ids(hyp: string, ref: string): [Int32Array, Int32Array] {
  const vocab = new Map<string, number>();
  const of = (line: string) => Int32Array.from(tercomTokens(line), (w) => vocab.get(w) ?? vocab.set(w, vocab.size).get(w)!);
  return [of(hyp), of(ref)];
}

describe('TER on one long line: sacreBLEU\'s bounds and edits, linear work', () => {
  for (const [n, edits] of SACREBLEU_EDITS) {
    it(`${n} words: ${edits} edits, as sacreBLEU counts them; the matrix cells computed within the beam's linear bound`, () => {
      const { hyp, ref } = longLinePair(n, 7 + n);
      expect(corpusTer([hyp], [[ref]]).numEdits).toBe(edits);
      const [h, r] = ids(hyp, ref);
      const work: TerWork = { cells: 0 };
      expect(translationEditRate(h, r, work).edits).toBe(edits);
      // Each distance computes at most 2 x 25 cells of each hypothesis row but the last, which
      // spans the reference (the beam is 25 wide on each side here: the lengths are within 2x).
      // A search calls it once per candidate (at most 1,000) plus once per shift search (at most one
      // more than the shifts applied, each of which had a candidate) and once at the end.
      const perDistance = 2 * 25 * h.length + r.length + 1;
      expect(work.cells).toBeGreaterThan(0);
      expect(work.cells).toBeLessThanOrEqual((1000 + 1001 + 1) * perDistance);
    });
  }
});
