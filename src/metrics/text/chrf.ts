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
import { NgramIds } from './ngram-ids.js';
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

// The roots of the two kinds of n-grams in NgramIds: character n-grams extend CHARS by code points,
// word n-grams extend WORDS by word ids.
const CHARS = 0;
const WORDS = 1;

/** An Int32Array at least `n` long: `buf` itself when it is. */
function room(buf: Int32Array, n: number): Int32Array {
  return buf.length >= n ? buf : new Int32Array(Math.max(n, 2 * buf.length));
}

/**
 * A line's n-grams as ids, every order (characters 1..charOrder, then words 1..wordOrder) one
 * after the other in `ids` (`starts[o]`..`starts[o + 1]` for order index o), in the line's order,
 * repeats included. A hypothesis' n-grams that no reference has are -1 (see NgramIds), but they
 * are counted: `starts` spans every n-gram of the line.
 */
class LineNgrams {
  ids: Int32Array = new Int32Array(1024);
  readonly starts: Int32Array;
  private points: Int32Array = new Int32Array(256);

  constructor(
    private readonly opts: Resolved,
    private readonly table: NgramIds,
    private readonly words: Map<string, number>,
  ) {
    this.starts = new Int32Array(opts.charOrder + opts.wordOrder + 1);
  }

  /** Fills `ids` and `starts` for `line` (already lower-cased where the options say so). */
  read(line: string, intern: boolean): void {
    const { charOrder, wordOrder, whitespace } = this.opts;
    // The line's code points, Python whitespace left out unless kept (sacreBLEU: ''.join(line.split())).
    // Surrogates are paired in the line as given, before whitespace goes: a lone high surrogate,
    // a space and a lone low surrogate are two code points in Python, never one astral character.
    // Every Python whitespace character is one BMP unit, so no pair holds one.
    this.points = room(this.points, line.length);
    const points = this.points;
    let len = 0;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < line.length) {
        const d = line.charCodeAt(i + 1);
        if ((d & 0xfc00) === 0xdc00) {
          points[len++] = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          continue;
        }
      }
      if (whitespace || !isPyWhitespace(c)) points[len++] = c;
    }
    const words = wordOrder > 0 ? chrfWords(line) : [];
    let total = 0;
    for (let n = 1; n <= charOrder; n++) total += Math.max(0, len - n + 1);
    for (let n = 1; n <= wordOrder; n++) total += Math.max(0, words.length - n + 1);
    this.ids = room(this.ids, total);
    const ids = this.ids;
    const table = this.table;
    let at = 0;
    // Order n at position k extends order n - 1 at k (which starts count + 1 ids back) by the
    // symbol at k + n - 1; an n-gram no reference has (-1) extends to none either.
    for (let n = 1; n <= charOrder; n++) {
      const count = Math.max(0, len - n + 1);
      this.starts[n - 1] = at;
      const prev = at - (count + 1);
      for (let k = 0; k < count; k++) {
        const parent = n === 1 ? CHARS : ids[prev + k];
        ids[at++] = parent < 0 ? -1 : intern ? table.intern(parent, points[k + n - 1]) : table.find(parent, points[k + n - 1]);
      }
    }
    if (wordOrder > 0) {
      const wordIds = new Int32Array(words.length);
      for (let k = 0; k < words.length; k++) {
        let id = this.words.get(words[k]);
        if (id === undefined && intern) this.words.set(words[k], (id = this.words.size));
        wordIds[k] = id ?? -1;
      }
      for (let n = 1; n <= wordOrder; n++) {
        const count = Math.max(0, words.length - n + 1);
        this.starts[charOrder + n - 1] = at;
        const prev = at - (count + 1);
        for (let k = 0; k < count; k++) {
          const parent = n === 1 ? WORDS : ids[prev + k];
          const w = wordIds[k + n - 1];
          ids[at++] = parent < 0 || w < 0 ? -1 : intern ? table.intern(parent, w) : table.find(parent, w);
        }
      }
    }
    this.starts[charOrder + wordOrder] = at;
  }
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
  private readonly fScore: (stats: ArrayLike<number>, offset?: number) => number;
  private readonly table: NgramIds;
  private readonly line: LineNgrams;
  /** Per segment, its references' indexes into the arrays below. */
  private readonly refsOf: number[][];
  // Reference r's distinct n-grams are refIds[refStarts[r * (orders + 1) + o] .. refStarts[r * (orders + 1) + o + 1]]
  // for order index o, each with its count in refCounts; its n-grams per order (repeats counted) are refTotals[r * orders + o].
  private readonly refIds: Int32Array;
  private readonly refCounts: Int32Array;
  private readonly refStarts: Int32Array;
  private readonly refTotals: Int32Array;
  /** Scratch counts by n-gram id, all zero between uses. */
  private counts: Int32Array;

  constructor(references: ReadonlyArray<ReadonlyArray<string | null>>, opts: ChrfOptions = {}) {
    this.opts = resolve(opts);
    const refs = referenceSegments(references, 'chrF');
    this.segments = refs.segments;
    this.nrefs = refs.nrefs;
    this.signature = chrfSignature(this.nrefs, opts);
    this.name = chrfName(opts);
    this.width = chrfStatsWidth(this.opts);
    this.fScore = makeChrfScorer(opts);
    const orders = this.opts.charOrder + this.opts.wordOrder;
    let chars = 0;
    let nrefLines = 0;
    for (const lines of refs.lines) for (const l of lines) (chars += l.length), nrefLines++;
    // Sized for one n-gram per reference character (it grows past that): real text has fewer
    // distinct n-grams of all orders (MultiWOZ's 7,354 references: 0.54 M characters, 0.12 M chrF
    // n-grams, 0.13 M chrF++), and sizing for chars * orders zero-filled a table 25 times too big,
    // which the lookups then scattered over (chrF and chrF++ of two systems: 20% more CPU, 80 MB
    // more memory).
    this.table = new NgramIds(chars);
    const words = new Map<string, number>();
    this.line = new LineNgrams(this.opts, this.table, words);
    this.refsOf = [];
    let ids = new Int32Array(Math.max(16, chars * orders));
    let counts = new Int32Array(ids.length);
    const starts = new Int32Array(nrefLines * (orders + 1));
    const totals = new Int32Array(nrefLines * orders);
    this.counts = new Int32Array(0);
    let at = 0;
    let r = 0;
    for (const lines of refs.lines) {
      const mine: number[] = [];
      for (const ref of lines) {
        this.line.read(this.cased(ref), true);
        const line = this.line;
        this.counts = room(this.counts, this.table.size);
        const seen = this.counts;
        if (ids.length < at + line.starts[orders]) {
          const more = Math.max(2 * ids.length, at + line.starts[orders]);
          const i2 = new Int32Array(more);
          i2.set(ids.subarray(0, at));
          const c2 = new Int32Array(more);
          c2.set(counts.subarray(0, at));
          ids = i2;
          counts = c2;
        }
        for (let o = 0; o < orders; o++) {
          starts[r * (orders + 1) + o] = at;
          totals[r * orders + o] = line.starts[o + 1] - line.starts[o];
          const first = at;
          for (let k = line.starts[o]; k < line.starts[o + 1]; k++) {
            const id = line.ids[k];
            if (seen[id] === 0) ids[at++] = id;
            seen[id]++;
          }
          for (let k = first; k < at; k++) {
            counts[k] = seen[ids[k]];
            seen[ids[k]] = 0;
          }
        }
        starts[r * (orders + 1) + orders] = at;
        mine.push(r++);
      }
      this.refsOf.push(mine);
    }
    this.refIds = ids;
    this.refCounts = counts;
    this.refStarts = starts;
    this.refTotals = totals;
    this.counts = room(this.counts, this.table.size);
  }

  private cased(line: string): string {
    return this.opts.lowercase ? line.toLowerCase() : line;
  }

  /** One row of `width` statistics per hypothesis: the best-scoring reference's. */
  segmentStats(hypotheses: readonly string[]): Int32Array {
    if (hypotheses.length !== this.segments) throw new Error(`chrF: ${hypotheses.length} hypotheses for ${this.segments} reference segments`);
    const w = this.width;
    const orders = this.opts.charOrder + this.opts.wordOrder;
    const out = new Int32Array(hypotheses.length * w);
    const row = new Int32Array(w);
    const line = this.line;
    const counts = this.counts;
    const { refIds, refCounts, refStarts, refTotals } = this;
    for (let i = 0; i < hypotheses.length; i++) {
      line.read(this.cased(hypotheses[i]), false);
      const ids = line.ids;
      const end = line.starts[orders];
      for (let k = 0; k < end; k++) if (ids[k] >= 0) counts[ids[k]]++;
      let best = -1;
      for (const r of this.refsOf[i]) {
        for (let o = 0; o < orders; o++) {
          const refTotal = refTotals[r * orders + o];
          let match = 0;
          for (let k = refStarts[r * (orders + 1) + o]; k < refStarts[r * (orders + 1) + o + 1]; k++) {
            const c = counts[refIds[k]];
            const rc = refCounts[k];
            match += c < rc ? c : rc;
          }
          // No reference n-gram of this order: the hypothesis' do not count either.
          row[3 * o] = refTotal > 0 ? line.starts[o + 1] - line.starts[o] : 0;
          row[3 * o + 1] = refTotal;
          row[3 * o + 2] = match;
        }
        const f = this.fScore(row, 0);
        // The first reference wins ties (sacreBLEU keeps a later one only if strictly better).
        if (f > best) {
          best = f;
          out.set(row, i * w);
        }
      }
      for (let k = 0; k < end; k++) if (ids[k] >= 0) counts[ids[k]] = 0;
    }
    return out;
  }

  /** Corpus chrF of `hypotheses` against these references. */
  score(hypotheses: readonly string[]): ChrfResult {
    return chrfFromSegmentStats(this.segmentStats(hypotheses), this.opts, this.signature);
  }
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
