import { execFile, spawnSync } from 'node:child_process';
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

/** `todeval ARGS` from the TypeScript sources (tsx); see runTsx. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runTsx(['src/cli/main.ts', ...args], env);
}

/** The CLI as users run it: bin/todeval.js over dist/, which `npm test` builds before vitest. */
export const BUILT_CLI = path.join(REPO_ROOT, 'bin', 'todeval.js');
export const HAS_BUILT_CLI = existsSync(path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'));

/** `todeval ARGS` through the built CLI, synchronously, from `cwd`. */
export function runBuiltCli(args: string[], cwd: string = REPO_ROOT): CliResult {
  const r = spawnSync(process.execPath, [BUILT_CLI, ...args], { encoding: 'utf8', cwd });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** `todeval ARGS` through the built CLI, without blocking the test worker; never rejects (see runTsx). */
export function runBuiltCliAsync(args: string[], cwd: string = REPO_ROOT): Promise<CliResult> {
  return promisify(execFile)(process.execPath, [BUILT_CLI, ...args], { cwd, maxBuffer: 1 << 26 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: CliResult) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}
