import { realpathSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../util/errors.js';

function canonical(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/**
 * Refuse an output flag that names one of the command's inputs (`-i preds.json -o preds.json`):
 * the run would read the file and then overwrite it with its report, losing the input. Checked
 * before any work so nothing is written. Two outputs naming one file are refused too (the last
 * writer would win). Undefined entries (flags not given) are ignored.
 */
export function refuseOutputOverInput(
  outputs: Record<string, string | undefined>,
  inputs: Record<string, string | undefined>,
): void {
  const seen = new Map<string, string>();
  for (const [outFlag, out] of Object.entries(outputs)) {
    if (!out) continue;
    const target = canonical(out);
    for (const [inFlag, input] of Object.entries(inputs)) {
      if (input && canonical(input) === target) {
        throw new InputError(`${outFlag} would overwrite the ${inFlag} file; write the results elsewhere`, { file: out });
      }
    }
    const other = seen.get(target);
    if (other) throw new InputError(`${outFlag} and ${other} name the same file; give each its own`, { file: out });
    seen.set(target, outFlag);
  }
}
