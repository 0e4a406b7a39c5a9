import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from './helpers/cli.js';
import { runInProcess } from './helpers/in-process-cli.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';

// gcdf1 --shard K/N and todeval merge: the merged report and per-dialogue file are the unsharded
// run's, byte for byte; a Slurm array task takes its shard from SLURM_ARRAY_TASK_* like --shard.
describe.skipIf(!hasData('gcdf1', 'convlab_baselines', 'test', 'dialogues_001.json'))('gcdf1 in shards', () => {
  const dir = suiteTempDir('gcdf1-shard');
  const dialogues = path.join(DATA_DIR, 'gcdf1', 'convlab_baselines', 'test');
  const base = () => ['gcdf1', '-d', dialogues, '--data-dir', DATA_DIR, '--limit', '11'];
  const file = (name: string) => path.join(dir, name);
  const read = (name: string) => readFileSync(file(name), 'utf8');

  beforeAll(async () => {
    await runInProcess([...base(), '-o', file('one.json'), '--per-dialogue', file('one.dialogues.json')]);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('3 shards (two of them Slurm array tasks) merge into the unsharded report and per-dialogue file', async () => {
    await runInProcess([...base(), '--shard', '2/3', '-o', file('p2.json')]);
    for (const id of [0, 2]) {
      vi.stubEnv('SLURM_ARRAY_TASK_ID', String(id));
      vi.stubEnv('SLURM_ARRAY_TASK_COUNT', '3');
      vi.stubEnv('SLURM_ARRAY_TASK_MIN', '0');
      vi.stubEnv('SLURM_ARRAY_TASK_MAX', '2');
      await runInProcess([...base(), '-o', file(`p${id + 1}.json`)]);
    }
    const shards = [1, 2, 3].map((k) => JSON.parse(read(`p${k}.json`)) as { metadata: { signature: { shard: string; dialogues: number } } });
    expect(shards.map((s) => s.metadata.signature.shard)).toEqual(['1/3', '2/3', '3/3']);
    expect(shards.reduce((n, s) => n + s.metadata.signature.dialogues, 0)).toBe(11);
    vi.unstubAllEnvs();
    const out = await runInProcess(['merge', file('p3.json'), file('p1.json'), file('p2.json'), '-o', file('merged.json'), '--per-dialogue', file('merged.dialogues.json')]);
    expect(read('merged.json')).toBe(read('one.json'));
    expect(read('merged.dialogues.json')).toBe(read('one.dialogues.json'));
    expect(out).toContain('GCDF1 over 11 dialogues');
  });

  it('refuses a missing or foreign shard and a broken Slurm array, each in one line (exit 2)', async () => {
    await runInProcess([...base(), '--shard', '1/2', '-o', file('q1.json')]);
    const missing = await runCli(['merge', file('q1.json'), '-o', file('q.json')]);
    expect(missing).toMatchObject({ code: 2, stderr: 'todeval: missing shard 2/2: the run was split into 2, 1 given\n' });
    // Another --limit is another run.
    await runInProcess(['gcdf1', '-d', dialogues, '--data-dir', DATA_DIR, '--limit', '10', '--shard', '2/2', '-o', file('q2.json')]);
    const foreign = await runCli(['merge', file('q1.json'), file('q2.json'), '-o', file('q.json')]);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(/^todeval: .*q2\.json: not the same run as .*q1\.json: limit is 11 in q1\.json, 10 in q2\.json\n$/);
    const gapped = await runCli([...base(), '-o', file('r.json')], { SLURM_ARRAY_TASK_ID: '3', SLURM_ARRAY_TASK_COUNT: '3', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_MAX: '3' });
    expect(gapped).toMatchObject({ code: 2, stderr: 'todeval: the Slurm array starts at task 1 (--array=1-3), not 0: submit the shards as --array=0-2, or give each task --shard K/N\n' });
    const noOutput = await runCli(base(), { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: '2', SLURM_ARRAY_TASK_MIN: '0' });
    expect(noOutput).toMatchObject({ code: 2, stderr: 'todeval: --shard needs -o/--output: todeval merge joins the shard reports\n' });
  });
});
