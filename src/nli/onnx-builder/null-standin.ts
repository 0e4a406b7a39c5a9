import type { NliLabel } from '../types.js';
import type { LogitOrder } from './lexical-graph.js';
import { resolveTokenizerDir, standinBaseConfig, writeStandinDir, type StandinManifest } from './model-dir.js';
import { DataType, nodeProto, tensorProto } from './onnx-proto.js';
import type { MessageWriter } from './protobuf.js';
import { ATTENTION_MASK, GraphBuilder, LOGITS } from './roberta-graph.js';

/** What the stand-in is called everywhere: model ids, file names, notices. */
export const NULL_STANDIN = 'null-standin';
/** Written last into the model directory: marks it complete and tells the model store what it is. */
export const NULL_STANDIN_MANIFEST = 'null-standin.json';
/** Bump whenever the graph changes: cached builds are keyed by it. */
export const NULL_STANDIN_VERSION = '1';

/**
 * The class every pair gets. Neutral by default: then no candidate is ever entailed, so every action
 * also takes the context pass and the host side is measured on the most pairs a run can issue.
 */
export const DEFAULT_NULL_LABEL: NliLabel = 'neutral';

export interface NullStandinManifest extends StandinManifest<typeof NULL_STANDIN> {
  label: NliLabel;
}

export interface BuildNullStandinOptions {
  outDir: string;
  /** Where tokenizer.json and config.json come from; default: the shipped roberta-large-mnli (models/). */
  tokenizerDir?: string;
  label?: NliLabel;
}

/**
 * A graph with the hub export's inputs and outputs whose logits are a constant row (4 for `label`,
 * 0 for the others) for every pair: the model taken out, so a run through it times everything around
 * the model (tokenization, feeds, ONNX Runtime's per-run cost, decisions, writing). The row count
 * comes from a sum over the attention mask, the cheapest op that reads a [batch, sequence] input.
 */
export function buildNullModel(order: LogitOrder, label: NliLabel, producerVersion: string): MessageWriter {
  const g = new GraphBuilder();
  const row = new Float32Array(3);
  row[order[label]] = 4;
  g.initializers.push(tensorProto('null_logits_row', DataType.FLOAT, [1, 3], new Uint8Array(row.buffer)));
  const axes1 = g.constInt64('const_axes_1', [1], [1]);
  const zero = g.constFloat('const_zero', 0);
  const rows = g.op('ReduceSum', [g.op('Cast', [ATTENTION_MASK], { to: DataType.FLOAT }), axes1], { keepdims: 1 }, 'mask_sum'); // [B, 1]
  g.nodes.push(nodeProto('Add', [g.op('Mul', [rows, zero], {}, 'zeros'), 'null_logits_row'], [LOGITS], 'logits_output'));

  return g.nliModel('null_standin', 3, producerVersion, `null-standin: constant ${label} logits, NOT a language model`);
}

/** Builds the null stand-in's model directory (see writeStandinDir). Returns the manifest. */
export function buildNullStandin(opts: BuildNullStandinOptions): NullStandinManifest {
  const tokenizerDir = resolveTokenizerDir(opts.tokenizerDir);
  const { base, order } = standinBaseConfig(tokenizerDir);
  const label = opts.label ?? DEFAULT_NULL_LABEL;
  return writeStandinDir({
    kind: NULL_STANDIN,
    version: NULL_STANDIN_VERSION,
    manifestFile: NULL_STANDIN_MANIFEST,
    outDir: opts.outDir,
    tokenizerDir,
    model: (producerVersion) => buildNullModel(order, label, producerVersion),
    config: { ...base, architectures: ['ConstantLogitsStandin'], todeval_standin: NULL_STANDIN },
    details: { label },
  });
}
