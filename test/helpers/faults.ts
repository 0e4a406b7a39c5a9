import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { shippedTokenizerDir } from '../../src/nli/onnx-builder/model-dir.js';
import { DataType, graphProto, modelProto, nodeProto, tensorProto, valueInfoProto } from '../../src/nli/onnx-builder/onnx-proto.js';
import { writeMessageToFile } from '../../src/nli/onnx-builder/protobuf.js';
import { ATTENTION_MASK, GraphBuilder, INPUT_IDS, LOGITS } from '../../src/nli/onnx-builder/roberta-graph.js';
import { closeIdleInferenceThreads } from '../../src/nli/session-thread.js';
import { PairTokenizer } from '../../src/nli/tokenizer.js';
import { injectThreadFault as injectThreadFaultInto, injectTokenizerFault as injectTokenizerFaultInto, type ThreadFault } from './fault-inject.mjs';

// Fault injection for the NLI runner's failure paths (test/nli-faults.test.ts). Each fault is real
// where it can be (a real ONNX graph that fails, a real worker thread that exits) and a patch of one
// method where it cannot (a tokenizer that throws): nothing here is used by the product. The runtime
// faults live in fault-inject.mjs (plain JavaScript, which the built CLI's children preload).

/**
 * A model directory (the shipped tokenizer and config) whose graph reshapes input_ids to [-1, 7]:
 * a batch whose rows x width is a multiple of 7 gets constant neutral logits, any other batch makes
 * ONNX Runtime fail inside the run. The shape of a batch decides, so one run fails and the next
 * one, of another shape, does not.
 */
export function buildShapeFaultModel(dir: string): string {
  const tok = shippedTokenizerDir();
  mkdirSync(path.join(dir, 'onnx'), { recursive: true });
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'config.json']) copyFileSync(path.join(tok, f), path.join(dir, f));
  const g = new GraphBuilder();
  // roberta-large-mnli's label order: contradiction, neutral, entailment.
  g.initializers.push(tensorProto('row', DataType.FLOAT, [1, 3], new Uint8Array(new Float32Array([0, 4, 0]).buffer)));
  const axes1 = g.constInt64('axes_1', [1], [1]);
  const sevens = g.constInt64('shape_sevens', [-1, 7], [2]);
  const zero = g.constFloat('zero', 0);
  const rows = g.op('ReduceSum', [g.op('Cast', [ATTENTION_MASK], { to: DataType.FLOAT }), axes1], { keepdims: 1 }); // [B, 1]
  const reshaped = g.op('Reshape', [INPUT_IDS, sevens], {}, 'sevens');
  const total = g.op('ReduceSum', [g.op('Cast', [reshaped], { to: DataType.FLOAT })], { keepdims: 0 }); // scalar
  const zeros = g.op('Add', [g.op('Mul', [rows, zero]), g.op('Mul', [total, zero])]);
  g.nodes.push(nodeProto('Add', [zeros, 'row'], [LOGITS], 'logits_output'));
  const dynamic = ['batch_size', 'sequence_length'];
  const graph = graphProto({
    name: 'shape_fault',
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [valueInfoProto(INPUT_IDS, DataType.INT64, dynamic), valueInfoProto(ATTENTION_MASK, DataType.INT64, dynamic)],
    outputs: [valueInfoProto(LOGITS, DataType.FLOAT, ['batch_size', 3])],
  });
  writeMessageToFile(modelProto(graph, { name: 'todeval-test', version: '1' }, 'test fault: fails on batches whose size is not a multiple of 7'), path.join(dir, 'onnx', 'model.onnx'));
  writeFileSync(path.join(dir, 'FAULT.txt'), 'test model: reshapes input_ids to [-1, 7]\n');
  return dir;
}

/** Does the shape-fault model run a batch of `rows` rows of `width` tokens? */
export const shapeFaultRuns = (rows: number, width: number): boolean => (rows * width) % 7 === 0;

export type { ThreadFault } from './fault-inject.mjs';

/**
 * The fault in the next thread started of its module (fault-inject.mjs). The inference threads this
 * process keeps for reuse are ended first, so that the next session starts the thread that is struck.
 */
export function injectThreadFault(fault: ThreadFault): () => void {
  void closeIdleInferenceThreads();
  return injectThreadFaultInto(fault);
}

/** The sources' PairTokenizer.ids throws on any text containing `marker` (fault-inject.mjs); returns the undo. */
export function injectTokenizerFault(marker: string): () => void {
  return injectTokenizerFaultInto(marker, PairTokenizer);
}
