import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
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
  // A holder that is alive gets a short grace before the refusal: a run stopped by a signal (a
  // Slurm requeue, Ctrl-C and an immediate rerun) releases its locks within a second of the signal,
  // and the scheduler may start the requeued task before the old process has finished exiting.
  const graceEnds = Date.now() + lockGraceMs();
  // A few tries: between finding a stale lock and replacing it another run may take it first.
  for (let attempt = 0; attempt < 3; ) {
    try {
      const fd = openSync(lock, 'wx');
      try {
        writeSync(fd, `${JSON.stringify(me)}\n`);
      } finally {
        closeSync(fd);
      }
      held.add(lock);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new InputError(`cannot create the lock ${lock} (${(e as Error).message.split('\n')[0]})`, { file });
      }
    }
    const holder = readHolder(lock);
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
    // Gone (or unreadable: a lock torn by a crash): taken over.
    try {
      unlinkSync(lock);
    } catch {
      // another run removed it first; try again
    }
  }
  throw new InputError(`another run keeps taking the lock ${lock}; try again`, { file });
}

function readHolder(lock: string): Holder | undefined {
  try {
    const h = JSON.parse(readFileSync(lock, 'utf8')) as Partial<Holder>;
    return typeof h.pid === 'number' && typeof h.host === 'string' ? { pid: h.pid, host: h.host, started: String(h.started) } : undefined;
  } catch {
    return undefined;
  }
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
