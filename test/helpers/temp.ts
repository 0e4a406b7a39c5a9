import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

// Imported by test files only (it registers a hook): each test file loads its own copy, so the
// hook below runs once after that file's tests, however they ended.
const made: string[] = [];

// Removed asynchronously (libuv's threads do the unlinking): a folder can hold an installed
// project's node_modules (fresh-install: hundreds of MB), whose synchronous removal held the
// worker's event loop for a minute under load, so vitest's RPC to it timed out ('Timeout calling
// "onTaskUpdate"', an unhandled error that fails a green run).
afterAll(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/**
 * A fresh `todeval-NAME-XXXXXX` folder in the temp dir, removed after the test file's last test
 * (pass or fail). The run's leak check (test/leaks/global-setup.ts) fails on any todeval-* folder
 * left behind, so tests make their folders here rather than with mkdtempSync.
 */
export function tempDir(name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `todeval-${name}-`));
  made.push(dir);
  return dir;
}

/**
 * tempDir for a suite's body (describe callback): the path is fixed now, the folder is made in the
 * suite's beforeAll and removed in its afterAll. Vitest runs the body of a skipped suite too (to list
 * its tests) but not its hooks, so a suite skipped for want of data makes no folder; tempDir there
 * would leave one, as the file's hooks do not run either when all its tests are skipped.
 */
export function suiteTempDir(name: string): string {
  const dir = path.join(tmpdir(), `todeval-${name}-${randomBytes(6).toString('hex')}`);
  beforeAll(() => {
    mkdirSync(dir);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}
