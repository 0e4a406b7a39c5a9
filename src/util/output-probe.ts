import { closeSync, existsSync, openSync, statSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { atomicTempPath } from './atomic-write.js';
import { describeErrno } from './errors.js';

/**
 * Whether `file` can really be written, found by doing it: a temporary file of the kind an atomic
 * write uses is created and removed beside it, and the file itself is opened for writing when it
 * exists, or created and removed when it does not. access(2) alone answers for the permission bits
 * only: it says yes to root, to a name too long for the file system, and on file systems that
 * refuse writes for reasons of their own, which a run would otherwise meet only when it saves.
 * Returns why not (in words), or undefined when the file can be written. Nothing is left behind.
 */
export function writeProblem(file: string): string | undefined {
  try {
    const tmp = atomicTempPath(file);
    closeSync(openSync(tmp, 'wx'));
    unlinkSync(tmp);
    if (existsSync(file)) closeSync(openSync(file, 'r+'));
    else {
      closeSync(openSync(file, 'wx'));
      unlinkSync(file);
    }
    return undefined;
  } catch (e) {
    return describeErrno(e);
  }
}

/**
 * Whether files can be created in folder `dir`, or, when it does not exist yet, in the nearest
 * folder above it that does (where the download would create it). Returns why not, or undefined.
 */
export function folderWriteProblem(dir: string): string | undefined {
  let at = path.resolve(dir);
  while (!existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  if (!statSync(at).isDirectory()) return `${at} is not a folder`;
  return writeProblem(path.join(at, '.todeval-probe'));
}
