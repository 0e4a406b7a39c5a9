/**
 * The sufficient statistics of score's per-turn results (docs/significance.md): every rate the
 * score report prints is a numerator over a denominator summed over turns, so a turn contributes
 * one [numerator, denominator] row per rate, and a resample of turns (or of whole dialogues) is
 * column sums: the NLI model is never re-run.
 */
import { dialogueOfTurn, metricItems, ratioMetric, type MetricItems, type RunItems } from '../significance/items.js';
// From bleu.js itself, not bleu-significance.js (which re-exports it): that module brings chrF, TER
// and the paired tests, 50 KB that every score start compiled for nothing.
import { BLEU_STATS_WIDTH, bleuStatMetric } from '../text/bleu.js';
import type { TurnScore } from './types.js';

export const SGSACC_METRICS = {
  sgsacc: 'SGSAcc',
  'sgsacc-all': 'SGSAcc (all)',
  hallucination: 'Hallucination',
  'hallucination-all': 'Hallucination (all)',
  'hallucination-sentences': 'Hallucination (sentences)',
  'hallucination-sentences-all': 'Hallucination (sentences, all)',
  ser: 'SER',
  bleu: 'BLEU',
} as const;

/**
 * Per-turn rows of each metric the turns support:
 * - sgsacc: [faithful, evaluated] over validated turns (every scorable turn with validation off);
 * - sgsacc-all: [faithful, scorable] over all turns (the report's unvalidated SGSAcc);
 * - hallucination(-all): [hallucinated, checked] the same two ways, when the run checked it;
 * - hallucination-sentences(-all): [unsupported sentences, checked sentences], with --granularity sentence;
 * - ser: [slot error, has checked values], when the records carry `slotError`;
 * - bleu: sacreBLEU's 10 segment statistics, when the records carry `bleu` (zeros without gold).
 */
export function turnItemStats(scores: readonly TurnScore[], opts: { validation: boolean }): RunItems {
  const ids = scores.map((s) => s.id);
  const dialogues = ids.map(dialogueOfTurn);
  const items = (id: keyof typeof SGSACC_METRICS, rows: number[][]): MetricItems =>
    metricItems(id === 'bleu' ? bleuStatMetric() : ratioMetric(SGSACC_METRICS[id]), 'turn', ids, dialogues, rows);
  const inValidated = (v: string | undefined) => !opts.validation || v === 'validated';
  const out: RunItems = {};
  if (opts.validation) {
    out.sgsacc = items('sgsacc', scores.map((s) => (s.faithful !== null && inValidated(s.validation) ? [s.faithful ? 1 : 0, 1] : [0, 0])));
  }
  out['sgsacc-all'] = items('sgsacc-all', scores.map((s) => (s.faithful !== null ? [s.faithful ? 1 : 0, 1] : [0, 0])));
  if (scores.length > 0 && scores.every((s) => s.hallucination !== undefined)) {
    const checked = (s: TurnScore) => s.hallucination!.check === 'checked' && s.hallucination!.hallucinated !== null;
    if (opts.validation) {
      out.hallucination = items('hallucination', scores.map((s) => (checked(s) && inValidated(s.hallucination!.validation) ? [s.hallucination!.hallucinated ? 1 : 0, 1] : [0, 0])));
    }
    out['hallucination-all'] = items('hallucination-all', scores.map((s) => (checked(s) ? [s.hallucination!.hallucinated ? 1 : 0, 1] : [0, 0])));
  }
  if (scores.length > 0 && scores.every((s) => s.sentences !== undefined)) {
    if (opts.validation) out['hallucination-sentences'] = items('hallucination-sentences', sentenceRows(scores, (s) => inValidated(s.hallucination?.validation)));
    out['hallucination-sentences-all'] = items('hallucination-sentences-all', sentenceRows(scores, () => true));
  }
  if (scores.length > 0 && scores.every((s) => s.slotError !== undefined)) {
    out.ser = items('ser', scores.map((s) => (s.slotError === null || s.slotError === undefined ? [0, 0] : [s.slotError ? 1 : 0, 1])));
  }
  if (scores.length > 0 && scores.every((s) => s.bleu !== undefined)) {
    const zero = new Array<number>(BLEU_STATS_WIDTH).fill(0);
    out.bleu = items('bleu', scores.map((s) => s.bleu ?? zero));
  }
  return out;
}

/** Per-turn [unsupported sentences, checked sentences]: the rows a bootstrap of the sentence rate resamples. */
export function sentenceRows(scores: readonly TurnScore[], inRate: (s: TurnScore) => boolean): number[][] {
  return scores.map((s) => {
    if (!s.sentences || !inRate(s)) return [0, 0];
    const checked = s.sentences.sentences.filter((v) => v.verdict === 'supported' || v.verdict === 'unsupported' || v.verdict === 'contradicted');
    return [checked.filter((v) => v.verdict !== 'supported').length, checked.length];
  });
}
