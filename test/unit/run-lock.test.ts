// One writer per output (src/util/run-lock.ts): the interleavings of two runs on one lock, replayed
// step by step with the module's own steps, no timing. A lock is published whole in one step (a run
// arriving while another is between its write and its link finds no lock, never an empty one), the
// files of runs killed mid-step are not read as the lock and are cleaned, and of two runs taking
// over one stale lock the slower puts back the lock the faster made and is refused.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { holdRunLocks, lockFileOf, publishLock, releaseRunLocks, takeOverStale, writeLockTemp } from '../../src/util/run-lock.js';
import { tempDir } from '../helpers/temp.js';

/** No process has this PID: it is above the largest pid_max Linux allows (2^22). */
const GONE_PID = 2 ** 22 + 1;
/** A live run other than this one: the parent process runs for as long as the test does. */
const LIVE_PID = process.ppid;

let records = 0;
/** A lock's text as a run with `pid` on this host writes it (each with a token of its own). */
const recordOf = (pid: number) =>
  `${JSON.stringify({ pid, host: hostname(), started: new Date().toISOString(), token: `t${++records}` })}\n`;

/** What lies in the folder besides the locks (the outputs themselves are never made here). */
const besidesLocks = (dir: string) => readdirSync(dir).filter((n) => !n.endsWith('.lock')).sort();

describe('run locks: two runs on one lock, step by step', () => {
  afterEach(() => {
    releaseRunLocks();
    vi.unstubAllEnvs();
  });

  it('a run arriving while another is between its write and its link finds no lock (never an empty one) and takes it; the other\'s link then fails', () => {
    const dir = tempDir('runlock-publish');
    const out = path.join(dir, 'out.json');
    const lock = lockFileOf(out);
    const other = recordOf(LIVE_PID);
    const otherTemp = writeLockTemp(lock, other);
    // The other run's record is whole, in a file of its own; the lock itself does not exist yet.
    expect(readFileSync(otherTemp, 'utf8')).toBe(other);
    expect(existsSync(lock)).toBe(false);

    holdRunLocks([out]);
    const mine = readFileSync(lock, 'utf8');
    expect(JSON.parse(mine)).toMatchObject({ pid: process.pid, host: hostname() });
    // Its temp file is left alone: its run is alive and about to link it.
    expect(existsSync(otherTemp)).toBe(true);

    expect(publishLock(otherTemp, lock)).toBe(false);
    expect(readFileSync(lock, 'utf8')).toBe(mine);
    expect(besidesLocks(dir)).toEqual([]);
    releaseRunLocks();
    expect(existsSync(lock)).toBe(false);
  });

  it('files left by runs killed mid-step are not read as the lock; the next run that takes it removes those of dead runs only', () => {
    const dir = tempDir('runlock-leftovers');
    const out = path.join(dir, 'out.json');
    const lock = lockFileOf(out);
    // Killed between its write and its link.
    writeFileSync(`${lock}.${GONE_PID}.0a1b2c.tmp`, recordOf(GONE_PID));
    // Killed after moving a stale lock aside, before removing it.
    writeFileSync(`${lock}.${GONE_PID}.3d4e5f.stale`, recordOf(GONE_PID));
    // A live run between its write and its link: kept.
    const live = `${lock}.${LIVE_PID}.6a7b8c.tmp`;
    writeFileSync(live, recordOf(LIVE_PID));
    // Killed in the middle of its write: it names nobody, so it cannot be told from a live run's; kept.
    const torn = `${lock}.${GONE_PID}.9d0e1f.tmp`;
    writeFileSync(torn, '{"pid":');

    holdRunLocks([out]);
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(besidesLocks(dir)).toEqual([path.basename(live), path.basename(torn)].sort());
  });

  it('two runs take over one stale lock: the slower moves the lock the faster made since, puts it back and is refused', () => {
    vi.stubEnv('TODEVAL_LOCK_WAIT_MS', '0');
    const dir = tempDir('runlock-takeover');
    const out = path.join(dir, 'out.json');
    const lock = lockFileOf(out);
    const stale = recordOf(GONE_PID);
    writeFileSync(lock, stale);
    // Both runs have read the stale lock and found its process gone. The faster takes it over ...
    expect(takeOverStale(lock, stale)).toBe(true);
    expect(existsSync(lock)).toBe(false);
    // (a takeover of it at this point finds nothing to move and removes nothing)
    expect(takeOverStale(lock, stale)).toBe(false);
    expect(existsSync(lock)).toBe(false);
    // ... and makes its own (the parent process stands in for that live run).
    const fresh = recordOf(LIVE_PID);
    expect(publishLock(writeLockTemp(lock, fresh), lock)).toBe(true);
    const freshFile = statSync(lock).ino;

    // The slower one now acts on what it read: the stale lock's text.
    expect(takeOverStale(lock, stale)).toBe(false);
    expect(readFileSync(lock, 'utf8')).toBe(fresh);
    expect(statSync(lock).ino).toBe(freshFile);
    expect(besidesLocks(dir)).toEqual([]);
    // Its next try finds the lock held by the faster run, and it is refused naming that run.
    expect(() => holdRunLocks([out])).toThrow(`in use by another todeval run (PID ${LIVE_PID}, started `);
    expect(readFileSync(lock, 'utf8')).toBe(fresh);
    expect(besidesLocks(dir)).toEqual([]);
  });

  it('a stale lock (its process gone) and an empty one (torn by an older todeval) are taken over whole, nothing left aside', () => {
    const dir = tempDir('runlock-stale');
    const outs = [path.join(dir, 'a.json'), path.join(dir, 'b.json')];
    writeFileSync(lockFileOf(outs[0]), recordOf(GONE_PID));
    writeFileSync(lockFileOf(outs[1]), '');
    holdRunLocks(outs);
    for (const out of outs) expect(JSON.parse(readFileSync(lockFileOf(out), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    expect(besidesLocks(dir)).toEqual([]);
    releaseRunLocks();
    for (const out of outs) expect(existsSync(lockFileOf(out))).toBe(false);
  });
});
