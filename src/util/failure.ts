import { describeErrno, isInputError, MODEL_FAILURE_EXIT_CODE, ModelRunError } from './errors.js';

/**
 * The one line an error prints and the exit code it leaves with, for every process that runs a
 * pipeline: the CLI (src/cli/failure.ts adds commander's usage errors) and a `--workers` shard
 * process (src/pipeline/shard-worker.ts), whose parent repeats the line when the shard fails.
 */
export function failureOf(e: unknown): { line: string; code: number } {
  if (isInputError(e)) return { line: `todeval: ${e.oneLine()}`, code: 2 };
  // Not the user's input: a code of its own, so scripts can tell a broken model from a bad file.
  if (e instanceof ModelRunError) return { line: `todeval: ${e.message}`, code: MODEL_FAILURE_EXIT_CODE };
  // A file-system failure on a path the user named (a file where a folder was expected, say) is bad
  // input like any other: name the path and the reason instead of Node's `ENOTDIR: ..., scandir` text.
  const err = e as NodeJS.ErrnoException;
  if (e instanceof Error && typeof err.code === 'string' && typeof err.path === 'string') return { line: `todeval: ${err.path}: ${describeErrno(err)}`, code: 2 };
  return { line: `todeval: ${(e as Error).message ?? String(e)} (set TODEVAL_DEBUG=1 for a stack trace)`, code: 2 };
}
