import { DataType, nodeProto, tensorProto } from './onnx-proto.js';
import type { MessageWriter } from './protobuf.js';
import { ATTENTION_MASK, GraphBuilder, INPUT_IDS, LOGITS } from './roberta-graph.js';
import type { LexicalTables } from './lexical-vocab.js';

/** Where each MNLI class sits in the logits (from the config's id2label, as the runner reads it). */
export interface LogitOrder {
  entailment: number;
  neutral: number;
  contradiction: number;
}

export interface LexicalDecision {
  /** Entailment when the share of the hypothesis's content tokens found in the premise reaches this. */
  threshold: number;
  /** Entailment logit = slope * (share - threshold); neutral = 0. */
  slope: number;
  /** A negation on one side only adds this to contradiction and takes it from entailment. */
  negationWeight: number;
  /** A value-like hypothesis token (a name, a number) absent from the premise takes this from entailment. */
  missingValueWeight: number;
  /** Contradiction logit without a negation mismatch (below neutral's 0). */
  contradictionBase: number;
}

export const DEFAULT_LEXICAL_DECISION: LexicalDecision = { threshold: 0.6, slope: 12, negationWeight: 16, missingValueWeight: 16, contradictionBase: -4 };

/**
 * A graph with the hub export's inputs and outputs that decides by token overlap, not a language
 * model. In the pair `<s> premise </s></s> hypothesis </s>` the segments are told apart by counting
 * `</s>` tokens (0 before the first: premise; 2 after the second: hypothesis). Each token's canonical
 * word comes from a baked-in table; the share of the hypothesis's content words present anywhere in
 * the premise becomes the entailment logit, a value-like token (name, number) of the hypothesis missing
 * from the premise blocks entailment, and a negation word on one side only becomes contradiction.
 * Everything is per row, so a pair's logits do not depend on the batch it is in or on padding.
 */
export function buildLexicalModel(
  tables: LexicalTables,
  ids: { sep: number },
  order: LogitOrder,
  decision: LexicalDecision,
  producerVersion: string,
): MessageWriter {
  const g = new GraphBuilder();
  const vocab = tables.canon.length;
  const canonTable = 'lexical_canonical_word';
  g.initializers.push(
    tensorProto(canonTable, DataType.INT64, [vocab], new Uint8Array(BigInt64Array.from(tables.canon, (v) => BigInt(v)).buffer)),
  );
  const negTable = 'lexical_negation_word';
  g.initializers.push(tensorProto(negTable, DataType.FLOAT, [vocab], new Uint8Array(Float32Array.from(tables.negation).buffer)));
  const valueTable = 'lexical_value_like';
  g.initializers.push(tensorProto(valueTable, DataType.FLOAT, [vocab], new Uint8Array(Float32Array.from(tables.valueLike).buffer)));

  const sep = g.constInt64('const_sep_token_id', [ids.sep], []);
  const zeroI = g.constInt64('const_zero_i64', [0], []);
  const twoI = g.constInt64('const_two_i64', [2], []);
  const axis1 = g.constInt64('const_axis_1', [1], []);
  const axes1 = g.constInt64('const_axes_1', [1], [1]);
  const axes2 = g.constInt64('const_axes_2', [2], [1]);
  const one = g.constFloat('const_one', 1);
  const zero = g.constFloat('const_zero', 0);
  const threshold = g.constFloat('const_threshold', decision.threshold);
  const slope = g.constFloat('const_slope', decision.slope);
  const negW = g.constFloat('const_negation_weight', decision.negationWeight);
  const valueW = g.constFloat('const_missing_value_weight', decision.missingValueWeight);
  const cBase = g.constFloat('const_contradiction_base', decision.contradictionBase);
  const toFloat = (x: string) => g.op('Cast', [x], { to: DataType.FLOAT });
  const sum1 = (x: string, hint: string) => g.op('ReduceSum', [x, axes1], { keepdims: 1 }, hint); // [B, 1]

  const canon = g.op('Gather', [canonTable, INPUT_IDS], { axis: 0 }, 'canon'); // [B, S]
  // Segment index: number of </s> up to and including each token.
  const segment = g.op('CumSum', [g.op('Cast', [g.op('Equal', [INPUT_IDS, sep])], { to: DataType.INT64 }), axis1], {}, 'segment');
  const attended = toFloat(ATTENTION_MASK);
  const premise = g.op('Mul', [toFloat(g.op('Equal', [segment, zeroI])), attended], {}, 'premise_tokens');
  const hypothesis = g.op('Mul', [toFloat(g.op('Equal', [segment, twoI])), attended], {}, 'hypothesis_tokens');
  const content = toFloat(g.op('Greater', [canon, zeroI]));
  const premiseContent = g.op('Mul', [premise, content]);
  const hypothesisContent = g.op('Mul', [hypothesis, content], {}, 'hypothesis_content');

  // same[b, i, j] = token i and token j are the same word; times premise content j, summed over j.
  const same = toFloat(g.op('Equal', [g.op('Unsqueeze', [canon, axes2]), g.op('Unsqueeze', [canon, axes1])]));
  const hits = g.op('MatMul', [same, g.op('Unsqueeze', [premiseContent, axes2])]); // [B, S, 1]
  const inPremise = g.op('Min', [g.op('Squeeze', [hits, axes2]), one], {}, 'in_premise');
  const matched = sum1(g.op('Mul', [inPremise, hypothesisContent]), 'matched');
  const total = sum1(hypothesisContent, 'total');
  const share = g.op('Div', [matched, g.op('Max', [total, one])], {}, 'share');

  const negation = g.op('Gather', [negTable, INPUT_IDS], { axis: 0 }, 'negation');
  const negPremise = g.op('Min', [sum1(g.op('Mul', [negation, premise]), 'neg_premise'), one]);
  const negHypothesis = g.op('Min', [sum1(g.op('Mul', [negation, hypothesis]), 'neg_hypothesis'), one]);
  const mismatch = g.op('Abs', [g.op('Sub', [negPremise, negHypothesis])], {}, 'negation_mismatch');

  // Any value-like hypothesis token (a name, a number) that the premise lacks.
  const valueLike = g.op('Mul', [g.op('Gather', [valueTable, INPUT_IDS], { axis: 0 }), hypothesisContent], {}, 'hypothesis_values');
  const missingValue = g.op('Min', [sum1(g.op('Mul', [valueLike, g.op('Sub', [one, inPremise])]), 'values_missing'), one]);

  const overlap = g.op('Mul', [g.op('Sub', [share, threshold]), slope]);
  const penalties = g.op('Add', [g.op('Mul', [mismatch, negW]), g.op('Mul', [missingValue, valueW])]);
  const byLabel: Record<keyof LogitOrder, string> = {
    entailment: g.op('Sub', [overlap, penalties], {}, 'entailment'),
    neutral: g.op('Mul', [share, zero], {}, 'neutral'),
    contradiction: g.op('Add', [g.op('Mul', [mismatch, negW]), cBase], {}, 'contradiction'),
  };
  const columns = (Object.keys(byLabel) as (keyof LogitOrder)[]).sort((a, b) => order[a] - order[b]).map((k) => byLabel[k]);
  g.nodes.push(nodeProto('Concat', columns, [LOGITS], 'logits_output', { axis: 1 }));

  return g.nliModel(
    'lexical_standin',
    3,
    producerVersion,
    `lexical-standin: token-overlap NLI stand-in, NOT a language model (threshold ${decision.threshold})`,
  );
}
