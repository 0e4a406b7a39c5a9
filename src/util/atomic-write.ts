import * as fs from 'node:fs';
import path from 'node:path';
import { describeErrno, InputError } from './errors.js';
import { outputPathProblem, writeTarget } from './output-path.js';

/** The file-system calls an atomic write makes; tests pass a failing copy to simulate ENOSPC. */
export interface AtomicWriteIo {
  openSync(file: string, flags: string): number;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number;
  fsyncSync(fd: number): void;
  closeSync(fd: number): void;
  renameSync(from: string, to: string): void;
  unlinkSync(file: string): void;
}

const nodeIo: AtomicWriteIo = fs;

/** Longest file name most file systems take (bytes); a temporary name must not be what hits it. */
const NAME_MAX = 255;

/**
 * The temporary file an atomic write of `file` goes through: in the same folder (the rename stays on
 * one file system), named after the target when that fits, else a short name of its own, so that
 * a target name near the limit never fails only at the end of a run. The output probe
 * (src/util/output-probe.ts) creates the same kind of name.
 */
export function atomicTempPath(file: string): string {
  const target = writeTarget(file);
  const unique = `${process.pid}.${Math.random().toString(36).slice(2, 8)}`;
  const named = `.${path.basename(target)}.${unique}.tmp`;
  const name = Buffer.byteLength(named) <= NAME_MAX ? named : `.todeval-write.${unique}.tmp`;
  return path.join(path.dirname(target), name);
}

/** Atomic writes begun and neither committed nor aborted: their temporary files. */
const pending = new Set<AtomicFile>();
let exitHooked = false;

/**
 * A write still open when the process exits (Ctrl-C during `refs -o`, whose file is written as the
 * turns expand: the CLI's signal handler ends the process with process.exit) drops its temporary
 * file, which else stays beside the target, hidden, as large as what was written so far.
 */
function removeIfExitFirst(file: AtomicFile): void {
  pending.add(file);
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const f of [...pending]) f.abort();
  });
}

/**
 * A whole-file output written so that the file is either its old self or complete, never a torn
 * report: the text goes to a temporary file in the same folder (so the rename stays on one file
 * system), is fsync'ed, then renamed over the target. On any failure (ENOSPC, EIO, a folder that
 * vanished) the temporary file is removed and an InputError names the target and the reason.
 * A symbolic link is followed (its target is replaced, the link kept); a device, FIFO, socket or
 * folder is refused (src/util/output-path.ts).
 */
export class AtomicFile {
  private readonly tmp: string;
  /** The path renamed over: `file`, or the file it links to (a symbolic link stays a link). */
  private readonly target: string;
  private fd: number | undefined;

  constructor(
    readonly file: string,
    private readonly io: AtomicWriteIo = nodeIo,
  ) {
    // Checked again here, not only by the commands' output check: nothing renames over a device.
    const problem = outputPathProblem(file);
    if (problem) throw new InputError(`cannot write: ${problem}`, { file });
    this.target = writeTarget(file);
    this.tmp = atomicTempPath(file);
    this.guard(() => {
      this.fd = io.openSync(this.tmp, 'wx');
    });
    removeIfExitFirst(this);
  }

  write(text: string | Uint8Array): void {
    const buf = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    this.guard(() => {
      let off = 0;
      while (off < buf.length) off += this.io.writeSync(this.fd!, buf, off, buf.length - off);
    });
  }

  /**
   * fsync and close without the rename; commit then only renames. Two files replaced as a pair
   * (`refs -o` and its signature) are both synced before either is renamed, so a failure of either
   * write leaves both old files as they were.
   */
  sync(): void {
    if (this.fd === undefined) return;
    this.guard(() => {
      this.io.fsyncSync(this.fd!);
      this.io.closeSync(this.fd!);
      this.fd = undefined;
    });
  }

  /** fsync, close and rename into place: from here on the target holds the whole text. */
  commit(): void {
    this.sync();
    this.guard(() => {
      this.io.renameSync(this.tmp, this.target);
    });
    pending.delete(this);
  }

  /** Drop the temporary file; the target is left as it was. */
  abort(): void {
    pending.delete(this);
    if (this.fd !== undefined) {
      try {
        this.io.closeSync(this.fd);
      } catch {
        // already failing: the unlink below is what matters
      }
      this.fd = undefined;
    }
    try {
      this.io.unlinkSync(this.tmp);
    } catch {
      // never created, or already renamed
    }
  }

  private guard(step: () => void): void {
    try {
      step();
    } catch (e) {
      this.abort();
      throw new InputError(`cannot write: ${describeErrno(e)} (nothing was written; an earlier file of that name is unchanged)`, { file: this.file });
    }
  }
}

/** Write a whole file atomically (see AtomicFile). */
export function writeFileAtomic(file: string, text: string | Uint8Array, io: AtomicWriteIo = nodeIo): void {
  const out = new AtomicFile(file, io);
  out.write(text);
  out.commit();
}

/** A report as pretty JSON with a final newline, written atomically. */
export function writeJsonAtomic(file: string, value: unknown): void {
  writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}
