import { InputError } from '../util/errors.js';
import type { NliLabel, NliProbs } from './types.js';

/**
 * Position of each MNLI class in the model's logits, read from config.json `id2label`. A two-label
 * model ("entailment" / "not_entailment") has no neutral/contradiction split: `neutral` is the
 * not-entailment logit and `contradiction` is -1 (see twoLabelRule).
 */
export type LabelIndex = Record<NliLabel, number>;

const NAMES: Record<string, NliLabel | 'not_entailment'> = {
  entailment: 'entailment',
  entail: 'entailment',
  entailed: 'entailment',
  neutral: 'neutral',
  contradiction: 'contradiction',
  contradict: 'contradiction',
  not_entailment: 'not_entailment',
  non_entailment: 'not_entailment',
  'not-entailment': 'not_entailment',
  'non-entailment': 'not_entailment',
  not_entailed: 'not_entailment',
};

/**
 * The documented rule for two-label models (docs/nli.md "Labels"): the not-entailment probability
 * is reported as neutral and contradiction as 0. Entailment, which SGSAcc's verdicts rest on, is
 * the model's own; a sentence is never "contradicted" (it is "unsupported" instead), since the
 * model does not say whether the facts contradict it or merely do not entail it.
 */
export const TWO_LABEL_RULE = 'not_entailment -> neutral, contradiction = 0';

/**
 * Exports differ in label order (roberta-large-mnli: 0 contradiction, 2 entailment; others the
 * reverse) and case, so the order is never assumed: the names decide, and a config without
 * recognisable names is refused in one line naming its labels.
 */
export function labelIndexFromConfig(config: Record<string, unknown>, file?: string): LabelIndex {
  const id2label = config.id2label as Record<string, string> | undefined;
  if (!id2label || typeof id2label !== 'object') {
    throw new InputError('model config has no id2label: cannot tell which logit is entailment', { file });
  }
  const found: Partial<Record<NliLabel | 'not_entailment', number>> = {};
  const names = Object.values(id2label).map(String);
  for (const [id, name] of Object.entries(id2label)) {
    const label = NAMES[String(name).trim().toLowerCase()];
    if (!label) continue;
    const index = Number(id);
    if (!Number.isInteger(index) || index < 0 || index >= names.length) throw new InputError(`id2label has a bad id "${id}"`, { file });
    if (found[label] !== undefined) throw new InputError(`id2label names ${label} twice`, { file });
    found[label] = index;
  }
  if (names.length === 2 && found.entailment !== undefined && found.not_entailment !== undefined) {
    return { entailment: found.entailment, neutral: found.not_entailment, contradiction: -1 };
  }
  const missing = (['entailment', 'neutral', 'contradiction'] as const).filter((l) => found[l] === undefined);
  if (missing.length > 0 || found.not_entailment !== undefined) {
    throw new InputError(`id2label lacks ${missing.length > 0 ? missing.join(', ') : 'a usable set'} (labels: ${names.join(', ')}): not an MNLI model (three labels) nor an entailment / not_entailment one`, { file });
  }
  return found as LabelIndex;
}

/** Whether the index is of a two-label (entailment / not_entailment) model. */
export function isTwoLabel(index: LabelIndex): boolean {
  return index.contradiction < 0;
}

/** Softmax over one row of logits, mapped to named probabilities (computed in float64). */
export function probsFromLogits(logits: ArrayLike<number>, offset: number, width: number, index: LabelIndex): NliProbs {
  if (width === 3 && index.contradiction >= 0) return probsOfThree(logits, offset, index);
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < width; j++) max = Math.max(max, Number(logits[offset + j]));
  let sum = 0;
  const ex = new Array<number>(width);
  for (let j = 0; j < width; j++) {
    ex[j] = Math.exp(Number(logits[offset + j]) - max);
    sum += ex[j];
  }
  return {
    entailment: ex[index.entailment] / sum,
    neutral: ex[index.neutral] / sum,
    // A two-label model (TWO_LABEL_RULE): its not-entailment mass is all in neutral.
    contradiction: index.contradiction < 0 ? 0 : ex[index.contradiction] / sum,
  };
}

/**
 * The same arithmetic as the general case, in the same order, for the usual three logits: no array
 * per row (a run makes hundreds of thousands of these).
 */
function probsOfThree(logits: ArrayLike<number>, offset: number, index: LabelIndex): NliProbs {
  const l0 = Number(logits[offset]);
  const l1 = Number(logits[offset + 1]);
  const l2 = Number(logits[offset + 2]);
  const max = Math.max(Math.max(Math.max(Number.NEGATIVE_INFINITY, l0), l1), l2);
  const e0 = Math.exp(l0 - max);
  const e1 = Math.exp(l1 - max);
  const e2 = Math.exp(l2 - max);
  const sum = 0 + e0 + e1 + e2;
  const at = (i: number) => (i === 0 ? e0 : i === 1 ? e1 : e2) / sum;
  return { entailment: at(index.entailment), neutral: at(index.neutral), contradiction: at(index.contradiction) };
}
