import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGV, runCli } from './helpers/cli.js';
import { runInProcess } from './helpers/in-process-cli.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { getSensitiveTinyModelDir } from './nli-fixtures.js';
import { suiteTempDir } from './helpers/temp.js';

// Sharded runs merged must give the unsharded run's report exactly, with the tiny random model
// (its labels vary, so the per-turn verdicts and every percentage are non-trivial). 40 system turns
// of dialogues_017 span 4 dialogues, so N = 7 also exercises shards with no turn at all.
const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 40;
const SPLITS = [1, 2, 3, 7];

type Json = Record<string, unknown>;
const readJson = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as Json;
const records = (f: string) => readFileSync(f, 'utf8').trim().split('\n');

/** A report without what legitimately differs: `nli` counts work done (batching differs by shard). */
function comparable(report: Json): Json {
  const { nli: _nli, ...rest } = report;
  const refs = rest.references as Json | undefined;
  return refs ? { ...rest, references: { ...refs, file: null } } : rest;
}

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))(
  'score / rerank --shard K/N and todeval merge',
  () => {
    const dir = suiteTempDir('shard');
    const f = (name: string) => path.join(dir, name);
    let model = '';
    const scoreArgs = () => ['score', '--dataset', 'sgd', '--dialogues', DIALOGUES, '--data-dir', DATA_DIR, '--limit', String(LIMIT), '--model', model, '--device', 'cpu', '--chunk', '8'];
    const rerankArgs = () => ['rerank', '-i', f('items.jsonl'), '--dataset', 'sgd', '--dialogues', DIALOGUES, '--data-dir', DATA_DIR, '--model', model, '--device', 'cpu'];

    // Shard K/N of a score run, by tag: run once per file run, and the report's path given again to a
    // later test that needs the same shard (the refusals below take the N = 2, 3 and --hallucination
    // shards the merge tests made; run alone, a test makes them itself).
    const shardRuns = new Map<string, Promise<string>>();
    const scoreShard = (k: number, n: number, tag: string, extra: string[] = []): Promise<string> => {
      const p = (ext: string) => f(`${tag}-${k}of${n}.${ext}`);
      let run = shardRuns.get(p('json'));
      if (!run) {
        run = runInProcess([...scoreArgs(), ...extra, '--shard', `${k}/${n}`, '-o', p('json'), '--turns', p('turns.jsonl'), '--references', p('refs.jsonl')]).then(() => p('json'));
        shardRuns.set(p('json'), run);
      }
      return run;
    };
    const scoreShards = async (n: number, tag: string, extra: string[] = []) => {
      const files: string[] = [];
      for (let k = 1; k <= n; k++) files.push(await scoreShard(k, n, tag, extra));
      return files;
    };

    beforeAll(async () => {
      model = getSensitiveTinyModelDir();
      await runInProcess([...scoreArgs(), '-o', f('score.json'), '--turns', f('score.turns.jsonl'), '--references', f('score.refs.jsonl')]);
      // Rerank items: dataset turns (grouped by their dialogue) with three candidates each, and
      // inline items (each its own group), interleaved so the shards' items are not contiguous.
      const dialogues = JSON.parse(readFileSync(DIALOGUES, 'utf8')) as { dialogue_id: string; turns: { speaker: string; utterance: string }[] }[];
      const items: Json[] = [];
      for (const d of dialogues.slice(0, 4)) {
        d.turns.forEach((t, i) => {
          if (t.speaker !== 'SYSTEM' || i > 12) return;
          items.push({
            id: `${d.dialogue_id}/${i}`,
            dataset_id: `${d.dialogue_id}/${i}`,
            candidates: [
              { system: 'gold', text: t.utterance },
              { system: 'short', text: t.utterance.split(' ').slice(0, 4).join(' ') },
              { system: 'generic', text: 'Is there anything else I can help you with?' },
            ],
          });
          if (items.length % 5 === 0) {
            items.push({
              id: `inline-${items.length}`,
              service: 'Alarm_1',
              actions: [{ act: 'OFFER', slot: 'alarm_time', values: ['7 am'] }],
              candidates: [
                { system: 'gold', text: 'Your alarm is set for 7 am.' },
                { system: 'short', text: 'Alarm set.' },
                { system: 'generic', text: 'Is there anything else I can help you with?' },
              ],
            });
          }
        });
      }
      writeFileSync(f('items.jsonl'), items.map((it) => JSON.stringify(it)).join('\n') + '\n');
      await runInProcess([...rerankArgs(), '-o', f('rerank.json'), '--turns', f('rerank.items.jsonl')]);
    });

    it.each(SPLITS)('score in %i shards merges to the unsharded report, per-turn and reference files', async (n) => {
      const shards = await scoreShards(n, 'score');
      const text = await runInProcess(['merge', ...shards.reverse(), '-o', f(`merged-${n}.json`), '--turns', f(`merged-${n}.turns.jsonl`), '--references', f(`merged-${n}.refs.jsonl`)]);
      const whole = readJson(f('score.json'));
      const merged = readJson(f(`merged-${n}.json`));
      expect(comparable(merged)).toEqual(comparable(whole));
      expect(merged.references).toMatchObject({ file: f(`merged-${n}.refs.jsonl`) });
      expect(text).toContain(`signature: ${String(whole.signatureText)}`);
      // Shards carry the shard in their signatures; the merged report does not.
      expect((readJson(shards[0]).signature as Json).shard).toBe(`${n}/${n}`);
      for (const [mine, theirs] of [['turns', 'turns'], ['refs', 'refs']]) {
        const a = records(f(`merged-${n}.${mine}.jsonl`));
        const b = records(f(`score.${theirs}.jsonl`));
        expect(a[0]).toBe(b[0]); // the same header: signature without the shard
        expect(new Set(a.slice(1))).toEqual(new Set(b.slice(1)));
        expect(a.length).toBe(LIMIT + 1);
      }
    });

    it.each(SPLITS)('rerank in %i shards merges to the unsharded report and items file', async (n) => {
      const shards: string[] = [];
      for (let k = 1; k <= n; k++) {
        await runInProcess([...rerankArgs(), '--shard', `${k}/${n}`, '-o', f(`rr-${k}of${n}.json`), '--turns', f(`rr-${k}of${n}.items.jsonl`)]);
        shards.push(f(`rr-${k}of${n}.json`));
      }
      await runInProcess(['merge', ...shards, '-o', f(`rr-merged-${n}.json`), '--turns', f(`rr-merged-${n}.items.jsonl`)]);
      expect(comparable(readJson(f(`rr-merged-${n}.json`)))).toEqual(comparable(readJson(f('rerank.json'))));
      const a = records(f(`rr-merged-${n}.items.jsonl`));
      const b = records(f('rerank.items.jsonl'));
      expect(a[0]).toBe(b[0]);
      expect(new Set(a.slice(1))).toEqual(new Set(b.slice(1)));
      if (n > 1) {
        // A dialogue never spans two shards.
        const owner = new Map<string, number>();
        for (let k = 1; k <= n; k++) {
          for (const item of (readJson(f(`rr-${k}of${n}.json`)).items as { id: string }[])) {
            const dialogue = item.id.startsWith('inline-') ? item.id : item.id.split('/')[0];
            expect(owner.get(dialogue) ?? k).toBe(k);
            owner.set(dialogue, k);
          }
        }
        expect(new Set(owner.values()).size).toBeGreaterThan(1);
      }
    });

    it('score --hallucination in 3 shards merges to the unsharded report (both directions, four-way labels)', async () => {
      await runInProcess([...scoreArgs(), '--hallucination', '-o', f('hal.json'), '--references', f('hal.refs.jsonl')]);
      const shards = await scoreShards(3, 'hal', ['--hallucination']);
      await runInProcess(['merge', ...shards, '-o', f('hal-merged.json')]);
      const whole = readJson(f('hal.json'));
      expect(whole.hallucination).toBeDefined();
      expect((whole.groundTruth as Json).hallucination).toBeDefined();
      const { references: _a, ...merged } = comparable(readJson(f('hal-merged.json')));
      const { references: _b, ...unsharded } = comparable(whole);
      expect(merged).toEqual(unsharded);
    });

    it('refuses shards of another configuration, another split, a shard twice or missing', async () => {
      const [a1, a2, a3] = await scoreShards(3, 'score'); // the N = 3 case's files
      const other2 = await scoreShard(2, 3, 'nocontext', ['--no-context']);
      const b1 = await scoreShard(1, 2, 'score');
      const merge = (...files: string[]) => runInProcess(['merge', ...files, '-o', f('refused.json')]);
      // The refusal names the key, both values and the file each is in (was: "hallucination true vs undefined").
      const name = (file: string) => path.basename(file).replaceAll('.', '\\.');
      await expect(merge(a1, other2, a3)).rejects.toThrow(new RegExp(`not the same run as .*: context is true in ${name(a1)}, false in ${name(other2)}$`));
      const hal2 = await scoreShard(2, 3, 'hal', ['--hallucination']);
      await expect(merge(a1, hal2, a3)).rejects.toThrow(new RegExp(`not the same run as .*: hallucination is not set in ${name(a1)}, true in ${name(hal2)}$`));
      await expect(merge(a1, a2, b1)).rejects.toThrow(/split into 2, .* split into 3/);
      copyFileSync(a2, f('copy-of-2.json'));
      await expect(merge(a1, a2, f('copy-of-2.json'), a3)).rejects.toThrow(/shard 2\/3 given twice/);
      await expect(merge(a3, a1)).rejects.toThrow(/missing shard 2\/3: the run was split into 3, 2 given/);
      await expect(merge(a1, a2, f('score.json'))).rejects.toThrow(/not a shard report/);
      expect(existsSync(f('refused.json'))).toBe(false);
      // Through the real CLI: one line, exit code 2.
      const res = await runCli(['merge', a1, a3, '-o', f('refused.json')]);
      expect(res.code).toBe(2);
      expect(res.stderr).toBe('todeval: missing shard 2/3: the run was split into 3, 2 given\n');
      expect(existsSync(f('refused.json'))).toBe(false);
      await expect(runInProcess([...scoreArgs(), '--shard', '1/2'])).rejects.toThrow(/--shard needs -o\/--output/);
      await expect(runInProcess([...scoreArgs(), '--shard', '3/2', '-o', f('x.json')])).rejects.toThrow(/--shard must be K\/N/);
      await expect(runInProcess([...scoreArgs(), '--shard', '1/2', '--workers', '2', '-o', f('x.json')])).rejects.toThrow(/give --workers or --shard, not both/);
    });

    it('a shard killed (SIGKILL) half-way resumes and the merge still equals the unsharded run', async () => {
      const p = (k: number, ext: string) => f(`resume-${k}of2.${ext}`);
      const shardArgs = (k: number) => [...scoreArgs(), '--shard', `${k}/2`, '-o', p(k, 'json'), '--turns', p(k, 'turns.jsonl'), '--references', p(k, 'refs.jsonl')];
      await runInProcess(shardArgs(1));
      // Shard 2 in its own process, one turn per chunk, killed without warning once a few turns are saved.
      const child = spawn(process.execPath, [...CLI_ARGV, ...shardArgs(2), '--chunk', '1'], { cwd: REPO_ROOT, stdio: 'ignore' });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && !(existsSync(p(2, 'turns.jsonl')) && records(p(2, 'turns.jsonl')).length >= 4)) await new Promise((r) => setTimeout(r, 10));
      child.kill('SIGKILL');
      await exited;
      expect(existsSync(p(2, 'json'))).toBe(false);
      const saved = records(p(2, 'turns.jsonl')).length - 1;
      await runInProcess(shardArgs(2));
      const after = readJson(p(2, 'json'));
      // It picked up where it was killed (a torn last record, if any, is computed again).
      expect(after.resumed).toBeGreaterThanOrEqual(saved - 1);
      expect(after.resumed).toBeLessThan((after.dataset as { turns: number }).turns);
      await runInProcess(['merge', p(2, 'json'), p(1, 'json'), '-o', f('resume-merged.json'), '--turns', f('resume-merged.turns.jsonl')]);
      const { references: _r3, resumed, ...merged } = comparable(readJson(f('resume-merged.json')));
      const { references: _r4, resumed: _s4, ...whole } = comparable(readJson(f('score.json')));
      // `resumed` counts the work the run skipped: the turns shard 2 kept from before it was killed.
      expect(resumed).toBe(after.resumed);
      expect(merged).toEqual(whole);
      const a = records(f('resume-merged.turns.jsonl'));
      const b = records(f('score.turns.jsonl'));
      expect(a[0]).toBe(b[0]);
      expect(new Set(a.slice(1))).toEqual(new Set(b.slice(1)));
    });
  },
);
