import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readRecordLines } from '../src/util/record-lines.js';
import { runCli } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { suiteTempDir, tempDir } from './helpers/temp.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { refusal } from './helpers/refusal.js';

// Issue 42: a --turns file holding one id twice with different values was read last-wins (compare
// exited 0 with SGSAcc moved, report showed a ± beside another run score); a shard whose --turns
// file was cut short merged into a file missing turns under a report that claimed them all.
// One reader (readRecordLines) now reads every record file; merge counts each shard's records.


describe('readRecordLines', () => {
  const a = JSON.stringify({ id: 'd/1', v: 1 });
  it('an identical duplicate is one record; order is first appearance', () => {
    const recs = readRecordLines(['{"id":"d/0"}', a, '{"id":"d/2"}', a], 'f.jsonl', { firstLine: 2 });
    expect([...recs.keys()]).toEqual(['d/0', 'd/1', 'd/2']);
  });
  it('a conflicting duplicate is refused naming the id and both line numbers', () => {
    expect(refusal(() => readRecordLines(['{"id":"d/0"}', a, JSON.stringify({ id: 'd/1', v: 2 })], 'f.jsonl', { firstLine: 2 }))).toBe(
      'f.jsonl: id "d/1" appears twice with different records (lines 3 and 4); two runs wrote this file at once, or it was edited: keep one of the two lines',
    );
  });
  it('a later record that only completes the earlier (the references store) replaces it; one that changes it does not', () => {
    const early = { id: 'd/1', actions: [{ act: 'INFORM', choices: [1] }] };
    const later = { id: 'd/1', actions: [{ act: 'INFORM', choices: [1], control: true }], groundTruth: { s: 1 } };
    const recs = readRecordLines([JSON.stringify(early), JSON.stringify(later)], 'r.jsonl', { completedFields: ['groundTruth'] });
    expect(recs.get('d/1')).toEqual(later);
    const changed = { id: 'd/1', actions: [{ act: 'INFORM', choices: [2] }] };
    expect(refusal(() => readRecordLines([JSON.stringify(early), JSON.stringify(changed)], 'r.jsonl', { completedFields: ['groundTruth'] }))).toMatch(/appears twice/);
  });
});

const SGD_FILE = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 24;

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))('record files on the command line (lexical stand-in, SGD slice, 2 shards)', () => {
  const dir = suiteTempDir('records');
  const f = (name: string) => path.join(dir, name);
  const shardArgs = (k: number) => [
    'score', '--dataset', 'sgd', '--data-dir', DATA_DIR, '--dialogues', SGD_FILE, '--limit', String(LIMIT), '--shard', `${k}/2`,
    '--model', getLexicalStandinDir(), '--device', 'cpu', '--threads', '1', '--progress', 'none', '--turns', f(`s${k}.turns.jsonl`), '-o', f(`s${k}.json`),
  ];
  const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');

  beforeAll(async () => {
    for (const k of [1, 2]) {
      const r = await runCli(shardArgs(k));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
  }, 180_000);

  /** A copy of the shards in their own folder (the reports name their files relative to it), shard 1's turns file changed by `edit`. */
  function shardCopy(edit: (turnLines: string[]) => string[]): string {
    const at = tempDir('records-copy');
    for (const name of ['s1.json', 's2.json', 's2.turns.jsonl', 's1.turns.references.jsonl', 's2.turns.references.jsonl']) copyFileSync(f(name), path.join(at, name));
    writeFileSync(path.join(at, 's1.turns.jsonl'), edit(lines(f('s1.turns.jsonl'))).join('\n') + '\n');
    return at;
  }

  it('merge refuses a short shard naming the shard and both counts (was: exit 0, turns dropped, the report still counting them all)', async () => {
    const whole = lines(f('s1.turns.jsonl')).length - 1;
    const at = shardCopy((l) => l.slice(0, 1 + whole - 3));
    const r = await runCli(['merge', path.join(at, 's1.json'), path.join(at, 's2.json'), '--turns', path.join(at, 'all.turns.jsonl'), '-o', path.join(at, 'all.json')]);
    expect(r.stderr).toBe(
      `todeval: ${path.join(at, 's1.turns.jsonl')}: shard 1/2: its turns file holds ${whole - 3} records and its report ${path.join(at, 's1.json')} counts ${whole}; rerun that shard to complete it\n`,
    );
    expect(r.code).toBe(2);
  }, 60_000);

  it('an identical duplicate line (a run that wrote a turn twice) is one record: merge gives every turn once', async () => {
    const at = shardCopy((l) => [...l, l[2]]);
    const r = await runCli(['merge', path.join(at, 's1.json'), path.join(at, 's2.json'), '--turns', path.join(at, 'all.turns.jsonl'), '-o', path.join(at, 'all.json')]);
    expect(r.code).toBe(0);
    expect(lines(path.join(at, 'all.turns.jsonl'))).toHaveLength(LIMIT + 1);
  }, 60_000);

  it('a conflicting duplicate is refused by compare, report and resume, naming the id and both lines (was: last wins, exit 0)', async () => {
    let id = '';
    const at = shardCopy((l) => {
      const rec = JSON.parse(l[2]) as { id: string; sgsacc?: unknown; label?: string };
      id = rec.id;
      return [...l, JSON.stringify({ ...rec, label: rec.label === 'accurate' ? 'omission' : 'accurate', sgsacc: rec.sgsacc === 1 ? 0 : 1 })];
    });
    const turns = path.join(at, 's1.turns.jsonl');
    const n = lines(turns).length;
    const expected = `todeval: ${turns}: id ${JSON.stringify(id)} appears twice with different records (lines 3 and ${n}); two runs wrote this file at once, or it was edited: keep one of the two lines\n`;
    const compare = await runCli(['compare', turns, path.join(at, 's2.turns.jsonl')]);
    expect(compare.stderr).toBe(expected);
    expect(compare.code).toBe(2);
    const report = await runCli(['report', path.join(at, 's1.json'), '--turns', turns, '-o', path.join(at, 'r.html')]);
    expect(report.stderr).toBe(expected);
    expect(report.code).toBe(2);
    const resume = await runCli(shardArgs(1).map((a) => (a === f('s1.turns.jsonl') ? turns : a === f('s1.json') ? path.join(at, 's1b.json') : a)));
    expect(resume.stderr).toBe(expected);
    expect(resume.code).toBe(2);
  }, 120_000);

  it('report and merge check run JSON against schemas/run-report.schema.json before use (was: "sgsacc": "oops" rendered, exit 0)', async () => {
    const at = shardCopy((l) => l);
    const bad = JSON.parse(readFileSync(path.join(at, 's1.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(path.join(at, 's1.json'), JSON.stringify({ ...bad, sgsacc: 'oops' }));
    const report = await runCli(['report', path.join(at, 's1.json'), '-o', path.join(at, 'r.html')]);
    expect(report.stderr).toBe(`todeval: ${path.join(at, 's1.json')}: not a valid sgsacc run report: sgsacc must be object (schemas/run-report.schema.json)\n`);
    expect(report.code).toBe(2);
    const merge = await runCli(['merge', path.join(at, 's1.json'), path.join(at, 's2.json'), '-o', path.join(at, 'all.json')]);
    expect(merge.stderr).toBe(`todeval: ${path.join(at, 's1.json')}: not a valid sgsacc run report: sgsacc must be object (schemas/run-report.schema.json)\n`);
    expect(merge.code).toBe(2);
    writeFileSync(path.join(at, 's1.json'), JSON.stringify({ ...bad, dataset: { ...(bad.dataset as object), turns: '12' } }));
    const counted = await runCli(['merge', path.join(at, 's1.json'), path.join(at, 's2.json'), '-o', path.join(at, 'all.json')]);
    expect(counted.stderr).toBe(`todeval: ${path.join(at, 's1.json')}: not a valid sgsacc run report: dataset.turns must be integer (schemas/run-report.schema.json)\n`);
    expect(counted.code).toBe(2);
  }, 60_000);
});
