import { CommanderError } from 'commander';
import { describeErrno, isInputError } from '../util/errors.js';
import { buildProgram } from './program.js';
import { spellOutSacrebleuFlags } from './sacrebleu-flags.js';
import { interruptNotice } from '../util/interrupt-notice.js';
import { exitWithParent } from '../report/worker-progress.js';

// `todeval refs | head` closes our stdout early: that is the reader's choice, not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

const program = buildProgram();

/** Commander's errors where the one line it printed says all (a flag's value: what is allowed is in it). */
const SELF_EXPLAINED = new Set(['commander.invalidArgument']);

/**
 * A file-system failure on a path the user named (a file where a folder was expected, say) is bad
 * input like any other: name the path and the reason instead of Node's `ENOTDIR: ..., scandir` text.
 */
function systemErrorLine(e: unknown): string | undefined {
  const err = e as NodeJS.ErrnoException;
  if (!(e instanceof Error) || typeof err.code !== 'string' || typeof err.path !== 'string') return undefined;
  return `${err.path}: ${describeErrno(err)}`;
}

function fail(message: string): never {
  process.stderr.write(`todeval: ${message}\n`);
  process.exit(2);
}

function exitOn(e: unknown): never {
  if (e instanceof CommanderError) {
    // help and --version exit 0; usage errors are bad input (commander already printed them), and
    // those about how the command is used (an unknown flag, a missing argument) point at --help.
    if (e.exitCode !== 0 && !SELF_EXPLAINED.has(e.code)) process.stderr.write('(run with --help for usage)\n');
    process.exit(e.exitCode === 0 ? 0 : 2);
  }
  if (isInputError(e)) fail(e.oneLine());
  if (process.env.TODEVAL_DEBUG) throw e;
  const systemError = systemErrorLine(e);
  if (systemError) fail(systemError);
  fail(`${(e as Error).message ?? String(e)} (set TODEVAL_DEBUG=1 for a stack trace)`);
}

// Ctrl-C and kill leave through process.exit, so 'exit' hooks run: the progress bar restores the
// terminal and the NLI cache appends its last pairs (Node's default would end the process without).
// The command's notice (how many turns are saved where, and the command that resumes) is one line.
function stop(code: number): never {
  const line = interruptNotice();
  if (line) process.stderr.write(`${process.stderr.isTTY ? '\n' : ''}todeval: ${line}\n`);
  process.exit(code);
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
  await program.parseAsync(spellOutSacrebleuFlags(process.argv));
} catch (e) {
  exitOn(e);
}
