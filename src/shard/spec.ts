import path from 'node:path';
import { InvalidArgumentError } from 'commander';
import { InputError } from '../util/errors.js';
import type { ShardSpec } from '../util/shard-split.js';

export { shardLabel, shardPositions, type ShardSpec } from '../util/shard-split.js';

/** Commander parser for `--shard K/N`. */
export function parseShardFlag(v: string): ShardSpec {
  const m = /^(\d+)\/(\d+)$/.exec(v.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(count) || count < 1 || index < 1 || index > count) {
    throw new InvalidArgumentError('--shard must be K/N with 1 <= K <= N (e.g. 2/8)');
  }
  return { index, count };
}

/** A path as a shard report records it: relative to the report's folder, so the folder can move. */
export function pathFromReport(reportFile: string, file: string): string {
  return path.relative(path.dirname(path.resolve(reportFile)), path.resolve(file));
}

/** The file a shard report names, found relative to that report's folder. */
export function pathInReport(reportFile: string, recorded: string): string {
  return path.resolve(path.dirname(path.resolve(reportFile)), recorded);
}

/** What every shard report carries besides the command's own fields. */
export interface ShardBlock {
  index: number;
  count: number;
  /** The unit shards are cut along: a dialogue never spans two shards. */
  by: 'dialogue';
  /**
   * Where this shard's listed entries stand in the unsharded run's order, so the merge can put them
   * back: rerank's `items`, score's `predictions.missing`.
   */
  positions: number[];
  /** The shard's record files (relative to the report's folder), which `todeval merge` joins too. */
  files: { turns?: string; references?: string };
}

/** The Slurm variables an array task reads its shard from (sbatch sets them for `--array`). */
export type SlurmArrayEnv = Partial<Record<'SLURM_ARRAY_TASK_ID' | 'SLURM_ARRAY_TASK_COUNT' | 'SLURM_ARRAY_TASK_MIN' | 'SLURM_ARRAY_TASK_MAX' | 'SLURM_ARRAY_TASK_STEP', string>>;

/**
 * The shard of a Slurm array task: task ids 0..N-1 are shards 1..N of N, as a Kubernetes Indexed
 * Job's completion indexes are. Undefined outside an array task. Only a 0-based contiguous array
 * (`--array=0-N` with any `%` throttle) maps onto a split: `--array=1-4` or `0-6:2` would leave
 * shards nobody runs, and a resubmitted subset (`--array=2`) would claim to be a whole split of
 * one, so those are refused (give --shard K/N to such a task instead).
 */
export function shardFromSlurmArray(env: SlurmArrayEnv): ShardSpec | undefined {
  const raw = env.SLURM_ARRAY_TASK_ID;
  if (raw === undefined || raw.trim() === '') return undefined;
  const read = (name: keyof SlurmArrayEnv, required: boolean): number | undefined => {
    const v = env[name];
    if (v === undefined || v.trim() === '') {
      if (required) throw new InputError(`SLURM_ARRAY_TASK_ID is set but ${name} is not: cannot tell this task's shard (give --shard K/N)`);
      return undefined;
    }
    if (!/^\d+$/.test(v.trim())) throw new InputError(`${name}=${v} is not a task number (give --shard K/N)`);
    return Number(v);
  };
  const id = read('SLURM_ARRAY_TASK_ID', true)!;
  const count = read('SLURM_ARRAY_TASK_COUNT', true)!;
  const min = read('SLURM_ARRAY_TASK_MIN', true)!;
  const max = read('SLURM_ARRAY_TASK_MAX', false);
  const step = read('SLURM_ARRAY_TASK_STEP', false);
  const array = max === undefined ? `tasks ${min}..` : `--array=${min}-${max}${step !== undefined && step !== 1 ? `:${step}` : ''}`;
  const fix = `submit the shards as --array=0-${Math.max(0, count - 1)}, or give each task --shard K/N`;
  if (min !== 0) throw new InputError(`the Slurm array starts at task ${min} (${array}), not 0: ${fix}`);
  if ((step !== undefined && step !== 1) || (max !== undefined && max !== count - 1)) {
    throw new InputError(`the Slurm array is not contiguous (${array}, ${count} tasks): ${fix}`);
  }
  if (count < 1 || id > count - 1) throw new InputError(`SLURM_ARRAY_TASK_ID=${id} is outside the array's ${count} tasks (0-${count - 1})`);
  return { index: id + 1, count };
}

/** The shard block of a shard report, less the command's positions: which part, and its record files. */
export function shardBlock(spec: ShardSpec, reportFile: string, files: { turns?: string; references?: string }): Omit<ShardBlock, 'positions'> {
  return {
    index: spec.index,
    count: spec.count,
    by: 'dialogue',
    files: {
      turns: files.turns ? pathFromReport(reportFile, files.turns) : undefined,
      references: files.references ? pathFromReport(reportFile, files.references) : undefined,
    },
  };
}
