import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadDialogues } from '../../src/metrics/gcdf1/evaluate.js';
import { checkRepeatedDialogues } from '../../src/metrics/mwz/input.js';
import { loadPredictions } from '../../src/metrics/predictions-file.js';
import { describeErrno, InputError } from '../../src/util/errors.js';
import { duplicateTopLevelKey, readTextFile } from '../../src/util/json-file.js';
import { readTextLines } from '../../src/util/text-lines.js';
import { conversation, system, user } from '../gcdf1-conversations.js';
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

const dir = tempDir('json-input');

describe('JSON and JSONL inputs are read as strict UTF-8', () => {
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

describe('duplicateTopLevelKey', () => {
  it('finds a key repeated at the top level, decoding escapes ("\\u0061" is "a")', () => {
    expect(duplicateTopLevelKey('{"a": 1, "b": 2, "a": 3}')).toBe('a');
    expect(duplicateTopLevelKey(String.raw`{"\u0061": 1, "a": 2}`)).toBe('a');
    expect(duplicateTopLevelKey(String.raw`{"a\"b": 1, "c": 2, "a\"b": 3}`)).toBe('a"b');
    expect(duplicateTopLevelKey('\n {\n  "x" : {"y": 1},\n  "x" : [2]\n}\n')).toBe('x');
  });

  it('counts neither keys of nested objects, nor string values, nor braces and quotes inside strings', () => {
    expect(duplicateTopLevelKey('{"a": {"b": 1, "b": 2}, "c": [{"a": 1}, {"a": 2}]}')).toBeUndefined();
    expect(duplicateTopLevelKey('{"k": "v", "v": "k"}')).toBeUndefined();
    expect(duplicateTopLevelKey(String.raw`{"a": "}, \"a\": {", "b": "\\", "c": "{\"b\": 1"}`)).toBeUndefined();
    expect(duplicateTopLevelKey(String.raw`{"a": "}, \"a\": {", "b": "\\", "a": 0}`)).toBe('a');
    expect(duplicateTopLevelKey('{"a": 1, "A": 2}')).toBeUndefined();
  });

  it('a top-level array or scalar has no keys', () => {
    expect(duplicateTopLevelKey('[{"a": 1}, {"a": 1}]')).toBeUndefined();
    expect(duplicateTopLevelKey('"a"')).toBeUndefined();
    expect(duplicateTopLevelKey('{}')).toBeUndefined();
  });
});

describe('an id written twice in an id-keyed JSON object is refused (was: JSON.parse kept the last, silently)', () => {
  it('predictions: as the JSONL and array layouts refuse it', () => {
    const file = path.join(dir, 'twice.json');
    writeFileSync(file, '{"mini_001/1":"first","mini_001/1":"second"}\n');
    const e = thrown(() => loadPredictions(file));
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).oneLine()).toBe(`${file}: id mini_001/1: duplicate prediction id "mini_001/1"`);
  });

  it('mwzeval predictions: as ids differing in case are refused', () => {
    const e = thrown(() => checkRepeatedDialogues('{"sng0073": [], "pmul0001": [], "sng0073": []}', 'preds.json'));
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).oneLine()).toBe('preds.json: sng0073: dialogue given twice (ids are case-insensitive)');
    expect(() => checkRepeatedDialogues('{"sng0073": [], "SNG0073": []}', 'preds.json')).not.toThrow();
  });

  it('gcdf1 dialogues keyed by id: as a dialogue repeated across files is refused', () => {
    const folder = path.join(dir, 'gcdf1');
    mkdirSync(folder);
    const goal = { hotel: { info: { area: 'north' }, reqt: { phone: '?' } } };
    const turns = [user([['Hotel-Inform', 'area', 'north'], ['Hotel-Request', 'phone']]), system([['Hotel-Inform', 'phone', '01223']])];
    const a = JSON.stringify(conversation(goal, turns, 'A.json'));
    const b = JSON.stringify(conversation(goal, turns, 'B.json'));
    const file = path.join(folder, 'dialogues_001.json');
    writeFileSync(file, `{"A.json": ${a}, "B.json": ${b}, "A.json": ${a}}`);
    for (const skipInvalid of [false, true]) {
      const e = thrown(() => loadDialogues(folder, skipInvalid));
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).oneLine()).toBe(`${file}: A.json: duplicate dialogue id (first in ${file})`);
    }
  });
});

describe('a pretty-printed predictions JSON with a slip', () => {
  it('gets JSON.parse error for the whole file (was: read as JSONL, "line 1: not valid JSON" for its lone "{")', () => {
    const file = path.join(dir, 'pretty.json');
    writeFileSync(file, '{\n "d/1": "a",\n}\n');
    // With skipInvalid it was worse: every line skipped, no prediction, no error.
    for (const skipInvalid of [false, true]) {
      const e = thrown(() => loadPredictions(file, { skipInvalid }));
      expect(e).toBeInstanceOf(InputError);
      const err = e as InputError;
      expect(err.file).toBe(file);
      expect(err.where).toBeUndefined();
      expect(err.message).toMatch(/^not valid JSON \(.*position/);
      expect(err.oneLine()).not.toMatch(/line 1\b/);
    }
  });

  it('JSONL with a broken first line still names that line, and --skip-invalid keeps the rest', () => {
    const file = path.join(dir, 'broken-first.jsonl');
    writeFileSync(file, '{"id": "d/1", "utter\n{"id": "d/3", "utterance": "b"}\n');
    const e = thrown(() => loadPredictions(file));
    expect((e as InputError).file).toBe(file);
    expect((e as InputError).where).toBe('line 1');
    expect((e as InputError).message).toMatch(/^not valid JSON/);
    const loaded = loadPredictions(file, { skipInvalid: true });
    expect([...loaded.byId]).toEqual([['d/3', 'b']]);
    expect(loaded.invalid.map((x) => x.where)).toEqual(['line 1']);
  });
});

describe('a file too large to read whole', () => {
  it('is said so in words, naming the file (was: the bare code ERR_STRING_TOO_LONG)', () => {
    // A fake read: making a string past V8's limit would take over 1 GB of memory.
    const tooLong = (): Buffer => {
      throw Object.assign(new RangeError('Cannot create a string longer than 0x1fffffe8 characters'), { code: 'ERR_STRING_TOO_LONG' });
    };
    const e = thrown(() => readTextFile('big.json', 'predictions', tooLong));
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).oneLine()).toBe('big.json: cannot read predictions: file too large to read whole');
    expect(describeErrno(Object.assign(new RangeError('File size (3000000000) is greater than 2 GiB'), { code: 'ERR_FS_FILE_TOO_LARGE' }))).toBe('file too large to read whole');
  });

  it('plain-text lines: bad bytes are still "not valid UTF-8"', () => {
    const file = path.join(dir, 'latin1.txt');
    writeFileSync(file, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const e = thrown(() => readTextLines(file, 'hypotheses'));
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).oneLine()).toBe(`${file}: hypotheses is not valid UTF-8`);
  });
});
