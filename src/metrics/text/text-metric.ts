/**
 * sacreBLEU's metric objects: BLEU, chrF/chrF++ or TER with its options resolved once against
 * references prepared once. Each gives per-segment statistics, the score of any statistics (a
 * corpus, one segment, a resample's sums), its signature fields, and the StatMetric the
 * significance tests resample: what `bleu -m`, `sacrebleu` (corpus and --sentence-level) and the
 * paired tests all take, so that no caller writes a metric's name, width or signature again.
 */
import { pyFixed } from './py-string.js';
import type { SignatureField } from '../../util/signature.js';
import type { StatMetric } from '../significance/types.js';
import { BLEU_MAX_ORDER, BLEU_STATS_WIDTH, BleuReferences, bleuFromSegmentStats, bleuSignatureFields, bleuStatMetric, type BleuOptions, type BleuResult } from './bleu.js';
import { ChrfReferences, chrfSignatureFields, chrfStatMetric, type ChrfOptions } from './chrf.js';
import { columnSums } from '../significance/paired.js';
import { terFromSegmentStats, TerReferences, terSignatureFields, terStatMetric, type TerOptions } from './ter.js';

/** sacreBLEU's metric names as `-m` takes them, in the order it prints them (sorted). */
export const TEXT_METRICS = ['bleu', 'chrf', 'ter'] as const;
export type TextMetricKey = (typeof TEXT_METRICS)[number];

/** A score of some statistics, with what sacreBLEU prints after it. */
export interface TextMetricScore {
  /** BLEU, chrF2, chrF2++, TER. */
  name: string;
  /** Unrounded, on sacreBLEU's 0..100 scale. */
  score: number;
  /** BLEU's precisions, brevity penalty and lengths as sacreBLEU prints them; '' for chrF and TER. */
  verbose: string;
  /** BLEU's corpus statistics (counts, totals, precisions, bp, lengths); TER's edits and length. */
  bleu?: Omit<BleuResult, 'signature' | 'score'>;
  ter?: { numEdits: number; refLength: number };
}

export interface TextMetric {
  readonly key: TextMetricKey;
  /** sacreBLEU's name: BLEU, chrF2, chrF2++, TER. */
  readonly name: string;
  /** References per segment, or -1 when it varies (`nrefs:var`). */
  readonly nrefs: number;
  readonly segments: number;
  /** Statistics per segment. */
  readonly width: number;
  /** The score of summed statistics, for the significance tests. */
  readonly stat: StatMetric;
  /** The signature's fields in sacreBLEU's order, without a test's (signatureWithTest adds them). */
  readonly signatureFields: readonly SignatureField[];
  /** One row of `width` statistics per hypothesis (as many as the references have segments). */
  segmentStats(hypotheses: readonly string[]): ArrayLike<number>;
  /** The score of the rows in `stats` summed: a corpus, or one segment's row (sentence level). */
  scoreOf(stats: ArrayLike<number>): TextMetricScore;
}

export interface TextMetricOptions {
  bleu?: BleuOptions;
  chrf?: ChrfOptions;
  ter?: TerOptions;
}

type References = ReadonlyArray<ReadonlyArray<string | null>>;

/** BLEU's details after its score: `84.5/60.2/44.9/33.7 (BP = 0.873 ratio = 0.881 hyp_len = 2730 ref_len = 3100)`. */
export function bleuVerbose(b: Pick<BleuResult, 'precisions' | 'bp' | 'sysLen' | 'refLen'>): string {
  const ratio = b.refLen ? b.sysLen / b.refLen : 0;
  return `${b.precisions.map((p) => pyFixed(p, 1)).join('/')} (BP = ${pyFixed(b.bp, 3)} ratio = ${pyFixed(ratio, 3)} hyp_len = ${b.sysLen} ref_len = ${b.refLen})`;
}

function bleuMetric(references: References, opts: BleuOptions): TextMetric {
  const refs = new BleuReferences(references, opts);
  return {
    key: 'bleu',
    name: 'BLEU',
    nrefs: refs.nrefs,
    segments: refs.segments,
    width: BLEU_STATS_WIDTH,
    stat: bleuStatMetric(opts),
    signatureFields: bleuSignatureFields(refs.nrefs, opts),
    segmentStats: (h) => refs.segmentStats(h),
    scoreOf: (stats) => {
      // The references' signature passed in: its default would format one per call, and a
      // sentence-level run calls this once a segment.
      const { signature: _signature, score, ...b } = bleuFromSegmentStats(stats, opts, refs.signature);
      return { name: 'BLEU', score, verbose: bleuVerbose(b), bleu: { ...b, counts: b.counts.slice(0, BLEU_MAX_ORDER), totals: b.totals.slice(0, BLEU_MAX_ORDER) } };
    },
  };
}

function chrfMetric(references: References, opts: ChrfOptions): TextMetric {
  const refs = new ChrfReferences(references, opts);
  // Scored as a StatMetric scores a sample (column sums, then the F-score: chrfFromSegmentStats's
  // arithmetic) with the one scorer it holds, not one made per call (a sentence-level run scores every segment).
  const stat = chrfStatMetric(opts);
  return {
    key: 'chrf',
    name: refs.name,
    nrefs: refs.nrefs,
    segments: refs.segments,
    width: refs.width,
    stat,
    signatureFields: chrfSignatureFields(refs.nrefs, opts),
    segmentStats: (h) => refs.segmentStats(h),
    scoreOf: (stats) => ({ name: refs.name, score: stat.score(columnSums(stats, stat.width), 0), verbose: '' }),
  };
}

function terMetric(references: References, opts: TerOptions): TextMetric {
  const refs = new TerReferences(references, opts);
  return {
    key: 'ter',
    name: 'TER',
    nrefs: refs.nrefs,
    segments: refs.segments,
    width: refs.width,
    stat: terStatMetric(),
    signatureFields: terSignatureFields(refs.nrefs, opts),
    segmentStats: (h) => refs.segmentStats(h),
    scoreOf: (stats) => {
      const { score, numEdits, refLength } = terFromSegmentStats(stats, refs.signature);
      return { name: 'TER', score, verbose: '', ter: { numEdits, refLength } };
    },
  };
}

/** The metric `key` with its options, against `references` (`references[k][i]`: the k-th reference of segment i). */
export function textMetric(key: TextMetricKey, references: References, opts: TextMetricOptions = {}): TextMetric {
  if (key === 'bleu') return bleuMetric(references, opts.bleu ?? {});
  if (key === 'chrf') return chrfMetric(references, opts.chrf ?? {});
  return terMetric(references, opts.ter ?? {});
}

/** One segment's row of `stats` (sentence-level scores are the scores of single rows). */
export function segmentRow(stats: ArrayLike<number>, width: number, i: number): ArrayLike<number> {
  // A typed array's row is a view (the metrics' statistics are; scoreOf only reads it).
  if (ArrayBuffer.isView(stats)) return (stats as Int32Array | Float64Array).subarray(i * width, (i + 1) * width);
  return Array.prototype.slice.call(stats, i * width, (i + 1) * width) as number[];
}
