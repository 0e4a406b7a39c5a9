import { mkdirSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import workerThreads, { type WorkerOptions } from 'node:worker_threads';
import { shippedTokenizerDir } from '../../src/nli/onnx-builder/model-dir.js';
import { DataType, graphProto, modelProto, nodeProto, tensorProto, valueInfoProto } from '../../src/nli/onnx-builder/onnx-proto.js';
import { writeMessageToFile } from '../../src/nli/onnx-builder/protobuf.js';
import { ATTENTION_MASK, GraphBuilder, INPUT_IDS, LOGITS } from '../../src/nli/onnx-builder/roberta-graph.js';
import { PairTokenizer } from '../../src/nli/tokenizer.js';
import { copyFileSync } from 'node:fs';

// Fault injection for the NLI runner's failure paths (test/nli-faults.test.ts). Each fault is real
// where it can be (a real ONNX graph that fails, a real worker thread that exits) and a patch of one
// method where it cannot (a tokenizer that throws): nothing here is used by the product.

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

/**
 * A fault of a worker thread the product starts (matched by its module name, e.g. session-worker):
 * - exit-before-ready: the thread exits (code 0, no error event) before it ever answers;
 * - die-at-run: the thread takes runs until the `run`-th message of type 'run' reaches it; from then
 *   on it takes no message, and exits (code 1) once no run is inside ONNX Runtime (an exit in the
 *   middle of ONNX Runtime's own callback would abort the process, which is not the fault tested).
 */
export type ThreadFault = { kind: 'exit-before-ready'; module: string } | { kind: 'die-at-run'; module: string; run: number };

function dieAtRunPrelude(run: number): string {
  // Runs in the worker before its module: the module's message listener sees the messages before the
  // fault only. RUNNING (index 0 of workerData.state) counts runs inside ONNX Runtime.
  return `{
  const { parentPort, workerData } = require('node:worker_threads');
  const on = parentPort.on.bind(parentPort);
  let runs = 0, dead = false;
  parentPort.on = (event, listener) => on(event, event !== 'message' ? listener : (m) => {
    if (!dead && m && m.type === 'run' && ++runs === ${run}) {
      dead = true;
      const state = new Int32Array(workerData.state);
      const exitWhenIdle = () => (Atomics.load(state, 0) === 0 ? process.exit(1) : setTimeout(exitWhenIdle, 1));
      exitWhenIdle();
    }
    if (!dead) listener(m);
  });
}
`;
}

/**
 * The code an eval'd thread runs to start the module a Worker was given: the TypeScript sources'
 * bootstrap (code run through tsx, `eval: true`) as it is, a compiled module (a file URL: a build,
 * or the tests' current dist/, src/nli/worker-entry.ts) imported.
 */
function startCode(code: string | URL, options: WorkerOptions): string | undefined {
  if (options.eval === true && typeof code === 'string') return code;
  if (code instanceof URL && code.protocol === 'file:') return `import(${JSON.stringify(code.href)});`;
  return undefined;
}

/**
 * Installs `fault` into the first matching thread started from now on, through worker_threads.Worker for every module of this process (ESM importers see
 * it through syncBuiltinESMExports); returns the undo. The product's workers are matched whether
 * they start from the TypeScript sources (through tsx) or compiled (dist/).
 */
export function injectThreadFault(fault: ThreadFault): () => void {
  const Original = workerThreads.Worker;
  let struck = false;
  class FaultyWorker extends Original {
    constructor(code: string | URL, options: WorkerOptions = {}) {
      // One thread is struck: a thread started later (a replacement) is sound.
      const start = startCode(code, options);
      const matched = !struck && start !== undefined && start.includes(`/${fault.module}.`);
      if (matched) struck = true;
      if (!matched || start === undefined) super(code, options);
      else if (fault.kind === 'exit-before-ready') super('process.exit(0)', { ...options, eval: true });
      else super(`${dieAtRunPrelude(fault.run)}\n${start}`, { ...options, eval: true });
    }
  }
  workerThreads.Worker = FaultyWorker;
  syncBuiltinESMExports();
  return () => {
    workerThreads.Worker = Original;
    syncBuiltinESMExports();
  };
}

/**
 * PairTokenizer.ids throws on any text containing `marker` (the runner's tokenizer, on the calling
 * thread; tokenizer threads encode into its memo, and the runner still reads each side through
 * ids()). Returns the undo.
 */
export function injectTokenizerFault(marker: string): () => void {
  const original = PairTokenizer.prototype.ids;
  PairTokenizer.prototype.ids = function (this: PairTokenizer, text: string): Int32Array {
    if (text.includes(marker)) throw new Error(`test fault: the tokenizer cannot encode "${marker}"`);
    return original.call(this, text);
  };
  return () => {
    PairTokenizer.prototype.ids = original;
  };
}

/**
 * The fault named by $TODEVAL_TEST_FAULT, for a child process (test/helpers/fault-preload.ts):
 * `session-worker:exit-before-ready`, `tokenizer-worker:exit-before-ready`, `session-worker:die-at-run:N`
 * or `tokenizer:MARKER`.
 */
export function injectNamedFault(spec: string): void {
  const [what, kind, n] = spec.split(':');
  if (what === 'tokenizer') injectTokenizerFault(spec.slice('tokenizer:'.length));
  else if (kind === 'exit-before-ready') injectThreadFault({ kind, module: what });
  else if (kind === 'die-at-run') injectThreadFault({ kind, module: what, run: Number(n) });
  else throw new Error(`unknown TODEVAL_TEST_FAULT ${spec}`);
}
