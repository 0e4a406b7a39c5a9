import { runWorkers, type WorkersOptions } from '../shard/workers.js';
import type { MergedRun } from '../shard/run-merge.js';
import { InputError } from '../util/errors.js';
import { reportFileFrom } from './options.js';
import { checkRunOutputs, type RunOutputFlags } from './output-guard.js';

/** The flags `--workers` reads, common to score and rerank. */
export interface WorkersCliFlags extends RunOutputFlags {
  workers?: number | true;
  shard?: unknown;
  device?: WorkersOptions['device'];
  threads?: number;
  progress?: WorkersOptions['progress'];
}

/**
 * `score|rerank --workers N`: the same command as N shards in child processes, merged
 * (src/shard/workers.ts). Every output is checked against every input before a child starts.
 */
export async function runCommandInWorkers(
  flags: WorkersCliFlags,
  input: { flag: string; file?: string },
  opts: { references?: { file?: string }; beforeWrite?: (merged: MergedRun) => void } = {},
): Promise<MergedRun> {
  const output = reportFileFrom(flags);
  if (!output) throw new InputError("--workers needs -o/--output: the shards' files are kept beside it until they are merged");
  if (flags.shard) throw new InputError('--workers runs every shard itself: give --workers or --shard, not both');
  checkRunOutputs(flags, input, opts.references);
  return runWorkers({
    args: process.argv.slice(2),
    workers: flags.workers!,
    device: flags.device ?? 'auto',
    output,
    turns: flags.turns,
    references: opts.references?.file,
    storesReferences: opts.references !== undefined,
    threads: flags.threads,
    progress: flags.progress,
    beforeWrite: opts.beforeWrite,
  });
}
