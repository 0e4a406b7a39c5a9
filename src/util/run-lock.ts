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
  // A few tries: between finding a stale lock and replacing it another run may take it first.
  for (let attempt = 0; attempt < 3; attempt++) {
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
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
