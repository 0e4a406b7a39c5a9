import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HAS_BUILT_CLI, runBuiltCli } from './helpers/cli.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';

const SCHEMA = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'schema.json');
const DIALOGUES = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'dialogues.json');
// Made in the file's beforeAll: a run where every suite here is skipped (no built CLI) makes none.
const tmp = suiteTempDir('refs-cli');

// The CLI as users run it (built by `npm test` before vitest).
const todeval = (...args: string[]) => runBuiltCli(args, tmp);

function mutated(name: string, mutate: (d: any) => void): string {
  const d = JSON.parse(readFileSync(DIALOGUES, 'utf8'));
  mutate(d);
  const f = path.join(tmp, name);
  writeFileSync(f, JSON.stringify(d));
  return f;
}

describe.skipIf(!HAS_BUILT_CLI)('todeval refs CLI', () => {
  it('runs the bundled example: summary with per-act counts, no action below two candidates', async () => {
    const r = await todeval('refs', '--input', DIALOGUES, '--schema', SCHEMA, '--summary');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/9 system turns, 14 actions/);
    expect(r.stdout).toMatch(/actions with < 2 candidates: 0/);
    expect(r.stdout).toMatch(/actions without a rule: 0/);
    expect(r.stdout).toMatch(/rules hash: [0-9a-f]{64}/);
  });

  it('writes one JSON object per action to --out and the signature beside it', async () => {
    const out = path.join(tmp, 'refs.jsonl');
    const r = await todeval('refs', '--input', DIALOGUES, '--schema', SCHEMA, '--out', out);
    expect(r.code).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBe(14);
    expect(Object.keys(lines[0]).slice(0, 7)).toEqual(['id', 'service', 'act', 'slot', 'values', 'candidates', 'negatives']);
    expect(lines[0].id).toBe('mini_001/1');
    const sig = JSON.parse(readFileSync(`${out}.signature.json`, 'utf8'));
    expect(sig).toMatchObject({ tool: 'todeval', dataset: 'sgd' });
    expect(sig.rules).toMatch(/^[0-9a-f]{64}$/);
  });

  const bad: [string, string[], RegExp][] = [
    ['unreadable JSON', [], /broken\.json: not valid JSON/],
    ['unknown service', [], /svc\.json: mini_001\/1: unknown service "Nowhere_1"/],
    ['unknown slot', [], /slot\.json: mini_002\/1: unknown slot "bakery_phone"/],
    ['action without utterance', [], /utt\.json: mini_003\/1: system turn has no utterance/],
  ];
  const files: Record<string, string> = {};
  // Written when the suite runs, not while vitest collects it (a skipped suite's body runs too).
  beforeAll(() => {
    files['unreadable JSON'] = path.join(tmp, 'broken.json');
    writeFileSync(files['unreadable JSON'], '[{"dialogue_id": "x", "turns": [');
    files['unknown service'] = mutated('svc.json', (d) => (d[0].turns[1].frames[0].service = 'Nowhere_1'));
    files['unknown slot'] = mutated('slot.json', (d) => (d[1].turns[1].frames[0].actions[1].slot = 'bakery_phone'));
    files['action without utterance'] = mutated('utt.json', (d) => delete d[2].turns[1].utterance);
  });

  it.each(bad)('%s: one line naming file and turn, exit 2', async (name, _extra, msg) => {
    const r = await todeval('refs', '--input', files[name], '--schema', SCHEMA, '--summary');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(msg);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('wrong schema version: a dialogues file as schema, an SGD file as MultiWOZ', async () => {
    const a = await todeval('refs', '--input', DIALOGUES, '--schema', DIALOGUES);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/dialogues\.json: service #0: unsupported schema format/);
    const b = await todeval('refs', '--dataset', 'multiwoz', '--input', DIALOGUES, '--schema', SCHEMA);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/expected a MultiWOZ ConvLab file/);
  });

  it('--skip-invalid lists the invalid turns and goes on', async () => {
    const f = mutated('two-bad.json', (d) => {
      d[0].turns[1].frames[0].service = 'Nowhere_1';
      delete d[2].turns[1].utterance;
    });
    const r = await todeval('refs', '--input', f, '--schema', SCHEMA, '--summary', '--skip-invalid');
    expect(r.code).toBe(0);
    const listed = r.stderr.trim().split('\n');
    expect(listed).toEqual([
      expect.stringMatching(/^todeval: warning: skipped invalid input: .*two-bad\.json: mini_001\/1: unknown service/),
      expect.stringMatching(/^todeval: warning: skipped invalid input: .*two-bad\.json: mini_003\/1: system turn has no utterance/),
    ]);
    expect(r.stdout).toMatch(/7 system turns/);
    expect(r.stdout).toMatch(/invalid items skipped: 2/);
  });
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json') || !existsSync(path.join(REPO_ROOT, 'dist')))(
  'todeval refs on the shared MultiWOZ test file',
  () => {
    it('--dataset multiwoz --summary: every action covered, counts match the file', async () => {
      const r = await todeval('refs', '--dataset', 'multiwoz', '--data-dir', DATA_DIR, '--summary');
      expect(r.code).toBe(0);
      const raw = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'), 'utf8')) as Record<
        string,
        { log: { dialog_act: Record<string, unknown[]> }[] }
      >;
      let actions = 0;
      for (const d of Object.values(raw)) {
        d.log.forEach((t, i) => {
          if (i % 2 === 1) for (const pairs of Object.values(t.dialog_act)) actions += pairs.length;
        });
      }
      expect(r.stdout).toContain(`, ${actions} actions`);
      expect(r.stdout).toMatch(/actions with < 2 candidates: 0/);
      expect(r.stdout).toMatch(/actions without a rule: 0/);
    });
  },
);
