import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../src/adapters/load.js';
import { loadCanonicalMap } from '../src/metrics/canonical-map.js';
import { computeSer, canonicalMapSlot } from '../src/metrics/ser.js';
import { loadSchemaFile } from '../src/schema/schema-index.js';
import { runCli } from './helpers/cli.js';
import { DATA_DIR, hasData } from './helpers/shared.js';

const cli = (...args: string[]) => runCli(args);

const tmps: string[] = [];
const tmp = (): string => {
  const dir = mkdtempSync(path.join(tmpdir(), 'todeval-ser-'));
  tmps.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of tmps) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!hasData('sgd', 'test', 'dialogues_001.json'))('SER on a slice of real SGD test data', () => {
  const sgdFile = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_001.json');
  const sgdSchema = path.join(DATA_DIR, 'sgd', 'test', 'schema.json');
  // Read in beforeAll, not in the suite body: vitest runs the body of a skipped suite too.
  let data!: ReturnType<typeof loadDataset>;
  beforeAll(() => {
    data = loadDataset({ dataset: 'sgd', input: sgdFile, schemaFile: sgdSchema, limit: 400 });
  });
  const isCategorical = (s: string, sl: string) => data.schema.slot(s, sl)?.isCategorical;

  it('ground truth has no slot errors, and dropping a value from an utterance is caught', () => {
    const gold = computeSer(data.turns, { isCategorical });
    expect(gold.utterancesWithValues).toBeGreaterThan(50);
    expect(gold.errors).toBe(0);

    // Remove the first checked value from every third utterance that has one.
    const predictions = new Map<string, string>();
    const damaged = new Set<string>();
    let k = 0;
    for (const t of data.turns) {
      const a = t.actions.find((x) => x.values.length > 0 && isCategorical(x.service, x.slot) === false);
      let u = t.utterance;
      if (a && k++ % 3 === 0) {
        const v = a.values[0];
        u = u.replace(new RegExp(v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), 'something');
        damaged.add(t.id);
      }
      predictions.set(t.id, u);
    }
    const r = computeSer(data.turns, { isCategorical, predictions });
    expect(new Set(r.erroneous.map((e) => e.id))).toEqual(damaged);
    expect(r.errors).toBe(damaged.size);
    expect(r.ser).toBeCloseTo((100 * damaged.size) / gold.utterancesWithValues, 6);
  });

  it('the CLI scores predictions, lists missing/extra ids, and exits 2 on a bad predictions line', async () => {
    const dir = tmp();
    const withValues = data.turns.filter((t) => t.actions.some((a) => a.values.length > 0 && isCategorical(a.service, a.slot) === false));
    const lines = withValues.slice(0, 20).map((t, i) => JSON.stringify({ id: t.id, utterance: i < 5 ? 'I cannot help.' : t.utterance }));
    lines.push(JSON.stringify({ id: 'nope/1', utterance: 'x' }));
    const good = path.join(dir, 'pred.jsonl');
    writeFileSync(good, `${lines.join('\n')}\n`);
    const json = path.join(dir, 'ser.json');
    // Only 20 of the slice's turns have a prediction: refused without --allow-missing.
    const refused = await cli('ser', '--dataset', 'sgd', '--dialogues', sgdFile, '--schema', sgdSchema, '--limit', '400', '--predictions', good);
    expect(refused.code).toBe(2);
    // ...and one id matches no turn: that is said first, with the nearest valid ids.
    expect(refused.stderr).toMatch(new RegExp(`^todeval: ${good}: 1 prediction ids match no turn of .*first: nope/1; .*\\); \\d+ turns have no prediction; pass --allow-missing or --skip-invalid to score the others\n$`));
    const ok = await cli('ser', '--dataset', 'sgd', '--dialogues', sgdFile, '--schema', sgdSchema, '--limit', '400', '--predictions', good, '--json', json, '--allow-missing');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^SER 25\.00% \(5 of 20 utterances/);
    expect(ok.stdout).toMatch(/signature: tool:todeval\|version:[^|]+\|.*missingPredictions:\d+\|.*predictions:[^|/][^|]*\/pred\.jsonl@[0-9a-f]{12}/); // relative to the working directory, never absolute
    expect(ok.stderr).toMatch(/1 prediction ids match no turn/);
    expect(ok.stderr).toMatch(/turns have no prediction/);
    const report = JSON.parse(readFileSync(json, 'utf8')) as { report: { errors: number; extraIds: string[] } };
    expect(report.report.errors).toBe(5);
    expect(report.report.extraIds).toEqual(['nope/1']);

    const bad = path.join(dir, 'bad.jsonl');
    writeFileSync(bad, `${lines[0]}\n{"id": 3, "utterance": "x"}\n`);
    const failed = await cli('ser', '--dataset', 'sgd', '--dialogues', sgdFile, '--schema', sgdSchema, '--limit', '50', '--predictions', bad);
    expect(failed.code).toBe(2);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed.stderr).toContain(`${bad}: line 2: /id must be string`);
  });

  it('bad dialogues: one line naming file and dialogue/turn with exit 2; --skip-invalid lists them and goes on', async () => {
    const raw = JSON.parse(readFileSync(sgdFile, 'utf8')) as { dialogue_id: string; turns: { utterance?: string }[] }[];
    const slice = raw.slice(0, 3);
    delete slice[1].turns[3].utterance;
    const file = path.join(tmp(), 'dialogues_001.json');
    writeFileSync(file, JSON.stringify(slice));
    const where = `${slice[1].dialogue_id}/3`;
    const failed = await cli('ser', '--dataset', 'sgd', '--dialogues', file, '--schema', sgdSchema);
    expect(failed.code).toBe(2);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed.stderr).toContain(`${file}: ${where}: `);
    const skipped = await cli('ser', '--dataset', 'sgd', '--dialogues', file, '--schema', sgdSchema, '--skip-invalid');
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toContain(`skipped invalid input: ${file}: ${where}: `);
    expect(skipped.stdout).toMatch(/^SER 0\.00%/);
  });
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json') || !hasData('gcdf1', 'resources'))(
  'robust SER on real MultiWOZ turns with the GCDF1 canonical map',
  () => {
    let data!: ReturnType<typeof loadDataset>;
    let raw!: ReturnType<typeof loadSchemaFile>;
    let map!: ReturnType<typeof loadCanonicalMap>;
    beforeAll(() => {
      data = loadDataset({ dataset: 'multiwoz', dataDir: DATA_DIR, limit: 300, skipInvalid: true });
      raw = loadSchemaFile(path.join(DATA_DIR, 'multiwoz', 'schema.json'));
      map = loadCanonicalMap(path.join(DATA_DIR, 'gcdf1', 'resources', 'multiwoz21_canonical_map.json'));
    });
    const isCategorical = (s: string, sl: string) => raw.slot(s, sl)?.isCategorical;

    it('a value rewritten as one of its map paraphrases is an error for strict SER only', () => {
      const predictions = new Map<string, string>();
      const rewritten = new Set<string>();
      for (const t of data.turns) {
        let u = t.utterance;
        for (const a of t.actions) {
          if (isCategorical(a.service, a.slot) !== false || a.values.length !== 1) continue;
          const mapSlot = canonicalMapSlot(map, a.service, a.slot);
          if (!mapSlot) continue;
          const v = a.values[0];
          // A longer paraphrase that does not contain the value, e.g. "the cow pizza kitchen and bar" for "cow pizza kitchen and bar" does; skip those.
          const alt = map.equivalents(mapSlot, v, a.service).find((p) => !p.includes(v.toLowerCase()) && p.length > 3 && /^[a-z]/.test(p));
          if (!alt || !u.toLowerCase().includes(v.toLowerCase())) continue;
          u = u.replace(new RegExp(v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), alt);
          // The paraphrase may itself contain the value of another action: count only clean rewrites.
          if (!u.toLowerCase().includes(v.toLowerCase())) rewritten.add(t.id);
          break;
        }
        predictions.set(t.id, u);
      }
      expect(rewritten.size).toBeGreaterThan(5);
      const r = computeSer(data.turns, { isCategorical, predictions, robust: true, canonicalMap: map });
      const strictIds = new Set(r.erroneous.map((e) => e.id));
      for (const id of rewritten) expect(strictIds.has(id)).toBe(true);
      expect(r.robust!.errors).toBeLessThan(r.errors);
      // Robust never flags what strict accepts.
      for (const e of r.robust!.erroneous) expect(strictIds.has(e.id)).toBe(true);
      const gold = computeSer(data.turns, { isCategorical, robust: true, canonicalMap: map });
      expect(gold.errors).toBe(0);
    });
  },
);
