/**
 * TER (translation edit rate, Snover et al. 2006) as sacreBLEU 2.x computes it (`TER`,
 * `corpus_ter`, `sentence_ter`), which follows Tercom: the fewest word edits (insertions,
 * deletions, substitutions, and shifts of a block of words) turning the hypothesis into a
 * reference, over the reference length. Shifts are searched greedily: the shift that lowers the
 * edit distance most is applied until none does, with Tercom's limits (blocks of at most 10 words
 * moved at most 50 positions) and sacreBLEU's own (1000 shift candidates per segment, an edit
 * distance computed within a beam of 25 around the length-scaled diagonal). The choices among
 * equally good shifts and alignments are sacreBLEU's, so edit counts agree, not just most of them.
 *
 * With several references a segment counts its fewest edits against any of them over their
 * average length. The corpus score sums both over segments.
 */
import { formatFields, type SignatureField } from '../../util/signature.js';
import type { StatMetric } from '../significance/types.js';
import { pyRstrip, pySplit } from './py-string.js';
import { checkStreams, referenceSegments } from './references.js';

export interface TerOptions {
  /** Tercom's normalization: XML entities, punctuation split off, 's split (default off). */
  normalized?: boolean;
  /** Remove punctuation (default off). */
  noPunct?: boolean;
  /** With `normalized`, split CJK characters; with `noPunct`, remove CJK and full-width punctuation. */
  asianSupport?: boolean;
  /** Keep case (default: lower-case everything). */
  caseSensitive?: boolean;
}

export interface TerResult {
  name: 'TER';
  /** 0..100 (can exceed 100), unrounded. */
  score: number;
  /** Summed edits (sacreBLEU's `num_edits`). */
  numEdits: number;
  /** Summed average reference lengths (sacreBLEU's `ref_length`). */
  refLength: number;
  /** e.g. `nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.x`. */
  signature: string;
}

export const TER_STATS_WIDTH = 2;

export function terSignature(nrefs: number, opts: TerOptions = {}): string {
  return formatFields(terSignatureFields(nrefs, opts));
}

/** sacreBLEU's TER signature fields in its order: nrefs, case, tok, norm, punct, asian, version. */
export function terSignatureFields(nrefs: number, opts: TerOptions = {}): SignatureField[] {
  const yn = (b: boolean | undefined) => (b ? 'yes' : 'no');
  return [
    ['nrefs', nrefs < 0 ? 'var' : nrefs],
    ['case', opts.caseSensitive ? 'mixed' : 'lc'],
    ['tok', 'tercom'],
    ['norm', yn(opts.normalized)],
    ['punct', yn(!opts.noPunct)],
    ['asian', yn(opts.asianSupport)],
    ['version', '2.x'],
  ];
}

// ---- Tercom's normalizer (sacreBLEU's TercomTokenizer) ----

// Western rules in order: pad ASCII symbols and punctuation except ' . , -, split 's, split . and
// , unless a digit is on the side, split - after a digit.
const WESTERN: ReadonlyArray<readonly [RegExp, string]> = [
  [/([\x7b-\x7e\x5b-\x60\x20-\x26\x28-\x2b\x3a-\x40/])/g, ' $1 '],
  [/'s /g, " 's "],
  [/'s$/g, " 's"],
  [/([^0-9])([.,])/gu, '$1 $2 '],
  [/([.,])([^0-9])/gu, ' $1 $2'],
  [/([0-9])(-)/g, '$1 $2 '],
];

const ASIAN_PUNCT = /([\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb])/g;
const FULL_WIDTH_PUNCT = /([\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09])/g;

const ASIAN: ReadonlyArray<readonly [RegExp, string]> = [
  // CJK unified ideographs and extension A; strokes and radicals; compatibility blocks; enclosed
  // letters up to U+3F22 (the range Tercom's Java block names come to).
  [/([\u4e00-\u9fff\u3400-\u4dbf])/g, ' $1 '],
  [/([\u31c0-\u31ef\u2e80-\u2eff])/g, ' $1 '],
  [/([\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f])/g, ' $1 '],
  [/([\u3200-\u3f22])/g, ' $1 '],
  // Kana runs: as written in sacreBLEU these only match a string that is nothing but one script's
  // kana (both alternatives are anchored at the start), which changes no token; kept for fidelity.
  [/(^|^[\u3040-\u309f])([\u3040-\u309f]+)(?=$|^[\u3040-\u309f])/g, '$1 $2 '],
  [/(^|^[\u30a0-\u30ff])([\u30a0-\u30ff]+)(?=$|^[\u30a0-\u30ff])/g, '$1 $2 '],
  [/(^|^[\u31f0-\u31ff])([\u31f0-\u31ff]+)(?=$|^[\u31f0-\u31ff])/g, '$1 $2 '],
  [ASIAN_PUNCT, ' $1 '],
  [FULL_WIDTH_PUNCT, ' $1 '],
];

/** sacreBLEU's TercomTokenizer: the tokens of `line`, joined by single spaces. */
export function tercomTokenize(line: string, opts: TerOptions = {}): string {
  return tercomTokens(line, opts).join(' ');
}

/** The tokens tercomTokenize joins: what TER aligns, without a join and a split between. */
export function tercomTokens(line: string, opts: TerOptions = {}): string[] {
  if (line === '') return [];
  let s = opts.caseSensitive ? line : line.toLowerCase();
  if (opts.normalized) {
    s = s.replaceAll('\n-', '').replaceAll('\n', ' ');
    s = s.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>');
    s = ` ${s} `;
    for (const [re, to] of WESTERN) s = s.replace(re, to);
    if (opts.asianSupport) for (const [re, to] of ASIAN) s = s.replace(re, to);
  }
  if (opts.noPunct) {
    s = s.replace(/[.,?:;!"()]/g, '');
    if (opts.asianSupport) s = s.replace(ASIAN_PUNCT, '').replace(FULL_WIDTH_PUNCT, '');
  }
  return pySplit(s);
}

// ---- The edit distance and shift search (sacreBLEU's lib_ter) ----

const MAX_SHIFT_SIZE = 10;
const MAX_SHIFT_DIST = 50;
const BEAM_WIDTH = 25;
const MAX_CACHE_SIZE = 10000;
const MAX_SHIFT_CANDIDATES = 1000;
// Unreachable cells; any reachable cost is far below (and INF + 1 does not overflow an int32).
const INF = 0x3fffffff;

// Edit operations as they are recorded in the matrix: hypothesis word rewritten into the reference.
const OP_NOP = 0;
const OP_SUB = 1;
const OP_INS = 2; // a reference word with no hypothesis word (j - 1)
const OP_DEL = 3; // a hypothesis word with no reference word (i - 1)
const OP_UNDEF = 4;

/**
 * One row of the edit-distance matrix, kept only where the beam computed it: columns [lo, lo +
 * width). Every other cell is unreachable (INF, OP_UNDEF), as sacreBLEU's full rows hold there, so a
 * row costs the beam's width, not the reference's length: that is what keeps TER linear in a long
 * line (sacreBLEU copies a full row per hypothesis word and per cached row, quadratic in the line).
 */
interface Row {
  lo: number;
  width: number;
  cost: Int32Array;
  op: Uint8Array;
}

const costAt = (row: Row, j: number): number => (j >= row.lo && j < row.lo + row.width ? row.cost[j - row.lo] : INF);
const opAt = (row: Row, j: number): number => (j >= row.lo && j < row.lo + row.width ? row.op[j - row.lo] : OP_UNDEF);

interface CacheNode {
  next: Map<number, CacheNode>;
  row: Row | null;
}

/** Work done by the TER search, for tests that bound it (cells of the edit-distance matrix computed). */
export interface TerWork {
  cells: number;
}

/**
 * Levenshtein distance of word-id sequences to one reference, with sacreBLEU's beam and its
 * preferences among equal-cost operations (substitution or match, then deletion, then insertion),
 * and a trie of hypothesis prefixes to matrix rows: the shifted hypotheses of a search share long
 * prefixes, whose rows are then not recomputed. Every hypothesis scored by one instance has the
 * same length (shifts keep it), which the beam depends on, so a cached row is always valid.
 */
class BeamEditDistance {
  private readonly nRef: number;
  private readonly initial: Row;
  private readonly root: CacheNode = { next: new Map(), row: null };
  private cacheSize = 0;
  // The rows of the call in progress: cached rows (read only) or this instance's work rows, reused
  // across calls (a computed row is copied into the cache).
  private rows: Row[] = [];
  private work: Row[] = [];

  constructor(
    private readonly ref: Int32Array,
    private readonly counter?: TerWork,
  ) {
    this.nRef = ref.length;
    const cost = new Int32Array(this.nRef + 1);
    for (let j = 0; j <= this.nRef; j++) cost[j] = j;
    this.initial = { lo: 0, width: this.nRef + 1, cost, op: new Uint8Array(this.nRef + 1).fill(OP_INS) };
  }

  /** Work row i with room for `width` cells. */
  private workRow(i: number, width: number): Row {
    let row = this.work[i];
    if (row === undefined || row.cost.length < width) {
      row = { lo: 0, width: 0, cost: new Int32Array(width), op: new Uint8Array(width) };
      this.work[i] = row;
    }
    return row;
  }

  /** The distance, and the operations from the first words on (when `wantTrace`). */
  compute(hyp: Int32Array, wantTrace: boolean): { distance: number; trace: Uint8Array | null } {
    const nH = hyp.length;
    const nR = this.nRef;
    const rows = this.rows;
    rows.length = nH + 1;
    // Rows of the longest cached prefix.
    let node = this.root;
    let start = 0;
    rows[0] = this.initial;
    while (start < nH) {
      const child = node.next.get(hyp[start]);
      if (!child) break;
      node = child;
      start++;
      rows[start] = child.row!;
    }
    const lengthRatio = nH > 0 ? nR / nH : 1;
    const beam = BEAM_WIDTH < lengthRatio / 2 ? Math.ceil(lengthRatio / 2 + BEAM_WIDTH) : BEAM_WIDTH;
    const ref = this.ref;
    for (let i = start + 1; i <= nH; i++) {
      const prev = rows[i - 1];
      const pseudoDiag = Math.floor(i * lengthRatio);
      const minJ = Math.max(0, pseudoDiag - beam);
      const maxJ = i === nH ? nR + 1 : Math.min(nR + 1, pseudoDiag + beam);
      const row = this.workRow(i, maxJ - minJ);
      row.lo = minJ;
      row.width = maxJ - minJ;
      const cost = row.cost;
      const op = row.op;
      const word = hyp[i - 1];
      if (this.counter) this.counter.cells += maxJ - minJ;
      for (let j = minJ; j < maxJ; j++) {
        const k = j - minJ;
        if (j === 0) {
          cost[k] = costAt(prev, 0) + 1;
          op[k] = OP_DEL;
          continue;
        }
        let best = INF;
        let bestOp = OP_UNDEF;
        const sub = costAt(prev, j - 1) + (word === ref[j - 1] ? 0 : 1);
        if (best > sub) {
          best = sub;
          bestOp = word === ref[j - 1] ? OP_NOP : OP_SUB;
        }
        const del = costAt(prev, j) + 1;
        if (best > del) {
          best = del;
          bestOp = OP_DEL;
        }
        const ins = (k > 0 ? cost[k - 1] : INF) + 1;
        if (best > ins) {
          best = ins;
          bestOp = OP_INS;
        }
        cost[k] = best;
        op[k] = bestOp;
      }
      rows[i] = row;
    }
    // The new rows into the cache (while it has room), under the prefix walked so far.
    if (this.cacheSize < MAX_CACHE_SIZE) {
      for (let i = start; i < nH; i++) {
        let child = node.next.get(hyp[i]);
        if (!child) {
          const r = rows[i + 1];
          child = { next: new Map(), row: { lo: r.lo, width: r.width, cost: r.cost.slice(0, r.width), op: r.op.slice(0, r.width) } };
          node.next.set(hyp[i], child);
          this.cacheSize++;
        }
        node = child;
      }
    }
    const distance = costAt(rows[nH], nR);
    if (!wantTrace) return { distance, trace: null };
    const rev: number[] = [];
    let i = nH;
    let j = nR;
    while (i > 0 || j > 0) {
      const o = opAt(rows[i], j);
      rev.push(o);
      if (o === OP_SUB || o === OP_NOP) {
        i--;
        j--;
      } else if (o === OP_INS) j--;
      else if (o === OP_DEL) i--;
      else throw new Error('TER: the edit distance left the beam');
    }
    return { distance, trace: Uint8Array.from(rev.reverse()) };
  }
}

/** Moves hyp[start, start + length) to before position `target` of the words that remain. */
function performShift(words: Int32Array, start: number, length: number, target: number): Int32Array {
  const out = new Int32Array(words.length);
  let k = 0;
  const copy = (from: number, to: number) => {
    for (let p = from; p < to; p++) out[k++] = words[p];
  };
  if (target < start) {
    copy(0, target);
    copy(start, start + length);
    copy(target, start);
    copy(start + length, words.length);
  } else if (target > start + length) {
    copy(0, start);
    copy(start + length, target);
    copy(start, start + length);
    copy(target, words.length);
  } else {
    copy(0, start);
    copy(start + length, length + target);
    copy(start, start + length);
    copy(length + target, words.length);
  }
  return out;
}

/**
 * The best shift of `hyp` (sacreBLEU's `_shift`): how much it lowers the distance, the shifted
 * words, and the number of candidates checked so far (counted across a segment's calls).
 */
function bestShift(hyp: Int32Array, ref: Int32Array, ed: BeamEditDistance, checked: number): { gain: number; words: Int32Array; checked: number } {
  const { distance: preScore, trace } = ed.compute(hyp, true);
  const nH = hyp.length;
  const nR = ref.length;
  // The alignment from the reference's side: the matrix rewrote the hypothesis into the reference,
  // so its insertions are the reference's extra words and its deletions the hypothesis'.
  const align = new Int32Array(nR);
  const refErr = new Uint8Array(nR);
  const hypErr = new Uint8Array(nH);
  let posH = -1;
  let posR = -1;
  for (const o of trace!) {
    if (o === OP_NOP || o === OP_SUB) {
      posH++;
      posR++;
      align[posR] = posH;
      if (o === OP_SUB) {
        hypErr[posH] = 1;
        refErr[posR] = 1;
      }
    } else if (o === OP_DEL) {
      posH++;
      hypErr[posH] = 1;
    } else {
      posR++;
      align[posR] = posH;
      refErr[posR] = 1;
    }
  }
  // Prefix sums for "any error in this span".
  const hypErrSum = new Int32Array(nH + 1);
  for (let p = 0; p < nH; p++) hypErrSum[p + 1] = hypErrSum[p] + hypErr[p];
  const refErrSum = new Int32Array(nR + 1);
  for (let p = 0; p < nR; p++) refErrSum[p + 1] = refErrSum[p] + refErr[p];

  let found = false;
  let bestGain = 0;
  let bestLength = 0;
  let bestStart = 0;
  let bestIdx = 0;
  let bestWords = hyp;
  outer: for (let startH = 0; startH < nH; startH++) {
    // Only starts within MAX_SHIFT_DIST of each other pair up (sacreBLEU walks every startR and
    // skips the others: the same pairs in the same order, without a pass over the whole line).
    const lastR = Math.min(nR - 1, startH + MAX_SHIFT_DIST);
    for (let startR = Math.max(0, startH - MAX_SHIFT_DIST); startR <= lastR; startR++) {
      for (let length = 1; length <= MAX_SHIFT_SIZE; length++) {
        if (hyp[startH + length - 1] !== ref[startR + length - 1]) break;
        // (startH, startR, length): equal spans of both.
        if (hypErrSum[startH + length] - hypErrSum[startH] !== 0 && refErrSum[startR + length] - refErrSum[startR] !== 0) {
          const at = align[startR];
          if (!(startH <= at && at < startH + length)) {
            let prevIdx = -1;
            for (let offset = -1; offset < length; offset++) {
              const idx = startR + offset === -1 ? 0 : align[startR + offset] + 1;
              if (idx === prevIdx) continue;
              prevIdx = idx;
              const shifted = performShift(hyp, startH, length, idx);
              const gain = preScore - ed.compute(shifted, false).distance;
              checked++;
              // Ranked as sacreBLEU ranks its candidate tuples: the largest gain, then the longest
              // block, then the earliest start, then the earliest target.
              if (
                !found ||
                gain > bestGain ||
                (gain === bestGain && (length > bestLength || (length === bestLength && (startH < bestStart || (startH === bestStart && idx < bestIdx)))))
              ) {
                found = true;
                bestGain = gain;
                bestLength = length;
                bestStart = startH;
                bestIdx = idx;
                bestWords = shifted;
              }
            }
          }
        }
        // The pairs generator checks the candidate limit after each of its (startH, startR, length).
        if (checked >= MAX_SHIFT_CANDIDATES) break outer;
        if (startH + length === nH || startR + length === nR) break;
      }
    }
  }
  return found ? { gain: bestGain, words: bestWords, checked } : { gain: 0, words: hyp, checked };
}

/** TER's edits of tokenized word ids against one reference, and the reference length. */
export function translationEditRate(hyp: Int32Array, ref: Int32Array, work?: TerWork): { edits: number; refLength: number } {
  if (ref.length === 0) return { edits: hyp.length, refLength: 0 };
  const ed = new BeamEditDistance(ref, work);
  let shifts = 0;
  let words = hyp;
  let checked = 0;
  for (;;) {
    const r = bestShift(words, ref, ed, checked);
    checked = r.checked;
    // At the candidate limit the search stops, and its last shift is not applied (as sacreBLEU).
    if (checked >= MAX_SHIFT_CANDIDATES) break;
    if (r.gain <= 0) break;
    shifts++;
    words = r.words;
  }
  return { edits: shifts + ed.compute(words, false).distance, refLength: ref.length };
}

/** Word ids of a segment's words (ids shared between its hypothesis and references). */
class Vocabulary {
  private readonly ids = new Map<string, number>();
  idsOf(words: readonly string[]): Int32Array {
    const out = new Int32Array(words.length);
    words.forEach((w, k) => {
      let id = this.ids.get(w);
      if (id === undefined) this.ids.set(w, (id = this.ids.size));
      out[k] = id;
    });
    return out;
  }
}

/**
 * Reference streams normalized and split once (sacreBLEU's reference cache). `references[k][i]` is
 * the k-th reference for segment i; `null` gives a segment fewer references.
 */
export class TerReferences {
  readonly segments: number;
  readonly nrefs: number;
  readonly signature: string;
  readonly width = TER_STATS_WIDTH;
  private readonly refWords: string[][][];
  private readonly vocab = new Vocabulary();
  private readonly refIds: Int32Array[][];

  constructor(references: ReadonlyArray<ReadonlyArray<string | null>>, readonly opts: TerOptions = {}) {
    const refs = referenceSegments(references, 'TER');
    this.segments = refs.segments;
    this.refWords = refs.lines.map((lines) => lines.map((l) => this.words(l)));
    // One vocabulary for all segments: word ids only need to be equal where the words are.
    this.refIds = this.refWords.map((refs) => refs.map((w) => this.vocab.idsOf(w)));
    this.nrefs = refs.nrefs;
    this.signature = terSignature(this.nrefs, opts);
  }

  private words(line: string): string[] {
    return tercomTokens(pyRstrip(line), this.opts);
  }

  /** Per hypothesis [fewest edits over the references, their average length]. */
  segmentStats(hypotheses: readonly string[]): Float64Array {
    if (hypotheses.length !== this.segments) throw new Error(`TER: ${hypotheses.length} hypotheses for ${this.segments} reference segments`);
    const out = new Float64Array(hypotheses.length * TER_STATS_WIDTH);
    for (let i = 0; i < hypotheses.length; i++) {
      const hyp = this.vocab.idsOf(this.words(hypotheses[i]));
      let refLengths = 0;
      let best = 1e16;
      for (const ref of this.refIds[i]) {
        const r = translationEditRate(hyp, ref);
        refLengths += r.refLength;
        if (r.edits < best) best = r.edits;
      }
      out[2 * i] = best;
      out[2 * i + 1] = refLengths / this.refIds[i].length;
    }
    return out;
  }

  score(hypotheses: readonly string[]): TerResult {
    return terFromSegmentStats(this.segmentStats(hypotheses), this.signature);
  }
}

/** TER on the 0..100 scale from summed [edits, reference length]. */
export function terFromStats(numEdits: number, refLength: number, float32 = false): number {
  // sacreBLEU: 100 * (edits / length); from bootstrap sums (float32 under NumPy 1.x) the ratio is a float32.
  if (refLength > 0) return 100 * (float32 ? Math.fround(numEdits / refLength) : numEdits / refLength);
  return numEdits > 0 ? 100 : 0;
}

/** Corpus TER from per-segment rows [edits, average reference length], summed in segment order. */
export function terFromSegmentStats(stats: ArrayLike<number>, signature = terSignature(1)): TerResult {
  let numEdits = 0;
  let refLength = 0;
  for (let i = 0; i < stats.length; i += 2) {
    numEdits += stats[i];
    refLength += stats[i + 1];
  }
  return { name: 'TER', score: terFromStats(numEdits, refLength), numEdits, refLength, signature };
}

/** Corpus TER of `hypotheses` against reference streams (`references[k][i]`, as sacreBLEU). */
export function corpusTer(hypotheses: readonly string[], references: ReadonlyArray<ReadonlyArray<string | null>>, opts: TerOptions = {}): TerResult {
  checkStreams('corpusTer', hypotheses, references);
  return new TerReferences(references, opts).score(hypotheses);
}

/** TER of one hypothesis against its references (sacreBLEU's `sentence_ter`). */
export function sentenceTer(hypothesis: string, references: readonly string[], opts: TerOptions = {}): TerResult {
  return corpusTer([hypothesis], references.map((r) => [r]), opts);
}

/** TER as a StatMetric over [edits, reference length] rows, for the significance tests. */
export function terStatMetric(): StatMetric {
  return {
    name: 'TER',
    width: TER_STATS_WIDTH,
    spec: { type: 'ter' },
    // sacreBLEU's tests sum every metric's statistics in float32; so does every test of ours (StatMetric.float32).
    float32: true,
    score: (sums, offset) => terFromStats(sums[offset], sums[offset + 1]),
    scoreFloat32: (sums, offset) => terFromStats(sums[offset], sums[offset + 1], true),
  };
}
