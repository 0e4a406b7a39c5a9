import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/shared.js';

// The leak check itself: a run whose only test passes but leaves a temp folder and a detached
// process must fail, name both, and kill the process.
describe('the test run leak check (test/leaks/global-setup.ts)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'todeval-leakcheck-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('fails a passing run that leaves a process and a todeval-* folder, names both, and kills the process', async () => {
    const pidFile = path.join(dir, 'pid');
    const vitest = path.join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
    const r = await promisify(execFile)(process.execPath, [vitest, 'run', '--config', 'test/leaks/fixture/vitest.config.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, LEAK_PID_FILE: pidFile },
    }).then(
      (x) => ({ code: 0, out: x.stdout + x.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(r.out).toContain('1 passed');
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(new RegExp(`process ${pid} still running: .*setTimeout`));
    expect(r.out).toMatch(/temporary folder left behind: .*todeval-leaky-/);
    // Killed by the check: gone, or a zombie its (exited) parent's reaper has not collected yet.
    const alive = (() => {
      try {
        return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] !== 'Z';
      } catch {
        return false;
      }
    })();
    expect(alive).toBe(false);
  }, 60_000);
});
