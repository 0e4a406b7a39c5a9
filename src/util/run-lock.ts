import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { InputError } from './errors.js';
import { writeTarget } from './output-path.js';

/** What a lock file holds: who writes the files beside it. */
interface Holder {
  pid: number;
  host: string;
  started: string;
}

/** The lock beside an output: `<file>.lock`, beside the file a symbolic link points to. */
export function lockFileOf(file: string): string {
  return `${writeTarget(file)}.lock`;
}

const held = new Set<string>();
let releaseHooked = false;

/**
 * One writer per run: takes `<file>.lock` beside each output of a run (`-o`, `--turns`,
 * `--references`) for as long as this process lives. A second run on the same files is refused in
 * one line naming the holder's PID, so two runs never append the same turns twice. A lock whose
 * process is gone (SIGKILL, power loss: no exit handler ran) is taken over, so resuming still
 * works. The locks are removed when the process exits, however it exits (process.exit included).
 */
export function holdRunLocks(files: readonly (string | undefined)[]): void {
  for (const file of files) if (file) holdOne(file);
  if (!releaseHooked) {
    releaseHooked = true;
    process.once('exit', releaseRunLocks);
  }
}

/** Drops every lock this process holds (only those still naming it). */
export function releaseRunLocks(): void {
  for (const lock of held) {
    try {
      if (readHolder(lock)?.pid === process.pid) unlinkSync(lock);
    } catch {
      // already gone
    }
  }
  held.clear();
}

function holdOne(file: string): void {
  const lock = lockFileOf(file);
  if (held.has(lock)) return;
  const me: Holder = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  // The token makes this lock's text unlike any other lock's, this process's earlier ones included,
  // so a run taking over a stale lock can tell the lock it read from one made since (takeOverStale).
  const record = `${JSON.stringify({ ...me, token: randomBytes(8).toString('hex') })}\n`;
  // A holder that is alive gets a short grace before the refusal: a run stopped by a signal (a
  // Slurm requeue, Ctrl-C and an immediate rerun) releases its locks within a second of the signal,
  // and the scheduler may start the requeued task before the old process has finished exiting.
  const graceEnds = Date.now() + lockGraceMs();
  // A few tries: between finding a stale lock and replacing it another run may take it first.
  for (let attempt = 0; attempt < 3; ) {
    let mine: boolean;
    try {
      mine = publishLock(writeLockTemp(lock, record), lock);
    } catch (e) {
      throw new InputError(`cannot create the lock ${lock} (${(e as Error).message.split('\n')[0]})`, { file });
    }
    if (mine) {
      held.add(lock);
      removeLeftovers(lock);
      return;
    }
    const seen = readText(lock);
    const holder = seen === undefined ? undefined : parseHolder(seen);
    if (holder && holder.pid !== process.pid && isRunning(holder) && Date.now() < graceEnds) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
      continue;
    }
    attempt++;
    if (holder && holder.pid !== process.pid && isRunning(holder)) {
      const where = holder.host === me.host ? '' : ` on ${holder.host}`;
      throw new InputError(
        `in use by another todeval run (PID ${holder.pid}${where}, started ${holder.started}); wait for it to finish or stop it (its lock: ${lock})`,
        { file },
      );
    }
    // Gone (or unreadable: torn by a crash of a todeval that wrote its lock in place): taken over,
    // unless another run took it over first (then the next try finds that run's lock).
    if (seen !== undefined) takeOverStale(lock, seen);
  }
  throw new InputError(`another run keeps taking the lock ${lock}; try again`, { file });
}

/**
 * Taking a lock, step 1: the holder record, whole, in a file of this run's own beside the lock
 * (`<lock>.<pid>.<random>.tmp`); nobody reads it as the lock. Its path is returned for
 * publishLock. Exported, with the other steps, for the tests of two runs' interleavings.
 */
export function writeLockTemp(lock: string, record: string): string {
  const temp = `${lock}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(temp, record, { flag: 'wx' });
  } catch (e) {
    // A part written before the disk filled is removed; an existing file of that name is not ours.
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') removeQuietly(temp);
    throw e;
  }
  return temp;
}

/** Codes of link(2) on a filesystem without hard links (FAT, exFAT, some SMB mounts). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Taking a lock, step 2: `temp` becomes the lock in one step, a hard link that fails with EEXIST
 * while any lock is there, so a reader finds the lock absent or whole, never empty or half written
 * (a lock created empty and then written was read as torn in between, removed, and taken by a
 * second run while the first went on as its holder). The temp file is removed either way. False
 * when another run holds the lock.
 */
export function publishLock(temp: string, lock: string): boolean {
  try {
    linkSync(temp, lock);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // Without hard links, created in place and then written: a reader may find it empty for that
    // instant, as before, but a lock still works there.
    if (code !== undefined && NO_HARD_LINKS.has(code)) return createInPlace(lock, readFileSync(temp, 'utf8'));
    throw e;
  } finally {
    removeQuietly(temp);
  }
}

function createInPlace(lock: string, record: string): boolean {
  let fd: number;
  try {
    fd = openSync(lock, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, record);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Removes a lock judged stale, but only the one that was judged: `seen` is the text read from it.
 * A rename is atomic, so of two runs taking over one stale lock only one moves it (aside, under a
 * name of its own); the other's rename finds no lock, or the lock the first made since, and moves
 * that. So what was moved is read back: the stale lock is removed, but a lock made since (another
 * run's, alive) is put back at once with a hard link, the same file, and left to the next try,
 * which finds it held. The one window left: a third run arriving in the microseconds between that
 * rename and that link makes its own lock, the link back fails, and two runs hold it; renames and
 * links cannot close it (no compare-and-remove), only a lock the kernel drops on exit could.
 * True when the stale lock was removed.
 */
export function takeOverStale(lock: string, seen: string): boolean {
  const aside = `${lock}.${process.pid}.${randomBytes(6).toString('hex')}.stale`;
  try {
    renameSync(lock, aside);
  } catch {
    return false; // gone already: released, or moved aside by another run taking it over
  }
  if (readText(aside) === seen) {
    removeQuietly(aside);
    return true;
  }
  try {
    publishLock(aside, lock); // removes the aside too
  } catch {
    removeQuietly(aside);
  }
  return false;
}

/** `<lock>.<pid>.<random>.tmp` and `.stale`: the files writeLockTemp and takeOverStale name. */
const LEFTOVER = /^\d+\.[0-9a-f]+\.(?:tmp|stale)$/;

/**
 * Removes what runs that are gone left beside the lock: a temp file of a run killed between its
 * write and its link, a stale lock moved aside by a run killed before it removed it. Only files
 * whose record names a process that is not running: a run still at work on one is never disturbed
 * (one written in part, by a crash mid-write, names nobody, and is left).
 */
function removeLeftovers(lock: string): void {
  const dir = path.dirname(lock);
  const prefix = `${path.basename(lock)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !LEFTOVER.test(name.slice(prefix.length))) continue;
    const file = path.join(dir, name);
    const writer = readHolder(file);
    if (writer && !isRunning(writer)) removeQuietly(file);
  }
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function parseHolder(text: string): Holder | undefined {
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    return typeof h.pid === 'number' && typeof h.host === 'string' ? { pid: h.pid, host: h.host, started: String(h.started) } : undefined;
  } catch {
    return undefined;
  }
}

function readHolder(file: string): Holder | undefined {
  const text = readText(file);
  return text === undefined ? undefined : parseHolder(text);
}

/** Whether the holder still runs; one on another host cannot be asked, so it counts as running. */
function isRunning(h: Holder): boolean {
  if (h.host !== hostname()) return true;
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  // kill(pid, 0) also succeeds for a zombie: a process that has exited but that nobody reaped (an
  // orphan in a container whose init does not reap, a killed Slurm task's leftovers). It writes
  // nothing any more, so its lock is taken over like a dead one's.
  return !isZombie(h.pid);
}

/** Whether Linux lists the process as exited and unreaped (state Z or X); false where /proc is absent. */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}

/** How long a live holder is waited for (TODEVAL_LOCK_WAIT_MS, default 5 s) before a run is refused. */
function lockGraceMs(): number {
  const v = Number(process.env.TODEVAL_LOCK_WAIT_MS);
  return Number.isFinite(v) && v >= 0 ? v : 5000;
}
