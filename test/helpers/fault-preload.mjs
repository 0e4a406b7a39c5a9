// `node --import ./test/helpers/fault-preload.mjs bin/todeval.js ...`: the built CLI with the fault
// $TODEVAL_TEST_FAULT names (test/helpers/fault-inject.mjs), installed on the main thread before the
// CLI loads. Plain JavaScript: the child compiles nothing. Worker threads inherit the preload and
// skip it.
import { isMainThread } from 'node:worker_threads';

if (isMainThread && process.env.TODEVAL_TEST_FAULT) {
  const { injectNamedFault } = await import('./fault-inject.mjs');
  // The class the built CLI runs (the same module its own import gets).
  const { PairTokenizer } = await import('../../dist/src/nli/tokenizer.js');
  injectNamedFault(process.env.TODEVAL_TEST_FAULT, PairTokenizer);
}
