// Types of fault-inject.mjs (plain JavaScript, so the built CLI's children load it without tsx).

/**
 * A fault of a worker thread the product starts (matched by its module name, e.g. session-worker):
 * - exit-before-ready: the thread exits (code 0, no error event) before it ever answers;
 * - die-at-run: the thread takes runs until the `run`-th message of type 'run' reaches it; from then
 *   on it takes no message, and exits (code 1) once no run is inside ONNX Runtime (an exit in the
 *   middle of ONNX Runtime's own callback would abort the process, which is not the fault tested).
 */
export type ThreadFault = { kind: 'exit-before-ready'; module: string } | { kind: 'die-at-run'; module: string; run: number };

/** A class with PairTokenizer's `ids` (the sources' or dist/'s). */
export interface TokenizerClass {
  prototype: { ids(text: string): Int32Array };
}

export function injectThreadFault(fault: ThreadFault): () => void;
export function replaceWorkerClass(make: (Original: typeof import('node:worker_threads').Worker) => typeof import('node:worker_threads').Worker): () => void;
export function injectTokenizerFault(marker: string, Tokenizer: TokenizerClass): () => void;
export function injectNamedFault(spec: string, Tokenizer: TokenizerClass): void;
