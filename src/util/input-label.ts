import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileBytes, STDIN } from './json-file.js';
import { StampedCache } from './stamped-cache.js';

/**
 * How a signature names an input file or folder: `<path>@<first 12 hex of the sha256 of its
 * content>`, the path relative to the data directory when the input lies in it, else to the working
 * directory, never absolute. The same inputs give the same name however they were spelt on the
 * command line (absolute or relative) and on whichever machine or checkout they are run, and the
 * digest tells two versions of one file apart. A folder's content is every file under it, in name
 * order, each with its relative path; standard input is `stdin`.
 */
export function inputLabel(file: string, dataDir?: string): string {
  if (file === STDIN) return `stdin@${sha12(fileBytes(STDIN))}`;
  return `${inputPath(file, dataDir)}@${contentDigest(file)}`;
}

/** The path part of inputLabel: relative to the data dir when inside it, else to the working directory; `/` separated. */
export function inputPath(file: string, dataDir?: string): string {
  const abs = path.resolve(file);
  const inData = dataDir ? path.relative(path.resolve(dataDir), abs) : undefined;
  const rel = inData !== undefined && inData !== '' && !inData.startsWith('..') && !path.isAbsolute(inData) ? inData : path.relative(process.cwd(), abs) || '.';
  return rel.split(path.sep).join('/');
}

/** First 12 hex digits of the sha256 of a file's bytes, or of a folder's files (relative names and bytes, in name order). */
export function contentDigest(file: string): string {
  // A long-lived process (serve, stdio) names the same data-dir files on every request: their
  // digest is kept while every file keeps its size and mtime (one entry a path, replaced when it changes).
  const { files, stamp } = stampOf(file);
  return digestMemo.get(path.resolve(file), stamp, () => {
    if (!files) return sha12(fileBytes(file));
    const folder = new FolderHash();
    for (const rel of files) folder.add(rel, fileBytes(path.join(file, rel)));
    return folder.digest();
  });
}

const digestMemo = new StampedCache<string>();

/**
 * contentDigest's digest of a file's bytes (its form for a file: the first 12 hex digits of their
 * sha256), for a cache that keeps the digest of the bytes it was derived from.
 */
export function bytesDigest(bytes: Uint8Array): string {
  return sha12(bytes);
}

/**
 * Keeps `digest` as contentDigest's for `file` while the file keeps the size and mtime it has now:
 * a cache derived from the file's bytes (the MultiWOZ ground truth) and checked against that stamp
 * already knows it, so signing does not read the file again. A missing file or a folder is left out.
 */
export function rememberContentDigest(file: string, digest: string): void {
  let st;
  try {
    st = stampOf(file);
  } catch {
    return;
  }
  if (!st.files) digestMemo.set(path.resolve(file), st.stamp, digest);
}

/** contentDigest's folder hash: each file's relative name and bytes, fed in name order. */
class FolderHash {
  private readonly hash = createHash('sha256');
  add(rel: string, bytes: Uint8Array): void {
    this.hash.update(`${rel}\0`).update(bytes).update('\0');
  }
  digest(): string {
    return this.hash.digest('hex').slice(0, 12);
  }
}

/** An input being hashed from the bytes its reader reads: a file, or a folder fed in name order. */
interface Tracked {
  key: string;
  stamp: string;
  /** A folder's files (relative, name order) and the next one its hash waits for; undefined for a file. */
  files?: string[];
  next: number;
  /** Bytes read before the hash reached them (the schema of a split, read first, named last). */
  ahead: Map<string, Buffer>;
  folder?: FolderHash;
  fileDigest?: string;
}

/**
 * The content digests of a dataset's inputs (files or folders), taken from the bytes its readers
 * read: pass `read` to the readers, then `finish()` hashes whatever no reader asked for (the files
 * past a --limit, a folder's other files) and keeps each digest where contentDigest finds it. Each
 * file is read once, where parsing and then signing used to read it twice. The digests are
 * contentDigest's to the byte (its folder hash, fed in the same name order).
 */
export class ReadDigests {
  private readonly tracked: Tracked[] = [];

  /** The inputs to sign; an undefined one (not known yet, or absent) is left out. */
  constructor(inputs: readonly (string | undefined)[]) {
    for (const input of inputs) {
      if (input === undefined || input === '' || input === STDIN) continue; // stdin is held in memory: signing it reads nothing again
      let st;
      try {
        st = stampOf(input);
      } catch {
        continue; // missing: the reader names it (and contentDigest would, as before)
      }
      const key = path.resolve(input);
      if (digestMemo.has(key, st.stamp) || this.tracked.some((t) => t.key === key)) continue;
      this.tracked.push({ key, stamp: st.stamp, files: st.files, next: 0, ahead: new Map(), folder: st.files ? new FolderHash() : undefined });
    }
  }

  /** A file's bytes, read once and fed to the digest of every input it is part of. */
  readonly read = (file: string): Buffer => {
    const bytes = readFileSync(file);
    const abs = path.resolve(file);
    for (const t of this.tracked) {
      if (!t.files) {
        if (abs === t.key) t.fileDigest = sha12(bytes);
        continue;
      }
      const rel = path.relative(t.key, abs).split(path.sep).join('/');
      const at = t.files.indexOf(rel);
      if (at < t.next) continue; // not in the folder, or already hashed
      t.ahead.set(rel, bytes);
      while (t.next < t.files.length && t.ahead.has(t.files[t.next])) {
        const name = t.files[t.next++];
        t.folder?.add(name, t.ahead.get(name) as Buffer);
        t.ahead.delete(name);
      }
    }
    return bytes;
  };

  /** Hashes what was not read and keeps every digest (by the stamp taken before reading). */
  finish(): void {
    for (const t of this.tracked) {
      // Known meanwhile from a cache checked against the same stamp (rememberContentDigest): not read again.
      if (digestMemo.has(t.key, t.stamp)) continue;
      let digest: string;
      if (!t.files) digest = t.fileDigest ?? sha12(readFileSync(t.key));
      else {
        for (; t.next < t.files.length; t.next++) {
          const name = t.files[t.next];
          t.folder?.add(name, t.ahead.get(name) ?? readFileSync(path.join(t.key, name)));
        }
        digest = (t.folder as FolderHash).digest();
      }
      digestMemo.set(t.key, t.stamp, digest);
    }
    this.tracked.length = 0;
  }
}

/** A file's size and mtime, or a folder's files (name order) with theirs; `files` only for a folder. */
function stampOf(file: string): { files?: string[]; stamp: string } {
  const st = statSync(file);
  if (!st.isDirectory()) return { stamp: `${st.size}|${st.mtimeMs}` };
  const files = filesUnder(file);
  const stamp = files
    .map((rel) => {
      const f = statSync(path.join(file, rel));
      return `${rel}|${f.size}|${f.mtimeMs}`;
    })
    .join('\0');
  return { files, stamp };
}

/**
 * One digest for several inputs read together (a data-dir dataset's dialogues and its schema, the
 * MultiWOZ ground truth's files): each input's contentDigest, in the order given. A single input
 * keeps its own digest.
 */
export function inputsContentDigest(files: readonly string[]): string {
  if (files.length === 1) return contentDigest(files[0]);
  const hash = createHash('sha256');
  for (const f of files) hash.update(`${contentDigest(f)}\0`);
  return hash.digest('hex').slice(0, 12);
}

function filesUnder(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(dir, prefix), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...filesUnder(dir, rel));
    else if (e.isFile()) out.push(rel);
  }
  return out;
}

function sha12(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 12);
}

/** A signature value that names an input by content (inputLabel's form, optionally after `dataset:`). */
const LABELLED = /^((?:sgd|multiwoz|generic):)?[^@]*@([0-9a-f]{12})$/;

/**
 * A signature value with the path of an input dropped, keeping its dataset prefix and digest: two
 * runs from different working directories name the same file by different relative paths, and are
 * still the same configuration when the content is the same. Other values are returned as they are.
 */
export function byContent(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const m = LABELLED.exec(value);
  return m ? `${m[1] ?? ''}@${m[2]}` : value;
}

/** A data-dir split's label (`sgd:test@…`): its name is which split, never where it lies. */
const SPLIT_LABEL = /^(?:sgd|multiwoz|generic):(?:train|dev|test)@[0-9a-f]{12}$/;

/** byContent for showing: a data-dir split keeps its name (`sgd:test@…`), any path is dropped. */
export function byContentShown(value: unknown): unknown {
  return typeof value === 'string' && SPLIT_LABEL.test(value) ? value : byContent(value);
}
