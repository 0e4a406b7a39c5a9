/**
 * vitest globalSetup: the tests run the built CLI (dist/, through bin/todeval.js), so dist/ must be
 * the current sources' whether the run is `npm test` or a single `npx vitest run test/x.test.ts`
 * after an edit. When anything the build reads is newer than the last build's info file, this runs
 * the incremental build (tsconfig.build.json) before any test starts; otherwise it costs one walk of
 * src/'s modification times. A build error fails the run: tests of stale code would say nothing.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './shared.js';

/**
 * src/nli/worker-entry.ts's BUILT_TWIN_ENV, by value: this file imports nothing from src/, as the main
 * project's tests import src/ as dist/'s compiled twin (vitest.config.ts), which a cold checkout has
 * not built when this setup starts. The type (that constant's literal type) fails the type-check if
 * the two ever differ.
 */
const BUILT_TWIN_ENV: typeof import('../../src/nli/worker-entry.js').BUILT_TWIN_ENV = 'TODEVAL_CURRENT_BUILD';

/** Written by tsc at each incremental build of tsconfig.build.json (its outDir is dist/). */
export const BUILD_INFO = path.join(REPO_ROOT, 'dist', 'tsconfig.build.tsbuildinfo');

const BUILD_INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

/** The newest modification time (ms) of a file or of any file under a folder. */
function newestMtime(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs; // a deleted or renamed file changes its folder's time
  for (const e of readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, e)));
  return newest;
}

/** Is dist/ older than what it is built from? */
export function distIsStale(root = REPO_ROOT): boolean {
  const info = path.join(root, 'dist', 'tsconfig.build.tsbuildinfo');
  if (!existsSync(info) || !existsSync(path.join(root, 'dist', 'src', 'cli', 'main.js'))) return true;
  const built = statSync(info).mtimeMs;
  return BUILD_INPUTS.some((f) => existsSync(path.join(root, f)) && newestMtime(path.join(root, f)) > built);
}

/** Every project of the run lists this file; the first setup builds (or finds dist/ fresh), once. */
const BUILT_VAR = 'TODEVAL_TEST_BUILT_BY';

export async function setup(): Promise<void> {
  if (process.env[BUILT_VAR] === String(process.pid)) return;
  process.env[BUILT_VAR] = String(process.pid);
  // Once dist/ is current, the TypeScript sources the tests import start their worker threads from
  // dist/'s compiled twins instead of through tsx's loader (src/nli/worker-entry.ts): the forks
  // inherit this environment.
  const current = () => {
    process.env[BUILT_TWIN_ENV] = path.join(REPO_ROOT, 'dist');
  };
  if (!distIsStale()) return current();
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const started = Date.now();
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, maxBuffer: 1 << 26 });
  } catch (e) {
    const out = (e as { stdout?: string }).stdout ?? String(e);
    throw new Error(`the build of dist/ failed (tsc -p tsconfig.build.json), so the tests would run stale code:\n${out}`);
  }
  // tsc leaves the info file alone when no output changed (an edit of a comment, a touch): mark the
  // check done so that the next run does not redo it. Stamped with the build's start, not its end: a
  // source saved while tsc ran (a rebase, an editor) is newer than the stamp, so the next run rebuilds.
  const begun = new Date(started);
  utimesSync(BUILD_INFO, begun, begun);
  current();
  console.log(`[build] dist/ was older than src/: rebuilt in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
