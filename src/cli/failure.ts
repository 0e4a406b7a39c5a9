import { CommanderError } from 'commander';
import { describeErrno, isInputError, MODEL_FAILURE_EXIT_CODE, ModelRunError } from '../util/errors.js';

/** Commander's errors where the one line it printed says all (a flag's value: what is allowed is in it). */
const SELF_EXPLAINED = new Set(['commander.invalidArgument']);

/**
 * What a command's error prints (one line, or none where commander printed its own) and the exit
 * code: the same for a one-shot run (main.ts) and a `todeval stdio` request.
 */
export function commandFailure(e: unknown): { line: string; code: number } {
  if (e instanceof CommanderError) {
    // help and --version exit 0; usage errors are bad input (commander already printed them), and
    // those about how the command is used (an unknown flag, a missing argument) point at --help.
    return { line: e.exitCode !== 0 && !SELF_EXPLAINED.has(e.code) ? '(run with --help for usage)' : '', code: e.exitCode === 0 ? 0 : 2 };
  }
  if (isInputError(e)) return { line: `todeval: ${e.oneLine()}`, code: 2 };
  // Not the user's input: a code of its own, so scripts can tell a broken model from a bad file.
  if (e instanceof ModelRunError) return { line: `todeval: ${e.message}`, code: MODEL_FAILURE_EXIT_CODE };
  // A file-system failure on a path the user named (a file where a folder was expected, say) is bad
  // input like any other: name the path and the reason instead of Node's `ENOTDIR: ..., scandir` text.
  const err = e as NodeJS.ErrnoException;
  if (e instanceof Error && typeof err.code === 'string' && typeof err.path === 'string') return { line: `todeval: ${err.path}: ${describeErrno(err)}`, code: 2 };
  return { line: `todeval: ${(e as Error).message ?? String(e)} (set TODEVAL_DEBUG=1 for a stack trace)`, code: 2 };
}
