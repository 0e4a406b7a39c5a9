// `node --import tsx --import ./test/helpers/fault-preload.ts src/cli/main.ts ...`: the CLI with the
// fault $TODEVAL_TEST_FAULT names (test/helpers/faults.ts). Worker threads inherit the preload;
// faults are installed on the main thread only.
import { isMainThread } from 'node:worker_threads';
import { injectNamedFault } from './faults.js';

if (isMainThread && process.env.TODEVAL_TEST_FAULT) injectNamedFault(process.env.TODEVAL_TEST_FAULT);
