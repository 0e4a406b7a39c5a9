import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_ARGV } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { tempDir } from './helpers/temp.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';

// Issue 42: `evaluate` was deaf to signals while it computed (SIGTERM at 2 s ended it after 7.1 s;
// at 5 s it finished and exited 0); `score --workers` exited on SIGTERM while its shard processes
// lived 2-3 s longer, so a resume started then collided with them.

// The built CLI, as users run it (the tests' globalSetup rebuilds dist/ from src/ when it is older).
const CLI = CLI_ARGV;

function start(args: string[]): { child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; stderr: () => string } {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, exited, stderr: () => err };
}

/** CPU seconds a process has used (utime + stime from /proc), the clock of "it is computing now" whatever the machine's load. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The shell's view of how a process ended: 128 + the signal when it was ended by one. */
const status = (end: { code: number | null; signal: NodeJS.Signals | null }) => end.code ?? (end.signal === 'SIGTERM' ? 143 : end.signal === 'SIGINT' ? 130 : -1);

describe.skipIf(!hasData('multiwoz', 'predictions', 'augpt.json'))('evaluate ends on SIGTERM while it computes', () => {
  it('143 and no report: it stops in the middle of its synchronous metrics (was: ran on to the end, exit 0 when the signal came late)', async () => {
    const out = path.join(tempDir('signals'), 'ev.json');
    // 100,000 resamples: the bootstrap alone is then about 13 CPU seconds of one synchronous stage.
    const run = start(['evaluate', '--data-dir', DATA_DIR, '-i', path.join(DATA_DIR, 'multiwoz', 'predictions', 'augpt.json'), '--confidence', '--confidence-n', '100000', '-o', out]);
    try {
      // Past start-up, data and metrics (under 4 CPU seconds together) and into the bootstrap.
      while (run.child.exitCode === null && cpuSeconds(run.child.pid!) < 5) await new Promise((r) => setTimeout(r, 20));
      run.child.kill('SIGTERM');
    } catch (e) {
      run.child.kill('SIGKILL');
      throw e;
    }
    const end = await run.exited;
    expect(status(end)).toBe(143);
    // Stopped before the metrics were done: nothing was written.
    expect(existsSync(out)).toBe(false);
  }, 120_000);
});

const GCDF1_DIALOGUES = path.join(DATA_DIR, 'gcdf1', 'convlab_baselines', 'test');

describe.skipIf(!hasData('gcdf1', 'convlab_baselines', 'test', 'dialogues_001.json'))('gcdf1 ends on SIGTERM and SIGINT while it computes', () => {
  for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
    it(`${signal}: ${code} and no report (was: deaf until its 1,000 dialogues were done, seconds later)`, async () => {
      const out = path.join(tempDir('signals'), 'gcdf1.json');
      const run = start(['gcdf1', '-d', GCDF1_DIALOGUES, '--data-dir', DATA_DIR, '--progress', 'none', '-o', out]);
      try {
        // The built CLI: start-up, config, map and dialogues read in about 0.8 CPU seconds, the 1,000
        // dialogues evaluated in about 1.7 more; 1.2 s is well into the evaluation.
        while (run.child.exitCode === null && cpuSeconds(run.child.pid!) < 1.2) await new Promise((r) => setTimeout(r, 20));
        // Still computing when signalled (a run that ended first would prove nothing).
        expect(run.child.exitCode).toBeNull();
        run.child.kill(signal);
      } catch (e) {
        run.child.kill('SIGKILL');
        throw e;
      }
      const end = await run.exited;
      expect(status(end), run.stderr()).toBe(code);
      expect(existsSync(out)).toBe(false);
    }, 120_000);
  }
});

/** PIDs of the processes whose command line names `marker`. */
function processesNaming(marker: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))('score --workers on SIGTERM', () => {
  it('exits 143 only after every shard process has exited (was: the shards lived on for seconds)', async () => {
    const dir = tempDir('signals');
    const out = path.join(dir, 'w.json');
    const turns = path.join(dir, 'w.turns.shard-1-of-2.jsonl');
    const run = start([
      'score', '--dataset', 'sgd', '--dialogues', path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json'), '--data-dir', DATA_DIR, '--limit', '200', '--chunk', '1',
      '--model', getLexicalStandinDir(), '--device', 'cpu', '--workers', '2', '--progress', 'none', '-o', out, '--turns', path.join(dir, 'w.turns.jsonl'),
    ]);
    let shards: number[] = [];
    try {
      while (run.child.exitCode === null && !(existsSync(turns) && readFileSync(turns, 'utf8').split('\n').length > 3)) await new Promise((r) => setTimeout(r, 20));
      shards = processesNaming(path.join(dir, 'w.shard-'));
      // A run that ended first (a shard that failed) says why in its stderr.
      expect(shards, `exit code ${String(run.child.exitCode)}; stderr: ${run.stderr()}`).toHaveLength(2);
      run.child.kill('SIGTERM');
      const end = await run.exited;
      expect(status(end)).toBe(143);
      // At the moment the parent is gone, so is every shard.
      const alive = shards.filter((pid) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      });
      expect(alive).toEqual([]);
      expect(run.stderr()).toMatch(/^todeval: interrupted: every shard stopped; /m);
    } finally {
      for (const pid of [run.child.pid!, ...shards]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  }, 120_000);
});
