import type { Command } from 'commander';
import { InputError } from '../util/errors.js';
import { parseShardFlag, shardFromSlurmArray, shardLabel, type ShardSpec } from '../shard/spec.js';
import { positiveInt } from './options.js';

/** The flags addShardOptions declares (score, rerank, evaluate --sgsacc). */
export interface ShardFlags {
  shard?: ShardSpec;
  /** `--workers` alone: true (one per visible GPU, else one per core). */
  workers?: number | true;
}

/**
 * `--shard K/N` and `--workers [n]`, worded alike on every command that splits its work by
 * dialogue. `what` names the command's unit in the help (turns, items, dialogues).
 */
export function addShardOptions(cmd: Command, what: string, opts: { workers?: boolean } = {}): Command {
  cmd.option('--shard <K/N>', `only part K of N of the ${what} (split by dialogue, after --limit); join the parts with todeval merge`, parseShardFlag);
  if (opts.workers !== false) {
    cmd.option(
      '--workers [n]',
      'run the shards in N child processes and merge them (default: the count of the shard files an unfinished run left beside -o, else one per visible GPU with --device cuda, else one per core)',
      positiveInt('--workers'),
    );
  }
  return cmd;
}

/**
 * The shard a command runs: `--shard K/N` when given, else the Slurm array task's (task id 0..N-1
 * is shard id+1 of N, see shardFromSlurmArray), so an array script runs `todeval score ...` as is.
 * Sets `flags.shard`; call it first thing in the action of every command with --shard.
 */
export function applySlurmArrayShard(flags: ShardFlags, env: NodeJS.ProcessEnv = process.env): void {
  if (flags.shard) return;
  const fromSlurm = shardFromSlurmArray(env);
  if (!fromSlurm) return;
  // Each array task is one shard already: --workers would run the whole split again in every task.
  if (flags.workers !== undefined) {
    throw new InputError(
      `--workers in a Slurm array task (task ${env.SLURM_ARRAY_TASK_ID}, shard ${shardLabel(fromSlurm)}): each task runs one shard; drop --workers, or give --shard K/N`,
    );
  }
  flags.shard = fromSlurm;
}

/**
 * The action of a command that splits its work and can run its shards itself (score, rerank): the
 * Slurm array task's shard when no --shard is given, then `--workers N` child processes or this one.
 */
export function addShardedAction<F extends ShardFlags>(cmd: Command, run: { inWorkers(flags: F): Promise<void>; inProcess(flags: F): Promise<void> }): Command {
  return cmd.action(async (flags: F) => {
    // In a Slurm array task with no --shard, the task's shard (src/shard/spec.ts shardFromSlurmArray).
    applySlurmArrayShard(flags);
    await (flags.workers !== undefined ? run.inWorkers(flags) : run.inProcess(flags));
  });
}

/** A shard's report is what todeval merge joins: --shard without -o/--output would compute a part nobody can use. */
export function requireShardOutput(flags: ShardFlags, output: string | undefined): void {
  if (flags.shard && !output) throw new InputError('--shard needs -o/--output: todeval merge joins the shard reports');
}
