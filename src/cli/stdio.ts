import { fstatSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { holdMwzData } from '../metrics/mwz/held-data.js';
import { commandFailure } from './failure.js';
import { spellOutSacrebleuFlags } from './sacrebleu-flags.js';

/**
 * `todeval stdio`: the CLI kept running for a caller that runs many commands (the Python package's
 * warm Evaluator), so Node starts and loads its modules once instead of per call. One JSON object
 * per line on stdin, `{"id": ..., "args": ["evaluate", "-i", "/abs/file.json", "--json", ...]}`;
 * one per line on stdout, `{"id": ..., "code": 0, "stdout": "...", "stderr": "..."}`: what the
 * same command run alone would have printed and its exit code. Requests run one at a time, in
 * order, each through a program of its own, so its flags, output and errors are those of a
 * one-shot run (the same command code, not a second implementation).
 */

/** The commands a request may run: those that print one JSON result and hold nothing open after it. */
export const STDIO_COMMANDS: readonly string[] = ['evaluate', 'compare'];

interface StdioRequest {
  id: unknown;
  args: string[];
}

interface StdioAnswer {
  id: unknown;
  code: number;
  stdout: string;
  stderr: string;
}

function parseRequest(line: string): StdioRequest | { id: unknown; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    return { id: null, error: `not JSON: ${(e as Error).message}` };
  }
  const req = value as Partial<StdioRequest>;
  if (typeof value !== 'object' || value === null || !Array.isArray(req.args) || !req.args.every((a) => typeof a === 'string')) {
    return { id: (req as { id?: unknown } | null)?.id ?? null, error: 'expected {"id": ..., "args": [strings]}' };
  }
  if (!STDIO_COMMANDS.includes(req.args[0] ?? '')) return { id: req.id ?? null, error: `args[0] must be one of ${STDIO_COMMANDS.join(', ')}, got ${JSON.stringify(req.args[0] ?? null)}` };
  return { id: req.id ?? null, args: req.args };
}

/**
 * Runs one request with stdout and stderr captured. The writes of the command are taken over for
 * the duration of the request (requests never overlap): the commands print through
 * process.stdout/stderr, and the protocol owns the real stdout.
 */
async function runRequest(req: StdioRequest, build: () => Command): Promise<StdioAnswer> {
  let out = '';
  let err = '';
  const stdout = process.stdout.write;
  const stderr = process.stderr.write;
  const capture = (append: (s: string) => void) =>
    function (chunk: string | Uint8Array, ...rest: unknown[]): boolean {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    };
  process.stdout.write = capture((s) => (out += s)) as typeof process.stdout.write;
  process.stderr.write = capture((s) => (err += s)) as typeof process.stderr.write;
  let code = 0;
  try {
    await build().parseAsync(spellOutSacrebleuFlags(['node', 'todeval', ...req.args]));
  } catch (e) {
    const f = commandFailure(e);
    if (f.line) err += f.line + '\n';
    code = f.code;
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
  return { id: req.id, code, stdout: out, stderr: err };
}

/**
 * Exits (130) once this process has another parent than `caller`, checked every 100 ms: started
 * when stdin has ended. The Python package closes stdin only between requests, so its end while
 * requests remain means the caller may be gone (SIGKILL, the OOM killer): a long `--sgsacc` request
 * would then run on for nobody, holding the cores or the GPU. A caller that ends stdin after its
 * last request and waits (`cat requests | todeval stdio` in a shell) keeps this process as its child,
 * so all its requests are answered.
 */
function exitWhenOrphaned(caller: number): NodeJS.Timeout {
  const timer = setInterval(() => {
    if (process.ppid === caller) return;
    // process.stderr may be captured by a running request: the line goes to the real stderr.
    writeSync(2, 'todeval: stdio: the caller is gone (stdin closed, and this process handed to another parent): stopped\n');
    process.exit(130);
  }, 100);
  timer.unref(); // never what keeps the process alive
  return timer;
}

/** Reads requests until stdin closes; answers each on one line. */
export async function runStdio(build: () => Command): Promise<void> {
  // Every request would parse the same MultiWOZ files again: kept once, frozen (held-data.ts).
  holdMwzData();
  const caller = process.ppid;
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  let watch: NodeJS.Timeout | undefined;
  // Only a pipe's end can mean the caller died: a file's end (`todeval stdio < requests`) is its size.
  const piped = (() => {
    try {
      const stat = fstatSync(0);
      return stat.isFIFO() || stat.isSocket();
    } catch {
      return false;
    }
  })();
  lines.once('close', () => {
    if (piped) watch = exitWhenOrphaned(caller);
  });
  try {
    for await (const line of lines) {
      if (!line.trim()) continue;
      const req = parseRequest(line);
      const answer: StdioAnswer = 'error' in req ? { id: req.id, code: 2, stdout: '', stderr: `todeval: stdio: ${req.error}\n` } : await runRequest(req, build);
      process.stdout.write(JSON.stringify(answer) + '\n');
    }
  } finally {
    clearInterval(watch);
  }
}

export function registerStdio(program: Command, build: () => Command): void {
  program
    .command('stdio')
    .description(`run ${STDIO_COMMANDS.join(' and ')} requests read as JSON lines on stdin, answering each on stdout, in one process (the Python package's warm Evaluator)`)
    .action(async () => {
      await runStdio(build);
    });
}
