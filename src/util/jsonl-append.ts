import { appendFileSync, truncateSync } from 'node:fs';

/**
 * Prepare an append-only JSON-lines file (resumable results, NLI cache) that a killed run may have
 * left mid-write. Every complete record ends with a newline, so bytes after the last newline are
 * either a complete record missing only its newline (kept: the newline is added) or a torn write
 * (cut off). Appending after a torn tail would glue the next record onto it: the record would be
 * lost and the file would be refused as corrupt on the following run.
 * Returns the file's text as it now stands. A file whose first line is not a JSON object is not
 * ours and is left alone.
 */
export function repairJsonlTail(file: string, text: string): string {
  if (text === '' || text.endsWith('\n')) return text;
  // Touch only a file that starts like ours (a JSON object per line): a user's pretty-printed JSON
  // given by mistake must be refused by the caller, not have its last line cut off.
  const firstNewline = text.indexOf('\n');
  if (firstNewline >= 0 ? !isJsonObject(text.slice(0, firstNewline)) : !text.trimStart().startsWith('{')) return text;
  const keep = text.slice(0, text.lastIndexOf('\n') + 1);
  try {
    JSON.parse(text.slice(keep.length));
  } catch {
    truncateSync(file, Buffer.byteLength(keep));
    return keep;
  }
  appendFileSync(file, '\n');
  return `${text}\n`;
}

function isJsonObject(line: string): boolean {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}
