import { appendFileSync, truncateSync } from 'node:fs';

/**
 * Prepare an append-only JSON-lines file (resumable results, NLI cache) that a killed run may have
 * left mid-write. Every complete record ends with a newline, so bytes after the last newline are
 * either a complete record missing only its newline (kept: the newline is added) or a torn write
 * (cut off). Appending after a torn tail would glue the next record onto it: the record would be
 * lost and the file would be refused as corrupt on the following run.
 * Returns the file's text as it now stands. A file whose first line is not a JSON object accepted
 * by `isOurs` is left alone.
 */
export function repairJsonlTail(file: string, text: string, isOurs: (firstRecord: Record<string, unknown>) => boolean = () => true): string {
  if (text === '' || text.endsWith('\n')) return text;
  // Touch only a file whose first line is one of our records: a user's file given by mistake (their
  // pretty-printed JSON, their own JSONL) must be refused by the caller, not have a line cut off.
  const firstNewline = text.indexOf('\n');
  if (firstNewline >= 0) {
    const first = jsonObject(text.slice(0, firstNewline));
    if (!first || !isOurs(first)) return text;
  } else {
    if (!text.trimStart().startsWith('{')) return text;
    // One line: our first write, torn (cut below) or whole but for its newline, or a user's
    // one-line JSON without a final newline (minified settings), which is not ours to touch.
    const only = jsonObject(text);
    if (only && !isOurs(only)) return text;
  }
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

function jsonObject(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
