import { CommanderError } from 'commander';
import { failureOf } from '../util/failure.js';

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
  return failureOf(e);
}
