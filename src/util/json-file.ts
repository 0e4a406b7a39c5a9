import { readFileSync } from 'node:fs';
import { describeErrno, InputError } from './errors.js';

/** The file name that means standard input (`-i -`). */
export const STDIN = '-';
let stdinBytes: Buffer | undefined;

/**
 * Standard input, read whole on first use and kept, so that a command can both parse it and sign
 * it (fileBytes) as it does a named file.
 */
export function readStdin(): Buffer {
  stdinBytes ??= readFileSync(0);
  return stdinBytes;
}

/**
 * Reads standard input whole without blocking the event loop, for readStdin to return after: a
 * synchronous read of a pipe or FIFO that stays silent holds the process deaf to SIGINT and SIGTERM
 * (their handlers run on the event loop), so a command that takes `-` reads it this way first.
 */
export async function preloadStdin(): Promise<void> {
  if (stdinBytes) return;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  stdinBytes = Buffer.concat(chunks);
}

/** A file's bytes, `-` being standard input. */
export function fileBytes(file: string): Buffer {
  return file === STDIN ? readStdin() : readFileSync(file);
}

/**
 * How a reader gets a file's bytes: readFileSync, or a ReadDigests' `read` that also hashes them
 * for the input's signature label, so a dataset file is read once, not once to parse and again to sign.
 */
export type FileRead = (file: string) => Buffer;

/**
 * A UTF-8 text file without its byte-order mark; a read failure is an InputError naming the file
 * and the reason in words. `what` names the file's role in that message ("cannot read predictions").
 * Bytes that are not UTF-8 are refused, as mwzeval's json.load and our readTextLines refuse them:
 * Buffer.toString turned them into U+FFFD, so a Latin-1 "café" was scored as "caf\uFFFD", exit 0.
 */
export function readTextFile(file: string, what = 'file', read: FileRead = readFileSync): string {
  let bytes: Buffer;
  try {
    bytes = file === STDIN ? readStdin() : read(file);
  } catch (e) {
    throw new InputError(`cannot read ${what}: ${describeErrno(e)}`, { file });
  }
  try {
    // ignoreBOM false (the default) drops one leading byte-order mark, which editors on Windows
    // save and JSON.parse rejects as an invisible character.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (e) {
    if ((e as NodeJS.ErrnoException)?.code === 'ERR_ENCODING_INVALID_ENCODED_DATA') throw new InputError(`${what} is not valid UTF-8`, { file });
    throw new InputError(`cannot read ${what}: ${describeErrno(e)}`, { file });
  }
}

/** Read and parse a JSON file, turning I/O and syntax failures into one-line InputErrors. */
export function readJsonFile<T = unknown>(file: string, read?: FileRead): T {
  return parseJsonText<T>(readTextFile(file, 'file', read), file);
}

/** JSON.parse of a file's text (from readTextFile), a syntax error as an InputError naming `file`. */
export function parseJsonText<T = unknown>(text: string, file: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new InputError(`not valid JSON (${(e as Error).message})`, { file });
  }
}

/**
 * The first key repeated at the top level of a JSON object's text, decoded ("\u0061" and "a" are
 * the same key), or undefined. JSON.parse keeps the last of repeated keys without a word, so an
 * id -> value file that names an id twice silently loses one entry; readers that key records by
 * id call this when the parsed value is a plain object, to refuse the repeat as they refuse it in
 * their other layouts. `text` must be valid JSON (it is only called after JSON.parse succeeded).
 * One pass over the characters, allocating only the top-level keys: inputs run to tens of MB.
 */
export function duplicateTopLevelKey(text: string): string | undefined {
  const QUOTE = 0x22;
  const BACKSLASH = 0x5c;
  let depth = 0;
  // At depth 1 of the top-level object, whether the next string is a key (after `{` or `,`).
  let keyNext = false;
  const seen = new Set<string>();
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === QUOTE) break;
        i += d === BACKSLASH ? 2 : 1;
      }
      if (depth === 1 && keyNext) {
        keyNext = false;
        const quoted = text.slice(start, i + 1);
        const key = quoted.includes('\\') ? (JSON.parse(quoted) as string) : quoted.slice(1, -1);
        if (seen.has(key)) return key;
        seen.add(key);
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth === 1) {
        if (c !== 0x7b) return undefined;
        keyNext = true;
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    } else if (c === 0x2c /* , */ && depth === 1) {
      keyNext = true;
    }
  }
  return undefined;
}

/**
 * Read a JSONL file; each record is returned with its 1-based line number for error messages.
 * A line that is not JSON throws, or with `onInvalidLine` (--skip-invalid) is handed to it and left out.
 */
export function readJsonlFile<T = unknown>(
  file: string,
  opts: { onInvalidLine?: (e: InputError, line: number) => void; read?: FileRead } = {},
): { line: number; value: T }[] {
  const text = readTextFile(file, 'file', opts.read);
  const out: { line: number; value: T }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    if (raw === '') continue;
    try {
      out.push({ line: i + 1, value: JSON.parse(raw) as T });
    } catch (e) {
      const err = new InputError(`not valid JSON (${(e as Error).message})`, { file, where: `line ${i + 1}` });
      if (!opts.onInvalidLine) throw err;
      opts.onInvalidLine(err, i + 1);
    }
  }
  return out;
}
