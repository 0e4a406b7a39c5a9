// The runtime faults of test/helpers/faults.ts (a worker thread that exits, a tokenizer that throws),
// in plain JavaScript so that a child process of the built CLI can load them before the CLI
// (test/helpers/fault-preload.mjs) without tsx compiling anything. Types: fault-inject.d.mts.
import { syncBuiltinESMExports } from 'node:module';
import workerThreads from 'node:worker_threads';

function dieAtRunPrelude(run) {
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
function startCode(code, options) {
  if (options.eval === true && typeof code === 'string') return code;
  if (code instanceof URL && code.protocol === 'file:') return `import(${JSON.stringify(code.href)});`;
  return undefined;
}

/**
 * Installs `fault` into the first matching thread started from now on, through worker_threads.Worker
 * for every module of this process (ESM importers see it through syncBuiltinESMExports); returns the
 * undo. The product's workers are matched whether they start from the TypeScript sources (through
 * tsx) or compiled (dist/).
 */
export function injectThreadFault(fault) {
  let struck = false;
  return replaceWorkerClass(
    (Original) =>
      class FaultyWorker extends Original {
        constructor(code, options = {}) {
          // One thread is struck: a thread started later (a replacement) is sound.
          const start = startCode(code, options);
          const matched = !struck && start !== undefined && start.includes(`/${fault.module}.`);
          if (matched) struck = true;
          if (!matched || start === undefined) super(code, options);
          else if (fault.kind === 'exit-before-ready') super('process.exit(0)', { ...options, eval: true });
          else super(`${dieAtRunPrelude(fault.run)}\n${start}`, { ...options, eval: true });
        }
      },
  );
}

/**
 * worker_threads.Worker replaced by `make(Original)` for every module of this process (ESM importers
 * see it through syncBuiltinESMExports); returns the undo. The one place the tests swap the class.
 */
export function replaceWorkerClass(make) {
  const Original = workerThreads.Worker;
  workerThreads.Worker = make(Original);
  syncBuiltinESMExports();
  return () => {
    workerThreads.Worker = Original;
    syncBuiltinESMExports();
  };
}

/**
 * `Tokenizer.prototype.ids` (the PairTokenizer class the process runs: the sources' or dist/'s) throws
 * on any text containing `marker` (the runner's tokenizer, on the calling thread; tokenizer threads
 * encode into its memo, and the runner still reads each side through ids()). Returns the undo.
 */
export function injectTokenizerFault(marker, Tokenizer) {
  const original = Tokenizer.prototype.ids;
  Tokenizer.prototype.ids = function (text) {
    if (text.includes(marker)) throw new Error(`test fault: the tokenizer cannot encode "${marker}"`);
    return original.call(this, text);
  };
  return () => {
    Tokenizer.prototype.ids = original;
  };
}

/**
 * The fault named by $TODEVAL_TEST_FAULT, for a child process (test/helpers/fault-preload.mjs):
 * `session-worker:exit-before-ready`, `tokenizer-worker:exit-before-ready`, `session-worker:die-at-run:N`
 * or `tokenizer:MARKER` (patching `Tokenizer`).
 */
export function injectNamedFault(spec, Tokenizer) {
  const [what, kind, n] = spec.split(':');
  if (what === 'tokenizer') injectTokenizerFault(spec.slice('tokenizer:'.length), Tokenizer);
  else if (kind === 'exit-before-ready') injectThreadFault({ kind, module: what });
  else if (kind === 'die-at-run') injectThreadFault({ kind, module: what, run: Number(n) });
  else throw new Error(`unknown TODEVAL_TEST_FAULT ${spec}`);
}
