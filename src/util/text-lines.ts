import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describeErrno, InputError } from './errors.js';
import { readStdin, STDIN } from './json-file.js';

/**
 * The lines of a plain-text file as sacreBLEU reads them (`open(f, encoding='utf-8', newline='\n')`,
 * gzip when the name ends in .gz): split on '\n' only, a final newline ends the last line rather
 * than starting an empty one, a byte-order mark kept as a character, invalid UTF-8 refused.
 * `-` is standard input. Lines are returned as read; callers strip them as sacreBLEU does.
 */
export function readTextLines(file: string, what = 'file'): string[] {
  let bytes: Buffer;
  try {
    bytes = file === STDIN ? readStdin() : readFileSync(file);
    if (file.endsWith('.gz')) bytes = gunzipSync(bytes);
  } catch (e) {
    throw new InputError(`cannot read ${what}: ${describeErrno(e)}`, { file });
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (e) {
    // Only the decoder's invalid-data error means bad bytes; a file too large for one string is not.
    if ((e as NodeJS.ErrnoException)?.code === 'ERR_ENCODING_INVALID_ENCODED_DATA') throw new InputError(`${what} is not valid UTF-8`, { file });
    throw new InputError(`cannot read ${what}: ${describeErrno(e)}`, { file });
  }
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
