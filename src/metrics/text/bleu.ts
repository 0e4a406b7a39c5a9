/**
 * Corpus BLEU exactly as sacreBLEU 2.x computes it with its defaults (`corpus_bleu(hyps, refs)`):
 * 13a tokenization, mixed case, n-grams up to 4, 'exp' smoothing, no effective order, the closest
 * reference length (shorter wins ties) for the brevity penalty, and clipped counts against the
 * per-n-gram maximum over all references. mwzeval calls it this way, so do we.
 */
import { formatFields, type SignatureField } from '../../util/signature.js';
import type { StatMetric } from '../significance/types.js';
import { bleuTokenizer, tokenize13a, type BleuTokenizerName } from './bleu-tokenizers.js';
import { expRounded, logRounded } from './libm.js';
import { isPyWhitespace, pyRstrip } from './py-string.js';
import { checkStreams, referenceSegments } from './references.js';

export { tokenize13a };

export const BLEU_MAX_ORDER = 4;

export type SmoothMethod = 'exp' | 'none' | 'floor' | 'add-k';

export interface BleuOptions {
  /** Lower-case hypotheses and references before tokenizing (sacreBLEU `lowercase`). */
  lowercase?: boolean;
  /** sacreBLEU's tokenizer: '13a' (default), 'none' (whitespace only), 'intl', 'char' or 'zh'. */
  tokenize?: BleuTokenizerName;
  smoothMethod?: SmoothMethod;
  /** For 'floor' (default 0.1) and 'add-k' (default 1). */
  smoothValue?: number;
  /** Average only over orders up to the last with any hypothesis n-gram (sentence-level use). */
  effectiveOrder?: boolean;
  /**
   * exp and log correctly rounded (libm.ts) instead of V8's Math.exp and Math.log, which can be
   * one ulp off: the last digits then equal Python's (sacreBLEU's) but in rare hard cases.
   * `todeval sacrebleu` and sentenceBleu set it; elsewhere the scores keep the digits they had.
   */
  correctlyRounded?: boolean;
}

export interface BleuResult {
  /** BLEU on the 0..100 scale, unrounded (sacreBLEU's `.score`). */
  score: number;
  /** Clipped matching n-grams per order 1..4. */
  counts: number[];
  /** Hypothesis n-grams per order 1..4. */
  totals: number[];
  /** Percent precisions per order (smoothed where a count is 0). */
  precisions: number[];
  /** Brevity penalty. */
  bp: number;
  sysLen: number;
  refLen: number;
  /** sacreBLEU-style signature of the configuration, e.g. `nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x`. */
  signature: string;
}

/** Closest reference length to the hypothesis length; the shorter one on a tie. */
export function closestRefLength(hypLen: number, refLens: readonly number[]): number {
  let closestDiff = -1;
  let closestLen = -1;
  for (const refLen of refLens) {
    const diff = Math.abs(hypLen - refLen);
    if (closestDiff === -1 || diff < closestDiff) {
      closestDiff = diff;
      closestLen = refLen;
    } else if (diff === closestDiff && refLen < closestLen) {
      closestLen = refLen;
    }
  }
  return closestLen;
}

// sacreBLEU's defaults; the computation and the signature must agree on them.
const DEFAULT_SMOOTH_VALUE: Record<SmoothMethod, number> = { exp: 0, none: 0, floor: 0.1, 'add-k': 1 };

// sacreBLEU floors log(0) to this instead of -Infinity.
const LOG_ZERO = -9999999999;
const safeLog = (x: number) => (x === 0 ? LOG_ZERO : Math.log(x));
const safeLogRounded = (x: number) => (x === 0 ? LOG_ZERO : logRounded(x));

/** BLEU from corpus sufficient statistics (sacreBLEU `BLEU.compute_bleu`). */
export function bleuFromStats(
  countsIn: readonly number[],
  totalsIn: readonly number[],
  sysLen: number,
  refLen: number,
  opts: Pick<BleuOptions, 'smoothMethod' | 'smoothValue' | 'effectiveOrder' | 'correctlyRounded'> = {},
): Pick<BleuResult, 'score' | 'counts' | 'totals' | 'precisions' | 'bp' | 'sysLen' | 'refLen'> {
  const method = opts.smoothMethod ?? 'exp';
  const exp = opts.correctlyRounded ? expRounded : Math.exp;
  const log = opts.correctlyRounded ? safeLogRounded : safeLog;
  const smoothValue = opts.smoothValue ?? DEFAULT_SMOOTH_VALUE[method];
  const maxOrder = countsIn.length;
  const counts = [...countsIn];
  const totals = [...totalsIn];

  let bp = 1.0;
  if (sysLen < refLen) bp = sysLen > 0 ? exp(1 - refLen / sysLen) : 0.0;

  const precisions = new Array<number>(maxOrder).fill(0);
  if (!counts.some((c) => c !== 0)) {
    return { score: 0, counts, totals, precisions, bp, sysLen, refLen };
  }

  let smoothMteval = 1;
  let effOrder = maxOrder;
  for (let n = 1; n <= maxOrder; n++) {
    if (method === 'add-k' && n > 1) {
      counts[n - 1] += smoothValue;
      totals[n - 1] += smoothValue;
    }
    if (totals[n - 1] === 0) break;
    if (opts.effectiveOrder) effOrder = n;
    if (counts[n - 1] === 0) {
      if (method === 'exp') {
        smoothMteval *= 2;
        precisions[n - 1] = 100 / (smoothMteval * totals[n - 1]);
      } else if (method === 'floor') {
        precisions[n - 1] = (100 * smoothValue) / totals[n - 1];
      }
    } else {
      precisions[n - 1] = (100 * counts[n - 1]) / totals[n - 1];
    }
  }
  let logSum = 0;
  for (const p of precisions.slice(0, effOrder)) logSum += log(p);
  const score = bp * exp(logSum / effOrder);
  return { score, counts, totals, precisions, bp, sysLen, refLen };
}

export function bleuSignature(nrefs: number, opts: BleuOptions): string {
  return formatFields(bleuSignatureFields(nrefs, opts));
}

/** sacreBLEU's signature fields in its order: nrefs, case, eff, tok, smooth, version. */
export function bleuSignatureFields(nrefs: number, opts: BleuOptions): SignatureField[] {
  const method = opts.smoothMethod ?? 'exp';
  let smooth: string = method;
  if (method === 'floor' || method === 'add-k') {
    smooth += `[${(opts.smoothValue ?? DEFAULT_SMOOTH_VALUE[method]).toFixed(2)}]`;
  }
  return [
    ['nrefs', nrefs < 0 ? 'var' : nrefs],
    ['case', opts.lowercase ? 'lc' : 'mixed'],
    ['eff', opts.effectiveOrder ? 'yes' : 'no'],
    ['tok', opts.tokenize ?? '13a'],
    ['smooth', smooth],
    ['version', '2.x'],
  ];
}

/**
 * Per-segment BLEU sufficient statistics in sacreBLEU's layout, one row of BLEU_STATS_WIDTH
 * integers per segment: [sysLen, refLen, matches n=1..4, hypothesis n-grams n=1..4]. Corpus BLEU
 * is the score of their column sums, so a resample of segments costs sums, not a re-tokenization.
 */
export const BLEU_STATS_WIDTH = 2 + 2 * BLEU_MAX_ORDER;

// N-gram ids: an order-n n-gram is the pair (its order n-1 prefix's id, its last token's id). Only
// reference n-grams get ids: a hypothesis n-gram that has none (or whose prefix or token has none)
// cannot match.

/**
 * (int32, int32) -> int32 by open addressing in one typed array (key a, key b, value per slot, so
 * a probe touches one cache line): JavaScript Maps would need the pair packed into a double past
 * the small-integer range, which boxes every key (5x slower measured).
 */
class PairTable {
  private slots: Int32Array;
  private size = 0;

  constructor(capacity = 1024) {
    this.slots = new Int32Array(3 * capacity).fill(-1);
  }

  /** Where (a, b) is, or the empty slot where it would go (an index into slots). */
  private find(a: number, b: number): number {
    const slots = this.slots;
    const mask = slots.length / 3 - 1;
    let h = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77)) & mask;
    for (;;) {
      const at = 3 * h;
      const k = slots[at];
      if (k === -1 || (k === a && slots[at + 1] === b)) return at;
      h = (h + 1) & mask;
    }
  }

  /** The value of (a, b), or -1. */
  get(a: number, b: number): number {
    const at = this.find(a, b);
    return this.slots[at] === -1 ? -1 : this.slots[at + 2];
  }

  set(a: number, b: number, v: number): void {
    if (2 * (this.size + 1) > this.slots.length / 3) this.grow();
    const at = this.find(a, b);
    if (this.slots[at] === -1) this.size++;
    this.slots[at] = a;
    this.slots[at + 1] = b;
    this.slots[at + 2] = v;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Int32Array(2 * old.length).fill(-1);
    this.size = 0;
    for (let at = 0; at < old.length; at += 3) if (old[at] !== -1) this.set(old[at], old[at + 1], old[at + 2]);
  }
}

/**
 * Token ids by open addressing over the tokens' characters, so a hypothesis is looked up token by
 * token without cutting it into substrings and hashing them as Map keys (2x faster measured).
 */
class TokenTable {
  private readonly tokens: string[] = [];
  private hashes = new Int32Array(1024);
  /** id + 1 per slot; 0 is empty. */
  private slots = new Int32Array(1024);

  get size(): number {
    return this.tokens.length;
  }

  private probe(text: string, start: number, end: number, hash: number): number {
    const mask = this.slots.length - 1;
    let h = hash & mask;
    for (;;) {
      const v = this.slots[h];
      if (v === 0) return h;
      if (this.hashes[h] === hash) {
        const t = this.tokens[v - 1];
        if (t.length === end - start) {
          let k = 0;
          while (k < t.length && t.charCodeAt(k) === text.charCodeAt(start + k)) k++;
          if (k === t.length) return h;
        }
      }
      h = (h + 1) & mask;
    }
  }

  /** The id of text[start, end), or -1. */
  find(text: string, start: number, end: number, hash: number): number {
    return this.slots[this.probe(text, start, end, hash)] - 1;
  }

  /** The id of text[start, end), new if needed. */
  intern(text: string, start: number, end: number, hash: number): number {
    let h = this.probe(text, start, end, hash);
    if (this.slots[h] !== 0) return this.slots[h] - 1;
    if (2 * (this.tokens.length + 1) > this.slots.length) {
      this.grow();
      h = this.probe(text, start, end, hash);
    }
    this.tokens.push(text.slice(start, end));
    this.slots[h] = this.tokens.length;
    this.hashes[h] = hash;
    return this.tokens.length - 1;
  }

  private grow(): void {
    const [slots, hashes] = [this.slots, this.hashes];
    this.slots = new Int32Array(2 * slots.length);
    this.hashes = new Int32Array(2 * slots.length);
    const mask = this.slots.length - 1;
    for (let i = 0; i < slots.length; i++) {
      if (slots[i] === 0) continue;
      let h = hashes[i] & mask;
      while (this.slots[h] !== 0) h = (h + 1) & mask;
      this.slots[h] = slots[i];
      this.hashes[h] = hashes[i];
    }
  }
}

/**
 * Reference streams tokenized once and turned into clipped n-gram tables, so that many systems are
 * scored against them without repeating the work (sacreBLEU's reference cache). `references[k][i]`
 * is the k-th reference for segment i; `null` gives a segment fewer references.
 *
 * Every reference token and n-gram gets an integer id; per segment the reference side is a list of
 * (id, maximum count over the references) per order. A hypothesis is counted in typed scratch
 * arrays indexed by id, and only its n-grams whose prefix occurs in the segment's references are
 * looked up: no strings are cut, no maps are built per segment.
 */
export class BleuReferences {
  readonly segments: number;
  /** The number of references per segment, or -1 when it varies (sacreBLEU's `nrefs:var`). */
  readonly nrefs: number;
  readonly signature: string;
  private readonly preprocess: (s: string) => string;
  private readonly tokenIds = new TokenTable();
  /** Per order n >= 2 (index n - 1): (prefix id, token id) -> n-gram id. */
  private readonly ngramIds: PairTable[] = [];
  /** Ids per order (order 1: the tokens). */
  private readonly idCount = new Int32Array(BLEU_MAX_ORDER);
  /** Per segment and order: where its reference n-grams start in refNgram/refCount. */
  private readonly refStart: Int32Array;
  private readonly refNgram: Int32Array;
  private readonly refCount: Int32Array;
  private readonly refLens: number[][] = [];
  /** Token ids of the line being counted (grown to the longest line). */
  private tokenBuf = new Int32Array(256);
  // Scratch counts indexed by n-gram id, per order (allocated on first use).
  private scratch?: { hyp: Int32Array[]; ref: Int32Array[] };

  /**
   * References given as this.preprocess would leave them (a caller that keeps them tokenized, as the
   * MultiWOZ ground truth's cache does): only the hypotheses are preprocessed.
   */
  static preprocessed(references: ReadonlyArray<ReadonlyArray<string | null>>, opts: BleuOptions = {}): BleuReferences {
    return new BleuReferences(references, opts, true);
  }

  constructor(
    references: ReadonlyArray<ReadonlyArray<string | null>>,
    readonly opts: BleuOptions = {},
    referencesPreprocessed = false,
  ) {
    const refs = referenceSegments(references, 'BLEU');
    this.segments = refs.segments;
    const tokenizer = bleuTokenizer(opts.tokenize ?? '13a');
    this.preprocess = (s: string) => tokenizer(pyRstrip(opts.lowercase ? s.toLowerCase() : s));
    for (let n = 0; n < BLEU_MAX_ORDER; n++) this.ngramIds.push(new PairTable());
    // First every reference's n-gram ids (interning as they come), then per segment and order the
    // maximum count over its references, counted in scratch arrays now that the id counts are known.
    const grams: number[][][][] = [];
    for (let i = 0; i < this.segments; i++) {
      const g = refs.lines[i].map((ref) => this.referenceNgrams(referencesPreprocessed ? ref : this.preprocess(ref)));
      this.refLens.push(g.map((x) => x[0].length));
      grams.push(g);
    }
    const start = new Int32Array(this.segments * BLEU_MAX_ORDER + 1);
    const ids: number[] = [];
    const counts: number[] = [];
    const perRefAll = Array.from(this.idCount, (c) => new Int32Array(c));
    const mergedAll = Array.from(this.idCount, (c) => new Int32Array(c));
    for (let i = 0; i < this.segments; i++) {
      for (let n = 0; n < BLEU_MAX_ORDER; n++) {
        const perRef = perRefAll[n];
        const merged = mergedAll[n];
        start[i * BLEU_MAX_ORDER + n] = ids.length;
        const first = ids.length;
        for (const g of grams[i]) {
          for (const id of g[n]) perRef[id]++;
          for (const id of g[n]) {
            if (perRef[id] === 0) continue;
            if (merged[id] === 0) ids.push(id);
            if (perRef[id] > merged[id]) merged[id] = perRef[id];
            perRef[id] = 0;
          }
        }
        for (let k = first; k < ids.length; k++) {
          counts.push(merged[ids[k]]);
          merged[ids[k]] = 0;
        }
      }
    }
    start[this.segments * BLEU_MAX_ORDER] = ids.length;
    this.refStart = start;
    this.refNgram = Int32Array.from(ids);
    this.refCount = Int32Array.from(counts);
    this.nrefs = refs.nrefs;
    this.signature = bleuSignature(this.nrefs, opts);
  }

  /**
   * Splits `text` on Python whitespace into this.tokenBuf as token ids (interned, or -1 for a token
   * no reference has); returns the number of tokens.
   */
  private scanTokens(text: string, intern: boolean): number {
    let len = 0;
    let i = 0;
    const end = text.length;
    while (i < end) {
      while (i < end && isPyWhitespace(text.charCodeAt(i))) i++;
      if (i >= end) break;
      const from = i;
      let hash = 0x811c9dc5;
      while (i < end) {
        const c = text.charCodeAt(i);
        if (isPyWhitespace(c)) break;
        hash = Math.imul(hash ^ c, 0x01000193);
        i++;
      }
      if (len === this.tokenBuf.length) {
        const grown = new Int32Array(2 * len);
        grown.set(this.tokenBuf);
        this.tokenBuf = grown;
      }
      this.tokenBuf[len++] = intern ? this.tokenIds.intern(text, from, i, hash) : this.tokenIds.find(text, from, i, hash);
    }
    return len;
  }

  /** A reference's n-gram ids per order (index n - 1, one per position), interning new ones. */
  private referenceNgrams(text: string): number[][] {
    const len = this.scanTokens(text, true);
    const tokens = Array.from(this.tokenBuf.subarray(0, len));
    this.idCount[0] = this.tokenIds.size;
    const out: number[][] = [tokens];
    let prev = tokens;
    for (let n = 2; n <= BLEU_MAX_ORDER; n++) {
      const cur: number[] = [];
      const table = this.ngramIds[n - 1];
      for (let p = 0; p + n <= len; p++) {
        let id = table.get(prev[p], tokens[p + n - 1]);
        if (id < 0) {
          if (this.idCount[n - 1] === 0x7fffffff) throw new Error(`BLEU: more than 2^31 distinct reference ${n}-grams`);
          table.set(prev[p], tokens[p + n - 1], (id = this.idCount[n - 1]++));
        }
        cur.push(id);
      }
      out.push(cur);
      prev = cur;
    }
    return out;
  }

  /** One row of BLEU_STATS_WIDTH integers per hypothesis (see BLEU_STATS_WIDTH). */
  segmentStats(hypotheses: readonly string[]): Int32Array {
    if (hypotheses.length !== this.segments) {
      throw new Error(`BLEU: ${hypotheses.length} hypotheses for ${this.segments} reference segments`);
    }
    const scratch = (this.scratch ??= {
      hyp: Array.from(this.idCount, (c) => new Int32Array(c)),
      ref: Array.from(this.idCount, (c) => new Int32Array(c)),
    });
    const out = new Int32Array(hypotheses.length * BLEU_STATS_WIDTH);
    let ngram = new Int32Array(256);
    let touched = new Int32Array(256);
    for (let i = 0; i < hypotheses.length; i++) {
      const row = i * BLEU_STATS_WIDTH;
      const len = this.scanTokens(this.preprocess(hypotheses[i]), false);
      const tokens = this.tokenBuf;
      if (len > ngram.length) {
        ngram = new Int32Array(2 * len);
        touched = new Int32Array(2 * len);
      }
      out[row] = len;
      out[row + 1] = closestRefLength(len, this.refLens[i]);
      // The segment's reference counts, all orders: an n-gram whose prefix is not among them
      // cannot match, so it is not looked up.
      const from = this.refStart[i * BLEU_MAX_ORDER];
      for (let n = 0, r = from; n < BLEU_MAX_ORDER; n++) {
        const ref = scratch.ref[n];
        for (const stop = this.refStart[i * BLEU_MAX_ORDER + n + 1]; r < stop; r++) ref[this.refNgram[r]] = this.refCount[r];
      }
      for (let n = 0; n < BLEU_MAX_ORDER; n++) {
        const count = len - n;
        if (count <= 0) break;
        const ref = scratch.ref[n];
        if (n === 0) {
          for (let p = 0; p < len; p++) {
            const id = tokens[p];
            ngram[p] = id >= 0 && ref[id] > 0 ? id : -1;
          }
        } else {
          const table = this.ngramIds[n];
          for (let p = 0; p < count; p++) {
            const prefix = ngram[p];
            const last = tokens[p + n];
            // ngram[p] was the (n-1)-gram at p, kept only if the segment's references have it.
            const id = prefix >= 0 && last >= 0 ? table.get(prefix, last) : -1;
            ngram[p] = id >= 0 && ref[id] > 0 ? id : -1;
          }
        }
        const hyp = scratch.hyp[n];
        let distinct = 0;
        for (let p = 0; p < count; p++) {
          const id = ngram[p];
          if (id >= 0 && hyp[id]++ === 0) touched[distinct++] = id;
        }
        let matches = 0;
        for (let k = 0; k < distinct; k++) {
          const id = touched[k];
          matches += Math.min(hyp[id], ref[id]);
          hyp[id] = 0;
        }
        out[row + 2 + n] = matches;
        out[row + 2 + BLEU_MAX_ORDER + n] = count;
      }
      for (let n = 0, r = from; n < BLEU_MAX_ORDER; n++) {
        const ref = scratch.ref[n];
        for (const stop = this.refStart[i * BLEU_MAX_ORDER + n + 1]; r < stop; r++) ref[this.refNgram[r]] = 0;
      }
    }
    return out;
  }

  /** Corpus BLEU of `hypotheses` against these references. */
  score(hypotheses: readonly string[]): BleuResult {
    return bleuFromSegmentStats(this.segmentStats(hypotheses), this.opts, this.signature);
  }
}

/** Corpus BLEU from per-segment statistics (rows of BLEU_STATS_WIDTH), summed in segment order. */
export function bleuFromSegmentStats(stats: ArrayLike<number>, opts: BleuOptions = {}, signature = bleuSignature(1, opts)): BleuResult {
  const sums = new Array<number>(BLEU_STATS_WIDTH).fill(0);
  for (let i = 0; i < stats.length; i++) sums[i % BLEU_STATS_WIDTH] += stats[i];
  const r = bleuFromStats(sums.slice(2, 2 + BLEU_MAX_ORDER), sums.slice(2 + BLEU_MAX_ORDER), sums[0], sums[1], opts);
  return { ...r, signature };
}

/**
 * The BLEU score of summed statistics (a BLEU_STATS_WIDTH row at `offset`), with exactly the
 * arithmetic of bleuFromStats but without allocating: what a resampling test calls per sample.
 */
export function makeBleuScorer(opts: BleuOptions = {}): (sums: ArrayLike<number>, offset?: number) => number {
  const method = opts.smoothMethod ?? 'exp';
  if (method !== 'exp' || opts.effectiveOrder || opts.correctlyRounded) {
    return (sums, offset = 0) => {
      const row = Array.from({ length: BLEU_STATS_WIDTH }, (_, j) => sums[offset + j]);
      return bleuFromStats(row.slice(2, 2 + BLEU_MAX_ORDER), row.slice(2 + BLEU_MAX_ORDER), row[0], row[1], opts).score;
    };
  }
  return (sums, offset = 0) => {
    const sysLen = sums[offset];
    const refLen = sums[offset + 1];
    let bp = 1.0;
    if (sysLen < refLen) bp = sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0.0;
    let any = false;
    for (let n = 0; n < BLEU_MAX_ORDER; n++) if (sums[offset + 2 + n] !== 0) any = true;
    if (!any) return 0;
    let smoothMteval = 1;
    let logSum = 0;
    for (let n = 0; n < BLEU_MAX_ORDER; n++) {
      const total = sums[offset + 2 + BLEU_MAX_ORDER + n];
      // A zero total stops the loop in bleuFromStats with this precision left at 0: its floored
      // log (-9999999999) makes the score exp(< -2.4e9) * bp, which is 0.
      if (total === 0) return 0;
      const count = sums[offset + 2 + n];
      let p: number;
      if (count === 0) {
        smoothMteval *= 2;
        p = 100 / (smoothMteval * total);
      } else {
        p = (100 * count) / total;
      }
      logSum += safeLog(p);
    }
    return bp * Math.exp(logSum / BLEU_MAX_ORDER);
  };
}

/**
 * Corpus BLEU of `hypotheses` against reference streams: `references[k][i]` is the k-th reference
 * for hypothesis i (sacreBLEU's layout). A reference may be `null` to give a segment fewer
 * references. Unlike sacreBLEU, streams of unequal length are an error rather than silently
 * truncated.
 */
export function corpusBleu(
  hypotheses: readonly string[],
  references: ReadonlyArray<ReadonlyArray<string | null>>,
  opts: BleuOptions = {},
): BleuResult {
  checkStreams('corpusBleu', hypotheses, references);
  return new BleuReferences(references, opts).score(hypotheses);
}

/**
 * Sentence BLEU as sacreBLEU's `sentence_bleu`: one hypothesis against its references, with
 * exponential smoothing and effective order (orders beyond the hypothesis length do not zero it),
 * exp and log correctly rounded as Python's are, so that the score is sacreBLEU's to the last bit.
 */
export function sentenceBleu(hypothesis: string, references: readonly string[], opts: BleuOptions = {}): BleuResult {
  return corpusBleu([hypothesis], references.map((r) => [r]), { effectiveOrder: true, correctlyRounded: true, ...opts });
}

/** BLEU as a StatMetric over BLEU_STATS_WIDTH rows (the score of summed segment statistics). */
export function bleuStatMetric(opts: BleuOptions = {}): StatMetric {
  const score = makeBleuScorer(opts);
  // The options that change the score, as a stored metric is rebuilt from them.
  const options = Object.fromEntries(
    Object.entries({ tokenize: opts.tokenize, lowercase: opts.lowercase || undefined, smoothMethod: opts.smoothMethod, smoothValue: opts.smoothValue, effectiveOrder: opts.effectiveOrder || undefined }).filter(([, v]) => v !== undefined),
  );
  // sacreBLEU sums BLEU's statistics in float32 (np.array(stats, dtype='float32')): every test of BLEU does.
  return { name: 'BLEU', width: BLEU_STATS_WIDTH, spec: { type: 'bleu', options }, float32: true, score: (sums, offset) => score(sums, offset) };
}
