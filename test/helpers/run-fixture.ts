import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFileAtomic } from '../../src/util/atomic-write.js';
import { runProcess } from './cli.js';

/**
 * The run's private temp dir when this file runs under the suite's leak check (test/leaks/global-setup.ts
 * makes that dir, points TMPDIR at it, sets TODEVAL_TEST_RUN, and removes the dir with everything in
 * it at the end of the run); undefined otherwise. Only there may a fixture outlive its test file: a
 * folder anywhere else would outlive the run and could hold another run's (another build's) outputs.
 */
export function runTempDir(): string | undefined {
  const dir = tmpdir();
  return process.env.TODEVAL_TEST_RUN !== undefined && path.basename(dir).startsWith('todeval-test-run-') ? dir : undefined;
}

/** How long a file waits for another's build of a shared fixture before it builds its own. */
const WAIT_MS = 300_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A folder built once per test run by `build` and read by every test file that asks for it by
 * `name`, or undefined outside a run (see runTempDir: the caller then builds its own). The first
 * file to ask builds it into a partial folder and renames it into place, so the others see it whole
 * or not at all; files asking meanwhile wait for it (a lock folder naming the builder's pid, taken
 * over when that process is gone; released when the build throws, so the next file tries itself;
 * a file that has waited WAIT_MS for a live holder gets undefined and builds its own, as outside a run).
 * Callers must not write into the folder: they copy what they change (the fixture is shared).
 * Its name does not start with `todeval-`: the leak check counts only those as left behind, and the
 * run's temp dir goes with the run.
 */
export async function sharedRunFixture(name: string, build: (dir: string) => Promise<void>): Promise<string | undefined> {
  const runTmp = runTempDir();
  if (runTmp === undefined) return undefined;
  const dir = path.join(runTmp, `run-fixture-${name}`);
  const lock = `${dir}.lock`;
  const giveUp = Date.now() + WAIT_MS;
  for (;;) {
    if (existsSync(dir)) return dir;
    try {
      mkdirSync(lock);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let holder = NaN;
      try {
        holder = Number(readFileSync(path.join(lock, 'pid'), 'utf8'));
      } catch {
        // taken a moment ago, its pid not written yet
      }
      if (Number.isInteger(holder) && !alive(holder)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > giveUp) return undefined;
      else await sleep(200);
      continue;
    }
    const partial = `${dir}.${process.pid}.partial`;
    try {
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      if (existsSync(dir)) return dir; // built between our look and our lock
      rmSync(partial, { recursive: true, force: true });
      mkdirSync(partial);
      await build(partial);
      renameSync(partial, dir);
      return dir;
    } finally {
      rmSync(partial, { recursive: true, force: true });
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/**
 * `compute()`'s JSON value, computed once per test run: the first test file to ask keeps it in the
 * run's temp dir (runTempDir), which goes with the run; the others read it back. Outside a run it is
 * computed every time: a file outliving its run could hold another run's answer. Two files asking
 * at once may both compute it; each writes the whole value (writeFileAtomic), so a reader sees one.
 */
export async function sharedRunValue<T>(name: string, compute: () => Promise<T>): Promise<T> {
  const runTmp = runTempDir();
  if (runTmp === undefined) return compute();
  const file = path.join(runTmp, `run-value-${name}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as T;
  const value = await compute();
  writeFileAtomic(file, JSON.stringify(value));
  return value;
}

/**
 * Whether `python` imports `modules`, asked once per test run (sharedRunValue): importing torch
 * costs about 1.9 CPU-s, and five test files ask the same question; an install between runs is seen.
 * Asynchronous: a worker waiting on a child cannot answer vitest's RPC.
 */
export function pythonImports(python: string, modules: string[]): Promise<boolean> {
  const name = `python-imports-${createHash('sha256').update(JSON.stringify([python, modules])).digest('hex').slice(0, 16)}`;
  return sharedRunValue(name, async () => (await runProcess(python, ['-c', `import ${modules.join(', ')}`])).code === 0);
}
