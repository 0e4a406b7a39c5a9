import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { keptReferencesFile } from '../metrics/sgsacc/kept-references.js';
import { InputError } from '../util/errors.js';
import { STDIN } from '../util/json-file.js';
import { folderWriteProblem, writeProblem } from '../util/output-probe.js';
import { outputPathProblem, writeTarget } from '../util/output-path.js';
import { holdRunLocks } from '../util/run-lock.js';
import { reportFileFrom } from './options.js';

function canonical(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    // Not there yet: resolve its folder (which may be a symlink) and keep the name.
    const abs = path.resolve(file);
    try {
      return path.join(realpathSync(path.dirname(abs)), path.basename(abs));
    } catch {
      return abs;
    }
  }
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Check every output flag before any work, so that a run never computes for an hour and then fails
 * to save, or saves over what it read. For each output given: its folder exists (folders are never
 * created: the same rule for every flag), the path is not a folder, and the file can be written (a
 * probe file is created and removed beside it: src/util/output-probe.ts); it is not one of the inputs, not inside an input folder (gcdf1 -o into the
 * dialogues folder), and not another output (the last writer would win). The error names the flag.
 * Undefined entries (flags not given) are ignored; `-` as an input is stdin.
 */
export function refuseOutputOverInput(
  outputs: Record<string, string | undefined>,
  inputs: Record<string, string | undefined>,
): void {
  const seen = new Map<string, string>();
  const givenInputs = Object.entries(inputs).filter((e): e is [string, string] => !!e[1] && e[1] !== STDIN);
  for (const [outFlag, out] of Object.entries(outputs)) {
    if (!out) continue;
    checkOutputPath(outFlag, out);
    const target = canonical(out);
    for (const [inFlag, input] of givenInputs) {
      const source = canonical(input);
      if (source === target) {
        throw new InputError(`${outFlag} would overwrite the ${inFlag} file; write the results elsewhere`, { file: out });
      }
      if (isDirectory(input) && target.startsWith(source + path.sep)) {
        throw new InputError(`${outFlag} is inside the ${inFlag} folder ${input}, which is read as input; write the results elsewhere`, { file: out });
      }
    }
    const other = seen.get(target);
    if (other) throw new InputError(`${outFlag} and ${other} name the same file; give each its own`, { file: out });
    seen.set(target, outFlag);
  }
}

/**
 * The one check of an output path, made before any work by every command that writes: the folder
 * exists, the path is absent, a regular file or a link to one (followed: src/util/output-path.ts),
 * never a device, FIFO, socket or folder, and a file can really be written there.
 */
export function checkOutputPath(flag: string, out: string): void {
  const dir = path.dirname(writeTarget(out));
  if (!existsSync(dir)) {
    throw new InputError(`${flag}: the folder ${dir} does not exist (no such file or directory); create it first`, { file: out });
  }
  if (!isDirectory(dir)) throw new InputError(`${flag}: ${dir} is not a folder`, { file: out });
  if (isDirectory(out)) throw new InputError(`${flag} names a folder; give a file name`, { file: out });
  const kind = outputPathProblem(out);
  if (kind) throw new InputError(`${flag}: refused: ${kind}`, { file: out });
  // Created and removed for real, not asked of access(2), which says yes to root and to names too long.
  const problem = writeProblem(out);
  if (problem) throw new InputError(`${flag}: cannot write here (${problem})`, { file: out });
}

/** A folder a command downloads into (`data pull --data-dir`, `models pull --cache-dir`): files can be created there, checked before any download. */
export function refuseUnwritableFolder(flag: string, dir: string): void {
  const problem = folderWriteProblem(dir);
  if (problem) throw new InputError(`${flag}: cannot write here (${problem})`, { file: dir });
}

/** The output and input flags of a run that scores (score, rerank, and their --workers parent). */
export interface RunOutputFlags {
  output?: string;
  json?: string | boolean;
  turns?: string;
  cache?: string;
  dialogues?: string;
  schema?: string;
}

/**
 * A scoring run's outputs checked against its inputs before any work (refuseOutputOverInput): --turns,
 * -o (or `--json FILE`), --cache and, for score (`references` given), its references file, which is
 * kept beside --turns (else -o) when --references is not given, so a resumed or repeated run still
 * has every turn's ground truth. The run then holds a lock beside each of them (src/util/run-lock.ts)
 * until it exits (a named --references file excepted, see below). Returns the report file and the references file with how it came.
 */
export function checkRunOutputs(
  flags: RunOutputFlags,
  input: { flag: string; file?: string },
  references?: { file?: string },
): { output?: string; referencesFile?: string; referencesKept: boolean } {
  const output = reportFileFrom(flags);
  const kept = references && !references.file ? keptReferencesFile({ turns: flags.turns, output }) : undefined;
  const referencesFile = references?.file ?? kept;
  refuseOutputOverInput(
    {
      '--turns': flags.turns,
      '-o/--output': output,
      ...(references ? { [kept ? '--references (kept beside --turns/-o)' : '--references']: referencesFile } : {}),
      '--cache': flags.cache,
    },
    { [input.flag]: input.file, '--dialogues': flags.dialogues, '--schema': flags.schema },
  );
  // One writer per run: a second run on the same files is refused here, before any work. A
  // --references file given by name is a store shared on purpose (the shards of a Slurm array read
  // the one refs.sbatch built, several systems reuse one file), so it is not held for the run: each
  // append is one O_APPEND write of whole lines, and the one reader reads a record two runs both
  // wrote as one record. The references kept beside --turns/-o belong to this run and are held.
  holdRunLocks([flags.turns, output, kept]);
  return { output, referencesFile, referencesKept: kept !== undefined };
}
