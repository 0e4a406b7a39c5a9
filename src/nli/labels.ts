import { InputError } from '../util/errors.js';
import type { NliLabel, NliProbs } from './types.js';

/** Position of each MNLI class in the model's logits, read from config.json `id2label`. */
export type LabelIndex = Record<NliLabel, number>;

const NAMES: Record<string, NliLabel> = {
  entailment: 'entailment',
  entail: 'entailment',
  neutral: 'neutral',
  contradiction: 'contradiction',
  contradict: 'contradiction',
};

/**
 * Exports differ in label order (roberta-large-mnli: 0 contradiction, 2 entailment; others the
 * reverse), so the order is never assumed: a config without recognisable names is rejected.
 */
export function labelIndexFromConfig(config: Record<string, unknown>, file?: string): LabelIndex {
  const id2label = config.id2label as Record<string, string> | undefined;
  if (!id2label || typeof id2label !== 'object') {
    throw new InputError('model config has no id2label: cannot tell which logit is entailment', { file });
  }
  const found: Partial<LabelIndex> = {};
  for (const [id, name] of Object.entries(id2label)) {
    const label = NAMES[String(name).toLowerCase()];
    if (!label) continue;
    const index = Number(id);
    if (!Number.isInteger(index) || index < 0) throw new InputError(`id2label has a bad id "${id}"`, { file });
    if (found[label] !== undefined) throw new InputError(`id2label names ${label} twice`, { file });
    found[label] = index;
  }
  const missing = (['entailment', 'neutral', 'contradiction'] as const).filter((l) => found[l] === undefined);
  if (missing.length > 0) {
    throw new InputError(`id2label lacks ${missing.join(', ')} (got ${JSON.stringify(id2label)}): not an MNLI model`, { file });
  }
  return found as LabelIndex;
}

/** Softmax over one row of logits, mapped to named probabilities (computed in float64). */
export function probsFromLogits(logits: ArrayLike<number>, offset: number, width: number, index: LabelIndex): NliProbs {
  if (width === 3) return probsOfThree(logits, offset, index);
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
    contradiction: ex[index.contradiction] / sum,
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
