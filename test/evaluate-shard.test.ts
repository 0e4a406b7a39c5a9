import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HAS_BUILT_CLI, runBuiltCli } from './helpers/cli.js';
import { runInProcess } from './helpers/in-process-cli.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { getSensitiveTinyModelDir } from './nli-fixtures.js';
import { suiteTempDir } from './helpers/temp.js';

// evaluate --sgsacc --shard K/N: the SGSAcc section is split by dialogue and merges back exactly;
// the mwzeval sections (and chrF/TER beside them) are computed whole by every shard. Tiny random model: checks the split and
// the merge, not SGSAcc values.
describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))(
  'evaluate --sgsacc --shard K/N and todeval merge',
  () => {
    const dir = suiteTempDir('evshard');
    const f = (name: string) => path.join(dir, name);
    let model = '';
    const args = () => ['evaluate', '-i', f('input.json'), '--sgsacc', '--data-dir', DATA_DIR, '--model', model, '--device', 'cpu', '-b', '--chrf', '--ter', '--skip-delexicalized'];

    beforeAll(async () => {
      model = getSensitiveTinyModelDir();
      const convlab = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'), 'utf8')) as Record<string, { log: { text: string }[] }>;
      // Five dialogues: gold texts as lexicalized responses, one dialogue delexicalized throughout
      // (its turns count as left out in whichever shard it falls).
      const ids = Object.keys(convlab).slice(0, 5);
      const input = Object.fromEntries(
        ids.map((id, d) => [
          id.replace(/\.json$/, '').toLowerCase(),
          convlab[id].log.filter((_, i) => i % 2 === 1).map((t) => ({ response: d === 1 ? '[value_name] is there' : t.text })),
        ]),
      );
      writeFileSync(f('input.json'), JSON.stringify(input));
      await runInProcess([...args(), '-o', f('whole.json')]);
    });

    it.each([2, 3])('%i shards merge to the unsharded report', async (n) => {
      const shards: string[] = [];
      for (let k = 1; k <= n; k++) {
        await runInProcess([...args(), '--shard', `${k}/${n}`, '-o', f(`ev-${k}of${n}.json`)]);
        shards.push(f(`ev-${k}of${n}.json`));
      }
      await runInProcess(['merge', ...shards.reverse(), '-o', f(`ev-merged-${n}.json`)]);
      const whole = JSON.parse(readFileSync(f('whole.json'), 'utf8')) as Record<string, { counts: Record<string, number> }>;
      const merged = JSON.parse(readFileSync(f(`ev-merged-${n}.json`), 'utf8')) as Record<string, unknown>;
      expect(whole.sgsacc.counts.delexicalizedTurns).toBeGreaterThan(0);
      // chrF and TER, like BLEU, are computed whole by every shard and carried through the merge.
      expect(Object.keys(whole)).toEqual(expect.arrayContaining(['bleu', 'chrf', 'ter']));
      expect(merged).toEqual(whole);
      // Each shard scored only its own dialogues.
      const parts = shards.map((s) => (JSON.parse(readFileSync(s, 'utf8')) as { shard: { turns: { lexicalized: number } } }).shard.turns.lexicalized);
      expect(parts.reduce((a, b) => a + b, 0)).toBe(whole.sgsacc.counts.lexicalizedTurns);
      expect(parts.filter((x) => x > 0).length).toBeGreaterThan(1);
    });

    it('refuses --shard without --sgsacc or without -o', async () => {
      const plain = args().filter((a) => a !== '--sgsacc' && a !== '--skip-delexicalized');
      await expect(runInProcess([...plain, '--shard', '1/2', '-o', f('x.json')])).rejects.toThrow(/--shard splits the SGSAcc scoring of --sgsacc/);
      await expect(runInProcess([...args(), '--shard', '1/2'])).rejects.toThrow(/--shard needs -o\/--output/);
    });
  },
);

// In a Slurm array task that is not a shard run (a hyper-parameter sweep, the Python Evaluator),
// evaluate computes the whole report: the array is read only for --sgsacc -o (docs/scale-out.md).
describe.skipIf(!HAS_BUILT_CLI || !hasData('multiwoz', 'predictions', 'damd.json'))('evaluate in a Slurm array task', () => {
  const dir = suiteTempDir('evslurm');

  it('without --sgsacc -o: exit 0 and the report of the same run outside the array', async () => {
    const all = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'predictions', 'damd.json'), 'utf8')) as Record<string, unknown[]>;
    const [first, second] = Object.keys(all);
    const input = path.join(dir, 'two.json');
    writeFileSync(input, JSON.stringify({ [first]: all[first], [second]: all[second] }));
    const args = ['evaluate', '-i', input, '--bleu', '--json', '--data-dir', DATA_DIR];
    const outside = await runBuiltCli(args, dir, { SLURM_ARRAY_TASK_ID: undefined, SLURM_ARRAY_TASK_COUNT: undefined, SLURM_ARRAY_TASK_MIN: undefined });
    const inside = await runBuiltCli(args, dir, { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: '2', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_MAX: '1' });
    expect(outside.code, outside.stderr).toBe(0);
    expect(inside.code, inside.stderr).toBe(0);
    expect(inside.stdout).toBe(outside.stdout);
    expect(JSON.parse(inside.stdout)).toHaveProperty('bleu');
  }, 120_000);
});
