import { InvalidArgumentError } from 'commander';
import { isInputError } from '../../src/util/errors.js';

/**
 * The scripts' catch-all: bad input (ours or a commander argument check) is one line and exit 2, as
 * in the CLI; anything else is a bug and keeps its stack trace.
 */
export function exitOnBadInput(e: unknown): never {
  if (isInputError(e)) {
    console.error(e.oneLine());
    process.exit(2);
  }
  if (e instanceof InvalidArgumentError) {
    console.error(e.message);
    process.exit(2);
  }
  throw e;
}
