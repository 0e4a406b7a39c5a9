import { afterEach, describe, expect, it, vi } from 'vitest';
import { runInProcess } from '../helpers/in-process-cli.js';
import { applySlurmArrayShard, type ShardFlags } from '../../src/cli/shard-options.js';
import { shardFromSlurmArray } from '../../src/shard/spec.js';
import { InputError } from '../../src/util/errors.js';

/** The variables sbatch sets for task `id` of `--array=MIN-MAX[:STEP]`. */
const task = (id: number, array: { min: number; max: number; step?: number; count?: number }) => {
  const step = array.step ?? 1;
  return {
    SLURM_ARRAY_TASK_ID: String(id),
    SLURM_ARRAY_TASK_MIN: String(array.min),
    SLURM_ARRAY_TASK_MAX: String(array.max),
    SLURM_ARRAY_TASK_STEP: String(step),
    SLURM_ARRAY_TASK_COUNT: String(array.count ?? Math.floor((array.max - array.min) / step) + 1),
  };
};

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    expect((e as Error).message).not.toContain('\n');
    return (e as Error).message;
  }
  throw new Error('not refused');
};

describe('the shard of a Slurm array task', () => {
  it('tasks 0..N-1 of --array=0-(N-1) are shards 1..N of N, whatever the throttle', () => {
    for (const n of [1, 4, 7]) {
      for (let id = 0; id < n; id++) expect(shardFromSlurmArray(task(id, { min: 0, max: n - 1 }))).toEqual({ index: id + 1, count: n });
    }
    // MAX and STEP are optional (older Slurm): MIN and COUNT settle it.
    expect(shardFromSlurmArray({ SLURM_ARRAY_TASK_ID: '2', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_COUNT: '3' })).toEqual({ index: 3, count: 3 });
  });

  it('outside an array task there is none', () => {
    expect(shardFromSlurmArray({})).toBeUndefined();
    expect(shardFromSlurmArray({ SLURM_ARRAY_TASK_ID: '', SLURM_ARRAY_TASK_COUNT: '4' })).toBeUndefined();
  });

  it('refuses, in one line, an array that does not start at 0 or has gaps, and unreadable variables', () => {
    expect(refusal(() => shardFromSlurmArray(task(2, { min: 1, max: 4 })))).toBe(
      'the Slurm array starts at task 1 (--array=1-4), not 0: submit the shards as --array=0-3, or give each task --shard K/N',
    );
    expect(refusal(() => shardFromSlurmArray(task(2, { min: 0, max: 6, step: 2 })))).toBe(
      'the Slurm array is not contiguous (--array=0-6:2, 4 tasks): submit the shards as --array=0-3, or give each task --shard K/N',
    );
    // --array=0,1,5: three tasks, the last numbered 5.
    expect(refusal(() => shardFromSlurmArray(task(5, { min: 0, max: 5, count: 3 })))).toMatch(/^the Slurm array is not contiguous \(--array=0-5, 3 tasks\)/);
    // A single task resubmitted on its own (--array=2) would claim a split of one.
    expect(refusal(() => shardFromSlurmArray(task(2, { min: 2, max: 2 })))).toMatch(/^the Slurm array starts at task 2/);
    expect(refusal(() => shardFromSlurmArray({ SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_MIN: '0' }))).toBe(
      "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not: cannot tell this task's shard (give --shard K/N)",
    );
    expect(refusal(() => shardFromSlurmArray({ ...task(1, { min: 0, max: 3 }), SLURM_ARRAY_TASK_ID: 'x' }))).toBe('SLURM_ARRAY_TASK_ID=x is not a task number (give --shard K/N)');
    expect(refusal(() => shardFromSlurmArray({ ...task(1, { min: 0, max: 3 }), SLURM_ARRAY_TASK_ID: '4' }))).toBe("SLURM_ARRAY_TASK_ID=4 is outside the array's 4 tasks (0-3)");
  });

  it('an explicit --shard wins; --workers in an array task is refused', () => {
    const env = task(1, { min: 0, max: 3 });
    const explicit: ShardFlags = { shard: { index: 3, count: 8 } };
    applySlurmArrayShard(explicit, env);
    expect(explicit.shard).toEqual({ index: 3, count: 8 });
    // Even a broken array leaves an explicit --shard alone: it is what such a task is told to give.
    const broken: ShardFlags = { shard: { index: 1, count: 2 } };
    applySlurmArrayShard(broken, task(3, { min: 1, max: 4 }));
    expect(broken.shard).toEqual({ index: 1, count: 2 });
    const fromEnv: ShardFlags = {};
    applySlurmArrayShard(fromEnv, env);
    expect(fromEnv.shard).toEqual({ index: 2, count: 4 });
    const none: ShardFlags = {};
    applySlurmArrayShard(none, {});
    expect(none.shard).toBeUndefined();
    expect(refusal(() => applySlurmArrayShard({ workers: 2 }, env))).toBe(
      '--workers in a Slurm array task (task 1, shard 2/4): each task runs one shard; drop --workers, or give --shard K/N',
    );
  });
});

describe('score, rerank, evaluate and gcdf1 read the Slurm array', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('each refuses a broken array before any work, and takes --shard over it', async () => {
    for (const [k, v] of Object.entries(task(1, { min: 1, max: 3 }))) vi.stubEnv(k, v);
    const argv: Record<string, string[]> = {
      score: ['score', '-o', 'never.json'],
      rerank: ['rerank', '-i', 'never.jsonl', '-o', 'never.json'],
      evaluate: ['evaluate', '-i', 'never.json', '--sgsacc', '-o', 'never.json'],
      gcdf1: ['gcdf1', '-d', 'never', '-o', 'never.json'],
    };
    for (const [command, args] of Object.entries(argv)) {
      await expect(runInProcess(args), command).rejects.toThrow('the Slurm array starts at task 1 (--array=1-3), not 0');
      // With --shard the array is not read: the command goes on and fails on its missing input instead.
      await expect(runInProcess([...args, '--shard', '1/2']), command).rejects.not.toThrow('Slurm');
    }
  });

  it('evaluate reads it only with --sgsacc -o: any other evaluate in an array task (a sweep) runs whole', async () => {
    for (const array of [{ min: 0, max: 1 }, { min: 1, max: 3 }]) {
      for (const [k, v] of Object.entries(task(array.min, array))) vi.stubEnv(k, v);
      for (const args of [['--bleu'], ['--bleu', '-o', 'never-out.json'], ['--sgsacc']]) {
        // No shard taken, none refused: the run goes on and fails on its missing input instead.
        await expect(runInProcess(['evaluate', '-i', 'never.json', ...args]), args.join(' ')).rejects.not.toThrow(/Slurm|--shard/);
      }
    }
  });
});
