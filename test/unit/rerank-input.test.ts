import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDataset } from '../../src/adapters/load.js';
import { invalidTurnReasons, readRerankInput, turnFromRawItem, type RerankResolver } from '../../src/rerank/input.js';
import { REPO_ROOT } from '../helpers/shared.js';
import { tempDir } from '../helpers/temp.js';

const item = (id: string) => JSON.stringify({ id, dataset_id: 'd/1', candidates: [{ system: 'a', text: 'x' }] });

describe('readRerankInput', () => {
  const dir = tempDir('rerank-input');
  const file = path.join(dir, 'items.jsonl');
  // line 1 good, 2 fails the schema, 3 is not JSON, 4 repeats an id, 6 good (5 blank)
  writeFileSync(file, [item('a'), JSON.stringify({ id: 'b' }), '{"id": "c", ', item('a'), '', item('d')].join('\n'));

  it('with skipInvalid lists every bad line in line order and keeps the good ones', () => {
    const { items, invalid } = readRerankInput(file, { skipInvalid: true });
    expect(items.map((i) => [i.line, i.item.id])).toEqual([[1, 'a'], [6, 'd']]);
    expect(invalid.map((e) => e.where)).toEqual(['line 2', 'line 3', 'line 4']);
    expect(invalid[1].message).toMatch(/^not valid JSON/);
    expect(invalid[2].message).toBe('duplicate item id "a"');
  });

  it('without skipInvalid throws the first bad line, even when a later line is not JSON', () => {
    expect(() => readRerankInput(file)).toThrow(expect.objectContaining({ where: 'line 2' }));
  });

  it('names the file when it cannot be read', () => {
    expect(() => readRerankInput(path.join(dir, 'absent.jsonl'))).toThrow(/cannot read file: no such file or directory/);
  });
});

describe('dataset_id naming a dataset turn skipped as invalid', () => {
  const MINI = path.join(REPO_ROOT, 'examples', 'sgd-mini');
  const dir = tempDir('rerank-invalid-turn');
  // The bundled example with one system turn broken and one dialogue whose turns are not a list,
  // loaded as rerank and serve load it (skipping invalid turns).
  const d = JSON.parse(readFileSync(path.join(MINI, 'dialogues.json'), 'utf8')) as { dialogue_id: string; turns: unknown }[];
  delete (d[0].turns as { utterance?: string }[])[1].utterance;
  d[1].turns = {};
  const dialogues = path.join(dir, 'dialogues.json');
  writeFileSync(dialogues, JSON.stringify(d));
  const ds = loadDataset({ dataset: 'sgd', input: dialogues, schemaFile: path.join(MINI, 'schema.json'), skipInvalid: true });
  const resolver: RerankResolver = {
    schema: ds.schema,
    dataset: 'sgd',
    expand: () => [],
    turnsById: new Map(ds.turns.map((t) => [t.id, t])),
    invalidTurns: invalidTurnReasons(ds.invalid),
  };
  const turnOf = (dataset_id: string) => () => turnFromRawItem({ id: 'a', dataset_id }, resolver, 'items.jsonl', 1);

  it('is refused for the reason the turn was skipped (was: "is not a system turn of the dataset")', () => {
    expect(d[0].dialogue_id).toBe('mini_001');
    expect(turnOf('mini_001/1')).toThrow('dataset_id "mini_001/1" names an invalid turn: system turn has no utterance');
  });

  it('a turn of a dialogue skipped whole gets the dialogue\'s reason', () => {
    expect(d[1].dialogue_id).toBe('mini_002');
    expect(turnOf('mini_002/1')).toThrow('dataset_id "mini_002/1" names an invalid turn: wrong dataset format: "turns" must be a list (not SGD format)');
  });

  it('an id that is in the dataset neither as a turn nor as an invalid one is still "not a system turn"', () => {
    expect(turnOf('mini_001/0')).toThrow('dataset_id "mini_001/0" is not a system turn of the dataset');
    expect(turnOf('mini_003/3')().id).toBe('mini_003/3');
  });
});
