import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPredictions } from '../../src/metrics/predictions-file.js';
import { InputError } from '../../src/util/errors.js';
import { tempDir } from '../helpers/temp.js';

/** What `fn` throws, failing the test when it returns instead. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('JSON and JSONL inputs are read as strict UTF-8', () => {
  const dir = tempDir('json-input');

  it('a Latin-1 byte is refused naming the file (was: decoded to U+FFFD and scored, exit 0)', () => {
    const file = path.join(dir, 'latin1.jsonl');
    // "café" saved as Latin-1: 0xE9 alone is not UTF-8.
    writeFileSync(file, Buffer.concat([Buffer.from('{"id":"d/1","utterance":"caf'), Buffer.from([0xe9]), Buffer.from('"}\n')]));
    const e = thrown(() => loadPredictions(file));
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).oneLine()).toBe(`${file}: predictions is not valid UTF-8`);
  });

  it('a file saved with a byte-order mark still loads, without the mark', () => {
    const file = path.join(dir, 'bom.jsonl');
    writeFileSync(file, Buffer.from('\ufeff{"id":"d/1","utterance":"café"}\n', 'utf8'));
    const loaded = loadPredictions(file);
    expect([...loaded.byId]).toEqual([['d/1', 'café']]);
  });
});
