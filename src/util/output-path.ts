import { lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';

/**
 * What an output path is now, and whether a command may write it. The rule (docs/cli-conventions.md,
 * "Output paths"): a path that is absent or a regular file is written (atomically, or appended for
 * the JSONL stores); a symbolic link is followed and the file it points to is written, so the link
 * stays a link and its target is never left stale; a device, FIFO, socket or folder is refused,
 * because renaming over one would replace a system file (`-o /dev/full` became a regular file) and
 * writing into one would send a report nowhere or block forever.
 */
export function outputPathProblem(file: string): string | undefined {
  let link: Stats;
  try {
    link = lstatSync(file);
  } catch {
    return undefined; // absent: created
  }
  let st: Stats = link;
  if (link.isSymbolicLink()) {
    try {
      st = statSync(file);
    } catch {
      // A dangling link: following it would create a file somewhere the user may not expect.
      return 'a symbolic link to a file that does not exist; remove the link or give another name';
    }
  }
  const kind = specialKind(st);
  return kind ? `${kind}, not a regular file; give a file name` : undefined;
}

function specialKind(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isDirectory()) return 'a folder';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * The file a write to `file` really changes: the target of a symbolic link (followed through every
 * link), else `file` itself. Atomic writes rename over this path, so a link is kept as a link.
 */
export function writeTarget(file: string): string {
  try {
    if (lstatSync(file).isSymbolicLink()) return realpathSync(file);
  } catch {
    // absent, or a dangling link (refused by outputPathProblem before any work)
  }
  return path.resolve(file);
}
