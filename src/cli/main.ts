import { CommanderError } from 'commander';
import { isInputError } from '../util/errors.js';
import { commandFailure } from './failure.js';
import { programFor } from './program.js';
import { spellOutSacrebleuFlags } from './sacrebleu-flags.js';
import { interruptNotice, interruptWait } from '../util/interrupt-notice.js';
import { exitWithParent } from '../util/progress/worker-ipc.js';

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

// Ctrl-C and kill leave through process.exit, so 'exit' hooks run: the progress bar restores the
// terminal and the NLI cache appends its last pairs (Node's default would end the process without).
// The command's notice (how many turns are saved where, and the command that resumes) is one line.
// What the command must wait for (--workers: its shard processes) ends first; a second signal
// during that wait changes nothing.
let stopping = false;
function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  const line = interruptNotice();
  if (line) process.stderr.write(`${process.stderr.isTTY ? '\n' : ''}todeval: ${line}\n`);
  void interruptWait().finally(() => process.exit(code));
}
process.on('SIGINT', () => stop(130));
process.on('SIGTERM', () => stop(143));
// A shard run by `--workers` stops when its parent goes away, whatever killed the parent.
exitWithParent();

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
