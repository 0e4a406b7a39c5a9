import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRerankInput } from '../../src/rerank/input.js';
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
