/**
 * chrF and chrF++ as sacreBLEU 2.x computes them (`CHRF`, `corpus_chrf`, `sentence_chrf`): the
 * F-score of character n-grams (orders 1..charOrder, whitespace removed unless `whitespace`) and,
 * for chrF++, word n-grams (orders 1..wordOrder over words with one leading or trailing ASCII
 * punctuation mark split off), with recall weighted beta times precision. Per segment the
 * reference with the best F-score is kept; the corpus score is the F-score of the summed
 * statistics. By default the precision and recall are averaged over the orders that have both
 * hypothesis and reference n-grams (sacreBLEU's "effective order"); `epsSmoothing` averages
 * per-order F-scores instead, as chrF++.py, NLTK and Moses do.
 *
 * Characters are Unicode code points (Python's str), not UTF-16 units, and whitespace is Python's.
 */
import { formatFields, type SignatureField } from '../../util/signature.js';
import { columnSums } from '../significance/paired.js';
import type { StatMetric } from '../significance/types.js';
import { isPyWhitespace, pySplit } from './py-string.js';
import { checkStreams, referenceSegments } from './references.js';

export interface ChrfOptions {
  /** Character n-gram order (default 6). */
  charOrder?: number;
  /** Word n-gram order (default 0; 2 is chrF++). */
  wordOrder?: number;
  /** Recall weight (default 2). */
  beta?: number;
  /** Lower-case hypotheses and references. */
  lowercase?: boolean;
  /** Keep whitespace inside character n-grams. */
  whitespace?: boolean;
  /** chrF++.py-style epsilon smoothing instead of the effective order. */
  epsSmoothing?: boolean;
}

export interface ChrfResult {
  /** The metric's name as sacreBLEU prints it: chrF2, chrF2++ (one + per word order). */
  name: string;
  /** 0..100, unrounded. */
  score: number;
  /** Summed statistics: per order (characters first, then words) [hypothesis, reference, matching] n-grams. */
  stats: number[];
  /** sacreBLEU's signature, e.g. `nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.x`. */
  signature: string;
}

interface Resolved {
  charOrder: number;
  wordOrder: number;
  beta: number;
  lowercase: boolean;
  whitespace: boolean;
  epsSmoothing: boolean;
}

/** sacreBLEU's chrF defaults (chrF2: 6 character orders, no word orders, beta 2). */
const DEFAULTS: Resolved = { charOrder: 6, wordOrder: 0, beta: 2, lowercase: false, whitespace: false, epsSmoothing: false };

function resolve(opts: ChrfOptions): Resolved {
  const r = {
    charOrder: opts.charOrder ?? DEFAULTS.charOrder,
    wordOrder: opts.wordOrder ?? DEFAULTS.wordOrder,
    beta: opts.beta ?? DEFAULTS.beta,
    lowercase: opts.lowercase === true,
    whitespace: opts.whitespace === true,
    epsSmoothing: opts.epsSmoothing === true,
  };
  for (const k of ['charOrder', 'wordOrder'] as const) {
    if (!Number.isInteger(r[k]) || r[k] < 0) throw new Error(`chrF: ${k} must be a non-negative integer, not ${r[k]}`);
  }
  if (r.charOrder + r.wordOrder === 0) throw new Error('chrF: charOrder and wordOrder are both 0');
  if (!Number.isFinite(r.beta) || r.beta < 0) throw new Error(`chrF: beta must be a non-negative number, not ${r.beta}`);
  return r;
}

/** The width of a segment's statistics row: 3 numbers per order. */
export function chrfStatsWidth(opts: ChrfOptions = {}): number {
  const r = resolve(opts);
  return 3 * (r.charOrder + r.wordOrder);
}

/** chrF2, chrF2++, chrF3+ ... */
export function chrfName(opts: ChrfOptions = {}): string {
  const r = resolve(opts);
  return `chrF${r.beta}${'+'.repeat(r.wordOrder)}`;
}

export function chrfSignature(nrefs: number, opts: ChrfOptions = {}): string {
  return formatFields(chrfSignatureFields(nrefs, opts));
}

/** sacreBLEU's chrF signature fields in its order: nrefs, case, eff, nc, nw, space, version. */
export function chrfSignatureFields(nrefs: number, opts: ChrfOptions = {}): SignatureField[] {
  const r = resolve(opts);
  return [
    ['nrefs', nrefs < 0 ? 'var' : nrefs],
    ['case', r.lowercase ? 'lc' : 'mixed'],
    ['eff', r.epsSmoothing ? 'no' : 'yes'],
    ['nc', r.charOrder],
    ['nw', r.wordOrder],
    ['space', r.whitespace ? 'yes' : 'no'],
    ['version', '2.x'],
  ];
}

const EPS = 1e-16;

/**
 * The F-score of one statistics row (at `offset`, 3 * orders numbers), with sacreBLEU's arithmetic
 * in its order, so that scores agree to the last bit where the operations are the same.
 */
export function makeChrfScorer(opts: ChrfOptions = {}, float32 = false): (stats: ArrayLike<number>, offset?: number) => number {
  const r = resolve(opts);
  // sacreBLEU's bootstrap sums are NumPy float32 scalars, whose ratio is a float32 (NumPy 1.x).
  const ratio = float32 ? (a: number, b: number) => Math.fround(a / b) : (a: number, b: number) => a / b;
  const orders = r.charOrder + r.wordOrder;
  const factor = r.beta ** 2;
  return (stats, offset = 0) => {
    let score = 0;
    let effectiveOrder = 0;
    let avgPrec = 0;
    let avgRec = 0;
    for (let i = 0; i < orders; i++) {
      const nHyp = stats[offset + 3 * i];
      const nRef = stats[offset + 3 * i + 1];
      const nMatch = stats[offset + 3 * i + 2];
      const prec = nHyp > 0 ? ratio(nMatch, nHyp) : EPS;
      const rec = nRef > 0 ? ratio(nMatch, nRef) : EPS;
      const denom = factor * prec + rec;
      score += denom > 0 ? ((1 + factor) * prec * rec) / denom : EPS;
      if (nHyp > 0 && nRef > 0) {
        avgPrec += prec;
        avgRec += rec;
        effectiveOrder++;
      }
    }
    if (r.epsSmoothing) return (100 * score) / orders;
    if (effectiveOrder === 0) {
      avgPrec = 0;
      avgRec = 0;
    } else {
      avgPrec /= effectiveOrder;
      avgRec /= effectiveOrder;
    }
    if (avgPrec + avgRec === 0) return 0;
    let f = (1 + factor) * avgPrec * avgRec;
    f /= factor * avgPrec + avgRec;
    return 100 * f;
  };
}

/** The chrF score of summed statistics. */
export function chrfFromStats(stats: ArrayLike<number>, opts: ChrfOptions = {}): number {
  return makeChrfScorer(opts)(stats, 0);
}

// Python's string.punctuation: what chrF++ splits off a word's end (or else its start).
const PUNCT = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');

/** Code-point offsets of `s` (offsets[k]: where code point k starts; one more at the end), or null when every code point is one unit. */
function codePointOffsets(s: string): Int32Array | null {
  let surrogates = false;
  for (let i = 0; i < s.length && !surrogates; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) surrogates = true;
  }
  if (!surrogates) return null;
  const out: number[] = [];
  for (let i = 0; i < s.length; ) {
    out.push(i);
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  out.push(s.length);
  return Int32Array.from(out);
}

/** The line without Python whitespace (`''.join(line.split())`). */
function removeWhitespace(s: string): string {
  let i = 0;
  while (i < s.length && !isPyWhitespace(s.charCodeAt(i))) i++;
  if (i === s.length) return s;
  let out = s.slice(0, i);
  for (; i < s.length; i++) if (!isPyWhitespace(s.charCodeAt(i))) out += s[i];
  return out;
}

/** Character n-gram counts of orders 1..maxOrder (index n - 1). */
function charNgrams(line: string, maxOrder: number, whitespace: boolean): Map<string, number>[] {
  const s = whitespace ? line : removeWhitespace(line);
  const offsets = codePointOffsets(s);
  const len = offsets ? offsets.length - 1 : s.length;
  const out: Map<string, number>[] = [];
  for (let n = 1; n <= maxOrder; n++) {
    const m = new Map<string, number>();
    for (let k = 0; k + n <= len; k++) {
      const g = offsets ? s.slice(offsets[k], offsets[k + n]) : s.slice(k, k + n);
      m.set(g, (m.get(g) ?? 0) + 1);
    }
    out.push(m);
  }
  return out;
}

/** The number of code points of a string. */
function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!(c >= 0xdc00 && c <= 0xdfff && i > 0 && (s.charCodeAt(i - 1) & 0xfc00) === 0xd800)) n++;
  }
  return n;
}

/**
 * chrF++'s words: split on whitespace; a word of two or more characters loses a punctuation mark
 * at its end (kept as a word of its own), or else at its start. '(hi)' gives '(hi' and ')', as in
 * sacreBLEU (its issue #124).
 */
export function chrfWords(line: string): string[] {
  const out: string[] = [];
  for (const w of pySplit(line)) {
    if (codePointLength(w) === 1) out.push(w);
    else if (PUNCT.has(w[w.length - 1])) out.push(w.slice(0, -1), w[w.length - 1]);
    else if (PUNCT.has(w[0])) out.push(w[0], w.slice(1));
    else out.push(w);
  }
  return out;
}

function wordNgrams(words: readonly string[], n: number): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i + n <= words.length; i++) {
    const g = n === 1 ? words[i] : words.slice(i, i + n).join(' ');
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** A reference's n-grams per order, with their totals. */
interface RefNgrams {
  maps: Map<string, number>[];
  totals: number[];
}

/**
 * Reference streams turned into n-gram counts once, so that many systems are scored against them
 * (sacreBLEU's reference cache). `references[k][i]` is the k-th reference for segment i; `null`
 * gives a segment fewer references.
 */
export class ChrfReferences {
  readonly segments: number;
  /** References per segment, or -1 when it varies (`nrefs:var`). */
  readonly nrefs: number;
  readonly signature: string;
  readonly name: string;
  /** Statistics per segment (3 per order). */
  readonly width: number;
  private readonly opts: Resolved;
  private readonly refs: RefNgrams[][];
  private readonly fScore: (stats: ArrayLike<number>, offset?: number) => number;

  constructor(references: ReadonlyArray<ReadonlyArray<string | null>>, opts: ChrfOptions = {}) {
    this.opts = resolve(opts);
    const refs = referenceSegments(references, 'chrF');
    this.segments = refs.segments;
    this.refs = refs.lines.map((lines) =>
      lines.map((ref) => {
        const maps = this.ngrams(ref);
        return { maps, totals: maps.map((m) => sumValues(m)) };
      }),
    );
    this.nrefs = refs.nrefs;
    this.signature = chrfSignature(this.nrefs, opts);
    this.name = chrfName(opts);
    this.width = chrfStatsWidth(this.opts);
    this.fScore = makeChrfScorer(opts);
  }

  private ngrams(line: string): Map<string, number>[] {
    const s = this.opts.lowercase ? line.toLowerCase() : line;
    const maps = charNgrams(s, this.opts.charOrder, this.opts.whitespace);
    if (this.opts.wordOrder > 0) {
      const words = chrfWords(s);
      for (let n = 1; n <= this.opts.wordOrder; n++) maps.push(wordNgrams(words, n));
    }
    return maps;
  }

  /** One row of `width` statistics per hypothesis: the best-scoring reference's. */
  segmentStats(hypotheses: readonly string[]): Int32Array {
    if (hypotheses.length !== this.segments) throw new Error(`chrF: ${hypotheses.length} hypotheses for ${this.segments} reference segments`);
    const w = this.width;
    const out = new Int32Array(hypotheses.length * w);
    const row = new Int32Array(w);
    for (let i = 0; i < hypotheses.length; i++) {
      const hyp = this.ngrams(hypotheses[i]);
      const hypTotals = hyp.map((m) => sumValues(m));
      let best = -1;
      for (const ref of this.refs[i]) {
        for (let o = 0; o < hyp.length; o++) {
          const refMap = ref.maps[o];
          let match = 0;
          if (refMap.size > 0) {
            for (const [g, c] of hyp[o]) {
              const rc = refMap.get(g);
              if (rc !== undefined) match += c < rc ? c : rc;
            }
          }
          // No reference n-gram of this order: the hypothesis' do not count either.
          row[3 * o] = refMap.size > 0 ? hypTotals[o] : 0;
          row[3 * o + 1] = ref.totals[o];
          row[3 * o + 2] = match;
        }
        const f = this.fScore(row, 0);
        // The first reference wins ties (sacreBLEU keeps a later one only if strictly better).
        if (f > best) {
          best = f;
          out.set(row, i * w);
        }
      }
    }
    return out;
  }

  /** Corpus chrF of `hypotheses` against these references. */
  score(hypotheses: readonly string[]): ChrfResult {
    return chrfFromSegmentStats(this.segmentStats(hypotheses), this.opts, this.signature);
  }
}

function sumValues(m: Map<string, number>): number {
  let s = 0;
  for (const v of m.values()) s += v;
  return s;
}

// Corpus statistics are the column sums the paired tests use, as a plain array for the result.
function sumRows(stats: ArrayLike<number>, width: number): number[] {
  return Array.from(columnSums(stats, width));
}

/** Corpus chrF from per-segment rows (as `ChrfReferences.segmentStats` returns them). */
export function chrfFromSegmentStats(stats: ArrayLike<number>, opts: ChrfOptions = {}, signature = chrfSignature(1, opts)): ChrfResult {
  const sums = sumRows(stats, chrfStatsWidth(opts));
  return { name: chrfName(opts), score: chrfFromStats(sums, opts), stats: sums, signature };
}

/**
 * Corpus chrF (chrF++ with `wordOrder: 2`) of `hypotheses` against reference streams
 * (`references[k][i]`: the k-th reference of segment i, as sacreBLEU). Unlike sacreBLEU, streams
 * of unequal length are an error rather than silently truncated.
 */
export function corpusChrf(hypotheses: readonly string[], references: ReadonlyArray<ReadonlyArray<string | null>>, opts: ChrfOptions = {}): ChrfResult {
  checkStreams('corpusChrf', hypotheses, references);
  return new ChrfReferences(references, opts).score(hypotheses);
}

/** chrF of one hypothesis against its references (sacreBLEU's `sentence_chrf`). */
export function sentenceChrf(hypothesis: string, references: readonly string[], opts: ChrfOptions = {}): ChrfResult {
  return corpusChrf([hypothesis], references.map((r) => [r]), opts);
}

/** chrF as a StatMetric over `chrfStatsWidth(opts)`-wide rows, for the significance tests. */
export function chrfStatMetric(opts: ChrfOptions = {}): StatMetric {
  const score = makeChrfScorer(opts);
  const score32 = makeChrfScorer(opts, true);
  // float32: sacreBLEU's tests sum every metric's statistics in float32; so does every test of ours (StatMetric.float32).
  // The options that change the score, as a stored metric (a per-item file) is rebuilt from them.
  const r = resolve(opts);
  const options = Object.fromEntries(Object.entries(r).filter(([k, v]) => v !== DEFAULTS[k as keyof Resolved]));
  return {
    name: chrfName(opts),
    width: chrfStatsWidth(opts),
    spec: { type: 'chrf', options },
    float32: true,
    score: (sums, offset) => score(sums, offset),
    scoreFloat32: (sums, offset) => score32(sums, offset),
  };
}
