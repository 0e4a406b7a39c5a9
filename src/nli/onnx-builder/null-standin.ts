import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TODEVAL_VERSION } from '../../version.js';
import { labelIndexFromConfig } from '../labels.js';
import type { NliLabel } from '../types.js';
import type { LogitOrder } from './lexical-graph.js';
import { copyTokenizerFiles, resolveTokenizerDir } from './model-dir.js';
import { DataType, graphProto, modelProto, nodeProto, tensorProto, valueInfoProto } from './onnx-proto.js';
import { writeMessageToFile, type MessageWriter } from './protobuf.js';
import { readConfigFile, ROBERTA_LARGE_MNLI_CONFIG } from './roberta-config.js';
import { ATTENTION_MASK, GraphBuilder, INPUT_IDS, LOGITS } from './roberta-graph.js';

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

export interface NullStandinManifest {
  kind: typeof NULL_STANDIN;
  builderVersion: string;
  producer: string;
  label: NliLabel;
  onnxFile: string;
  bytes: number;
  sha256: string;
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

  const dynamic = ['batch_size', 'sequence_length'];
  const graph = graphProto({
    name: 'null_standin',
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [valueInfoProto(INPUT_IDS, DataType.INT64, dynamic), valueInfoProto(ATTENTION_MASK, DataType.INT64, dynamic)],
    outputs: [valueInfoProto(LOGITS, DataType.FLOAT, ['batch_size', 3])],
  });
  return modelProto(graph, { name: 'todeval-onnx-builder', version: producerVersion }, `null-standin: constant ${label} logits, NOT a language model`);
}

/**
 * Writes a model directory in the hub layout (onnx/model.onnx, the real tokenizer, a config naming
 * the stand-in) that `--model DIR` loads like the real export. Returns the manifest.
 */
export function buildNullStandin(opts: BuildNullStandinOptions): NullStandinManifest {
  const tokenizerDir = resolveTokenizerDir(opts.tokenizerDir);
  const configFile = path.join(tokenizerDir, 'config.json');
  const base = existsSync(configFile) ? readConfigFile(configFile) : ROBERTA_LARGE_MNLI_CONFIG;
  const order = labelIndexFromConfig(base, configFile);
  const label = opts.label ?? DEFAULT_NULL_LABEL;

  const onnxFile = path.join('onnx', 'model.onnx');
  mkdirSync(path.join(opts.outDir, 'onnx'), { recursive: true });
  const model = buildNullModel(order, label, `${TODEVAL_VERSION}+${NULL_STANDIN}${NULL_STANDIN_VERSION}`);
  const written = writeMessageToFile(model, path.join(opts.outDir, onnxFile));

  copyTokenizerFiles(tokenizerDir, opts.outDir);
  // No RoBERTa architecture here: a config that said so would make the directory pass for a real model.
  const config = { ...base, architectures: ['ConstantLogitsStandin'], todeval_standin: NULL_STANDIN };
  writeFileSync(path.join(opts.outDir, 'config.json'), JSON.stringify(config, null, 2) + '\n');

  const manifest: NullStandinManifest = {
    kind: NULL_STANDIN,
    builderVersion: NULL_STANDIN_VERSION,
    producer: `todeval ${TODEVAL_VERSION}`,
    label,
    onnxFile: onnxFile.split(path.sep).join('/'),
    bytes: written.bytes,
    sha256: written.sha256,
  };
  writeFileSync(path.join(opts.outDir, NULL_STANDIN_MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}
