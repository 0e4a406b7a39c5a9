import { partialRatioOrBelow } from './fuzzy.js';
import type { BeliefState } from './normalize-state.js';

export interface DstScores {
  joint_accuracy: number;
  slot_f1: number;
  slot_precision: number;
  slot_recall: number;
}

function flatten(state: BeliefState): Map<string, string> {
  const out = new Map<string, string>();
  for (const [domain, slots] of Object.entries(state)) {
    for (const [slot, value] of Object.entries(slots)) out.set(`${domain}\u0000${slot}`, value);
  }
  return out;
}

/**
 * mwzeval's DST scores on normalized states: a turn is jointly correct when both states have the
 * same domain-slot pairs and every value matches with partial_ratio above the threshold (95);
 * slot precision/recall count matching pairs. Scales follow mwzeval: joint accuracy and F1 in
 * percent, precision and recall as fractions, with its 1e-10 smoothing.
 */
export function dstScores(pairs: { hyp: BeliefState; ref: BeliefState }[], fuzzyRatio = 95): DstScores {
  return dstScoresOfTurns(pairs.map(({ hyp, ref }) => dstTurn(hyp, ref, fuzzyRatio)));
}

/** dstScores from each turn's dstTurn (a caller that keeps the turns, for per-dialogue items, compares each pair once). */
export function dstScoresOfTurns(turns: readonly DstTurn[]): DstScores {
  let joint = 0;
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const o of turns) {
    tp += o.tp;
    fp += o.fp;
    fn += o.fn;
    if (o.jointCorrect) joint++;
  }
  const p = tp / (tp + fp + 1e-10);
  const rc = tp / (tp + fn + 1e-10);
  return {
    joint_accuracy: (joint / (turns.length + 1e-10)) * 100,
    slot_f1: ((2 * p * rc) / (p + rc + 1e-10)) * 100,
    slot_precision: p,
    slot_recall: rc,
  };
}

/** One turn of dstScores: jointly correct, and its matching / spurious / missed slot pairs. */
export interface DstTurn {
  jointCorrect: boolean;
  tp: number;
  fp: number;
  fn: number;
}

/** dstScores' comparison of one turn's predicted and gold states. */
export function dstTurn(hyp: BeliefState, ref: BeliefState, fuzzyRatio = 95): DstTurn {
  const matches = (a: string, b: string): boolean => partialRatioOrBelow(a, b, fuzzyRatio) > fuzzyRatio;
  const h = flatten(hyp);
  const r = flatten(ref);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let exact = h.size === r.size && [...r.keys()].every((k) => h.has(k));
  for (const [k, v] of h) {
    const rv = r.get(k);
    if (rv !== undefined && matches(v, rv)) tp++;
    else {
      fp++;
      exact = false;
    }
  }
  for (const [k, v] of r) {
    const hv = h.get(k);
    if (hv === undefined || !matches(hv, v)) fn++;
  }
  return { jointCorrect: exact, tp, fp, fn };
}
