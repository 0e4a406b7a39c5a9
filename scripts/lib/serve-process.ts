import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** stdout (the JSON request log) and stderr so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * `todeval serve ARGS --port 0` from the TypeScript sources, on loopback unless ARGS say otherwise;
 * resolves once it prints the address it listens on. Used by the tests, the fuzz run and the bench.
 * `built`: run it as users do, `node bin/todeval.js serve` (dist/ when built, else the sources).
 */
export function spawnServe(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 120_000,
  { built = false, imports = [], nodeArgs = [] }: { built?: boolean; imports?: string[]; nodeArgs?: string[] } = {},
): Promise<ServeProcess> {
  // `imports`: modules loaded first (after tsx from the sources), e.g. a test's fault injection (test/helpers/fault-preload.mjs).
  const preload = imports.flatMap((m) => ['--import', m]);
  const entry = built ? [...preload, 'bin/todeval.js'] : ['--import', 'tsx', ...preload, 'src/cli/main.ts'];
  // `nodeArgs`: Node's own flags (a bench's --max-semi-space-size, --cpu-prof), before the entry.
  const child = spawn(process.execPath, [...nodeArgs, ...entry, 'serve', '--port', '0', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`todeval serve did not start within ${timeoutMs} ms:\n${err}`));
    }, timeoutMs);
    const onData = () => {
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (!m) return;
      clearTimeout(timer);
      child.stderr!.off('data', onData);
      resolve({
        url: m[1],
        child,
        stdout: () => out,
        stderr: () => err,
        exited,
        stop: () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          return exited;
        },
      });
    };
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`todeval serve exited with ${code} before listening:\n${err}`));
    });
  });
}
