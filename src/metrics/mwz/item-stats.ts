/**
 * The sufficient statistics of mwzeval's metrics per dialogue (docs/significance.md): BLEU's
 * per-turn segment statistics, Inform and Success as 0/1 per dialogue, joint goal accuracy as 0/1
 * per turn; and, when asked, sacreBLEU's chrF and TER statistics per turn over BLEU's strings.
 * Corpus BLEU, chrF, TER, the Inform/Success rates and JGA are functions of their column sums.
 */
import { metricItems, ratioMetric, type RunItems } from '../significance/items.js';
import { bleuStatMetric } from '../text/bleu-significance.js';
import { chrfStatMetric, type ChrfOptions } from '../text/chrf.js';
import { terStatMetric } from '../text/ter.js';

export interface MwzDialogueItems {
  /** Per turn: sacreBLEU's segment statistics of the normalized response against its reference. */
  bleu?: number[][];
  /** Per turn: sacreBLEU's chrF statistics (3 per n-gram order) of the same strings as BLEU. */
  chrf?: number[][];
  /** Per turn: sacreBLEU's TER statistics [edits, reference length] of the same strings as BLEU. */
  ter?: number[][];
  /** mwzeval's standard Inform (every goal domain matched) and Success of the dialogue. */
  inform?: boolean;
  success?: boolean;
  /** Per turn: the predicted state equals the gold one (mwzeval's joint goal accuracy). */
  jointCorrect?: boolean[];
}

/** Dialogue id -> its statistics, in the input's order. */
export type MwzItems = Record<string, MwzDialogueItems>;

export const MWZ_METRICS = { bleu: 'BLEU', inform: 'Inform', success: 'Success', jga: 'JGA' } as const;

/**
 * The metrics every dialogue has statistics for, as paired tests take them; `chrf`: the options
 * its statistics were extracted with (the evaluator's), default sacreBLEU's.
 */
export function mwzItemStats(items: MwzItems, opts: { chrf?: ChrfOptions } = {}): RunItems {
  const entries = Object.entries(items);
  const all = (f: (d: MwzDialogueItems) => unknown) => entries.length > 0 && entries.every(([, d]) => f(d) !== undefined);
  const out: RunItems = {};
  type TurnKey = 'bleu' | 'chrf' | 'ter' | 'jointCorrect';
  const turnIds = (key: TurnKey) => entries.flatMap(([id, d]) => d[key]!.map((_, k) => `${id}/${k}`));
  const turnDialogues = (key: TurnKey) => entries.flatMap(([id, d]) => d[key]!.map(() => id));
  if (all((d) => d.bleu)) {
    out.bleu = metricItems(bleuStatMetric(), 'turn', turnIds('bleu'), turnDialogues('bleu'), entries.flatMap(([, d]) => d.bleu!));
  }
  if (all((d) => d.chrf)) out.chrf = metricItems(chrfStatMetric(opts.chrf), 'turn', turnIds('chrf'), turnDialogues('chrf'), entries.flatMap(([, d]) => d.chrf!));
  if (all((d) => d.ter)) out.ter = metricItems(terStatMetric(), 'turn', turnIds('ter'), turnDialogues('ter'), entries.flatMap(([, d]) => d.ter!));
  const ids = entries.map(([id]) => id);
  if (all((d) => d.inform)) out.inform = metricItems(ratioMetric(MWZ_METRICS.inform), 'dialogue', ids, ids, entries.map(([, d]) => [d.inform ? 1 : 0, 1]));
  if (all((d) => d.success)) out.success = metricItems(ratioMetric(MWZ_METRICS.success), 'dialogue', ids, ids, entries.map(([, d]) => [d.success ? 1 : 0, 1]));
  if (all((d) => d.jointCorrect)) {
    // mwzeval divides by (turns + 1e-10).
    const rows = entries.flatMap(([, d]) => d.jointCorrect!.map((ok) => [ok ? 1 : 0, 1]));
    out.jga = metricItems(ratioMetric(MWZ_METRICS.jga, { epsilon: 1e-10 }), 'turn', turnIds('jointCorrect'), turnDialogues('jointCorrect'), rows);
  }
  return out;
}
