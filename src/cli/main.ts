import { CommanderError } from 'commander';
import { isInputError } from '../util/errors.js';
import { commandFailure } from './failure.js';
import { programFor } from './program.js';
import { spellOutSacrebleuFlags } from './sacrebleu-flags.js';
import { exitOnSignals } from '../util/interrupt-notice.js';

// `todeval refs | head` closes our stdout early: that is the reader's choice, not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

function exitOn(e: unknown): never {
  // With TODEVAL_DEBUG, what is not bad input (a bug, a system failure) keeps its stack trace.
  if (process.env.TODEVAL_DEBUG && !(e instanceof CommanderError) && !isInputError(e)) throw e;
  const { line, code } = commandFailure(e);
  if (line) process.stderr.write(`${line}\n`);
  process.exit(code);
}

// Ctrl-C and kill print the command's notice and leave through process.exit (exit hooks run).
exitOnSignals();

// A write stream's 'error' (e.g. --out in a folder that does not exist) is raised outside the
// command's promise: without this it would crash with Node's stack trace and exit code 1.
process.on('uncaughtException', exitOn);

try {
  // sacreBLEU's multi-letter short flags (-tok, -lc, ...) for `bleu`, which commander cannot parse.
  const argv = spellOutSacrebleuFlags(process.argv);
  await (await programFor(argv)).parseAsync(argv);
  // A signal that came during the last synchronous stretch is still pending: signal watchers do not
  // keep the event loop alive, so without one more turn the process would end as if it had finished
  // (exit 0). One turn dispatches it (stop above) before the natural exit.
  await new Promise((resolve) => setImmediate(resolve));
} catch (e) {
  exitOn(e);
}
