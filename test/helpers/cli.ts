import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './shared.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `node --import tsx ARGS` (a script or `-e` code from the TypeScript sources), run from the repo
 * root; never rejects, so a test can assert on the exit code and both streams of a failing run.
 * `env` is added to ours.
 */
export function runTsx(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', ...args], {
    cwd: REPO_ROOT,
    maxBuffer: 1 << 26,
    env: { ...process.env, ...env },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: CliResult) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** The CLI as users run it: bin/todeval.js over dist/, which the tests' globalSetup (test/helpers/build-setup.ts) rebuilds from src/ whenever src/ is newer, so a single `npx vitest run test/x.test.ts` still tests the current sources. */
export const BUILT_CLI = path.join(REPO_ROOT, 'bin', 'todeval.js');
export const HAS_BUILT_CLI = existsSync(path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'));

/**
 * Node's arguments that start the CLI (`spawn(process.execPath, [...CLI_ARGV, ...args])`): the built
 * one, which starts in about a third of the time tsx takes to compile src/ at each start.
 */
export const CLI_ARGV: readonly string[] = [BUILT_CLI];

/** `todeval ARGS` through the built CLI from `cwd`, without blocking the test worker; never rejects (see runTsx). `env` is added to ours. */
export function runBuiltCli(args: string[], cwd: string = REPO_ROOT, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return promisify(execFile)(process.execPath, [BUILT_CLI, ...args], { cwd, maxBuffer: 1 << 26, env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: CliResult) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** `todeval ARGS` (the built CLI, from the repo root); see runBuiltCli. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runBuiltCli(args, REPO_ROOT, env);
}

/** The same as runBuiltCli (kept for the suites that name it). */
export const runBuiltCliAsync = runBuiltCli;

export interface RunOptions {
  cwd?: string;
  /** The whole environment of the child (default: ours). */
  env?: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed (default: stdin is closed at once). */
  input?: string | Buffer;
  /** Killed (SIGKILL) after this long; the result's code is then null. */
  timeoutMs?: number;
}

/**
 * `cmd ARGS` to its end, without blocking the test worker (what spawnSync did, asynchronously: a
 * worker whose event loop waits on a child cannot answer vitest, which then fails the run with
 * "Timeout calling onTaskUpdate" under load). Never rejects on the child's exit; a command that
 * cannot start gives code null and the error in stderr.
 */
export function runProcess(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? REPO_ROOT, env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => stdout.push(c));
    child.stderr.on('data', (c: Buffer) => stderr.push(c));
    const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    let failed: Error | undefined;
    const finish = (code: number | null, signal: NodeJS.Signals | null = null) => {
      if (timer) clearTimeout(timer);
      resolve({ code: failed ? null : code, signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') + (failed ? String(failed) : '') });
    };
    child.on('error', (e) => {
      failed = e;
      if (child.pid === undefined) finish(null); // never started: no 'close' to wait for
    });
    // A child that exits without reading its stdin makes our write fail with EPIPE: not the test's concern.
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
    child.on('close', (code, signal) => finish(code, signal));
  });
}
