/**
 * Corpus BLEU exactly as sacreBLEU 2.x computes it with its defaults (`corpus_bleu(hyps, refs)`):
 * 13a tokenization, mixed case, n-grams up to 4, 'exp' smoothing, no effective order, the closest
 * reference length (shorter wins ties) for the brevity penalty, and clipped counts against the
 * per-n-gram maximum over all references. mwzeval calls it this way, so do we.
 */
import { pyRstrip, pySplit } from './text/py-string.js';

export const BLEU_MAX_ORDER = 4;

export type SmoothMethod = 'exp' | 'none' | 'floor' | 'add-k';

export interface BleuOptions {
  /** Lower-case hypotheses and references before tokenizing (sacreBLEU `lowercase`). */
  lowercase?: boolean;
  /** '13a' (default) or 'none' (split on whitespace only). */
  tokenize?: '13a' | 'none';
  smoothMethod?: SmoothMethod;
  /** For 'floor' (default 0.1) and 'add-k' (default 1). */
  smoothValue?: number;
  /** Average only over orders up to the last with any hypothesis n-gram (sentence-level use). */
  effectiveOrder?: boolean;
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

// The mteval-v13a "language-dependent" rules, in order: pad symbols and most ASCII punctuation
// (not ' - . ,), split . and , unless between digits, split - after a digit.
const RULES_13A: ReadonlyArray<readonly [RegExp, string]> = [
  [/([{-~\[-` -&(-+:-@\/])/g, ' $1 '],
  [/([^0-9])([.,])/gu, '$1 $2 '],
  [/([.,])([^0-9])/gu, ' $1 $2'],
  [/([0-9])(-)/g, '$1 $2 '],
];

/** sacreBLEU's default '13a' tokenizer (mteval-v13a.pl), returning the space-joined tokens. */
export function tokenize13a(line: string): string {
  line = line.replaceAll('<skipped>', '').replaceAll('-\n', '').replaceAll('\n', ' ');
  if (line.includes('&')) {
    line = line
      .replaceAll('&quot;', '"')
      .replaceAll('&amp;', '&')
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>');
  }
  line = ` ${line} `;
  for (const [pattern, replacement] of RULES_13A) line = line.replace(pattern, replacement);
  return pySplit(line).join(' ');
}

interface NgramStats {
  /** Per order n (index n-1): n-gram key -> count. */
  byOrder: Map<string, number>[];
  length: number;
}

// Tokens never contain whitespace, so joining with a space is an unambiguous n-gram key.
function extractNgrams(line: string, maxOrder: number): NgramStats {
  const tokens = pySplit(line);
  const byOrder: Map<string, number>[] = [];
  for (let n = 1; n <= maxOrder; n++) {
    const counts = new Map<string, number>();
    for (let i = 0; i + n <= tokens.length; i++) {
      let key = tokens[i];
      for (let j = 1; j < n; j++) key += ' ' + tokens[i + j];
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    byOrder.push(counts);
  }
  return { byOrder, length: tokens.length };
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

/** BLEU from corpus sufficient statistics (sacreBLEU `BLEU.compute_bleu`). */
export function bleuFromStats(
  countsIn: readonly number[],
  totalsIn: readonly number[],
  sysLen: number,
  refLen: number,
  opts: Pick<BleuOptions, 'smoothMethod' | 'smoothValue' | 'effectiveOrder'> = {},
): Pick<BleuResult, 'score' | 'counts' | 'totals' | 'precisions' | 'bp' | 'sysLen' | 'refLen'> {
  const method = opts.smoothMethod ?? 'exp';
  const smoothValue = opts.smoothValue ?? DEFAULT_SMOOTH_VALUE[method];
  const maxOrder = countsIn.length;
  const counts = [...countsIn];
  const totals = [...totalsIn];

  let bp = 1.0;
  if (sysLen < refLen) bp = sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0.0;

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
  for (const p of precisions.slice(0, effOrder)) logSum += safeLog(p);
  const score = bp * Math.exp(logSum / effOrder);
  return { score, counts, totals, precisions, bp, sysLen, refLen };
}

function bleuSignature(nrefs: number, opts: BleuOptions): string {
  const method = opts.smoothMethod ?? 'exp';
  let smooth: string = method;
  if (method === 'floor' || method === 'add-k') {
    smooth += `[${(opts.smoothValue ?? DEFAULT_SMOOTH_VALUE[method]).toFixed(2)}]`;
  }
  return [
    `nrefs:${nrefs < 0 ? 'var' : nrefs}`,
    `case:${opts.lowercase ? 'lc' : 'mixed'}`,
    `eff:${opts.effectiveOrder ? 'yes' : 'no'}`,
    `tok:${opts.tokenize ?? '13a'}`,
    `smooth:${smooth}`,
    'version:2.x',
  ].join('|');
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
  if (references.length === 0) throw new Error('corpusBleu: no reference streams');
  for (const [k, stream] of references.entries()) {
    if (stream.length !== hypotheses.length) {
      throw new Error(
        `corpusBleu: reference stream ${k} has ${stream.length} segments, hypotheses have ${hypotheses.length}`,
      );
    }
  }
  const tokenizer = (opts.tokenize ?? '13a') === '13a' ? tokenize13a : (s: string) => s;
  const preprocess = (s: string) => tokenizer(pyRstrip(opts.lowercase ? s.toLowerCase() : s));

  const counts = new Array<number>(BLEU_MAX_ORDER).fill(0);
  const totals = new Array<number>(BLEU_MAX_ORDER).fill(0);
  let sysLen = 0;
  let refLen = 0;
  const nrefsSeen = new Set<number>();

  for (let i = 0; i < hypotheses.length; i++) {
    const refLines = references.map((stream) => stream[i]).filter((r): r is string => r !== null && r !== undefined);
    nrefsSeen.add(refLines.length);
    // Reference n-gram counts are the maximum over references, so a hypothesis n-gram is clipped
    // by the most generous reference.
    const refNgrams: Map<string, number>[] = [];
    const refLens: number[] = [];
    for (const ref of refLines) {
      const stats = extractNgrams(preprocess(ref), BLEU_MAX_ORDER);
      refLens.push(stats.length);
      stats.byOrder.forEach((counts, n) => {
        const merged = refNgrams[n];
        if (merged === undefined) {
          refNgrams[n] = counts;
          return;
        }
        for (const [ngram, c] of counts) if (c > (merged.get(ngram) ?? 0)) merged.set(ngram, c);
      });
    }
    const hyp = extractNgrams(preprocess(hypotheses[i]), BLEU_MAX_ORDER);
    sysLen += hyp.length;
    refLen += closestRefLength(hyp.length, refLens);
    hyp.byOrder.forEach((hypCounts, n) => {
      const refCounts = refNgrams[n];
      for (const [ngram, c] of hypCounts) {
        totals[n] += c;
        const r = refCounts?.get(ngram);
        if (r !== undefined) counts[n] += Math.min(c, r);
      }
    });
  }

  const nrefs = nrefsSeen.size === 1 ? [...nrefsSeen][0] : -1;
  return { ...bleuFromStats(counts, totals, sysLen, refLen, opts), signature: bleuSignature(nrefs, opts) };
}

/**
 * Sentence BLEU as sacreBLEU's `sentence_bleu`: one hypothesis against its references, with
 * exponential smoothing and effective order (orders beyond the hypothesis length do not zero it).
 */
export function sentenceBleu(hypothesis: string, references: readonly string[], opts: BleuOptions = {}): BleuResult {
  return corpusBleu([hypothesis], references.map((r) => [r]), { effectiveOrder: true, ...opts });
}
