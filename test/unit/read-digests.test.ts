// A dataset folder is read once: its readers hash the bytes they parse (ReadDigests), where the
// signature used to read every file again (contentDigest). The digests must stay what contentDigest
// gives, or every stored signature, --turns file and references store stops matching; each is
// pinned here against contentDigest in a fresh module (empty memo), which reads the inputs itself.
import { cpSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadDataset } from '../../src/adapters/load.js';
import { MwzDatabase } from '../../src/metrics/mwz/database.js';
import { Evaluator } from '../../src/metrics/mwz/evaluator.js';
import { groundTruthLabel, groundTruthLabelInputs, loadBookedDomains, loadGroundTruth } from '../../src/metrics/mwz/ground-truth.js';
import { contentDigest, ReadDigests } from '../../src/util/input-label.js';
import { DATA_DIR, hasData, REPO_ROOT } from '../helpers/shared.js';
import { tempDir } from '../helpers/temp.js';

type LabelModule = typeof import('../../src/util/input-label.js');

/** input-label.ts loaded anew: its digest memo is empty, so contentDigest reads the files as it always did. */
async function oldWay(): Promise<LabelModule> {
  vi.resetModules();
  return import('../../src/util/input-label.js');
}

/** groundTruthLabel over a fresh input-label.ts (empty memo): every file read to sign it, as before. */
async function oldGroundTruthLabel(dataDir: string, source: 'multiwoz21-convlab' | 'multiwoz22'): Promise<string> {
  vi.resetModules();
  return (await import('../../src/metrics/mwz/ground-truth.js')).groundTruthLabel(dataDir, source);
}

const digestOf = (label: string) => /@([0-9a-f]{12})$/.exec(label)?.[1];

const MINI = path.join(REPO_ROOT, 'examples', 'sgd-mini');

/** A data dir's SGD split as `todeval data pull` lays it out: two dialogue files, the schema and a file no reader opens. */
function sgdDataDir(name: string): string {
  const dir = tempDir(name);
  const split = path.join(dir, 'sgd', 'test');
  mkdirSync(split, { recursive: true });
  const dialogues = JSON.parse(readFileSync(path.join(MINI, 'dialogues.json'), 'utf8')) as unknown[];
  writeFileSync(path.join(split, 'dialogues_001.json'), JSON.stringify(dialogues.slice(0, 1)));
  writeFileSync(path.join(split, 'dialogues_002.json'), JSON.stringify(dialogues.slice(1)));
  cpSync(path.join(MINI, 'schema.json'), path.join(split, 'schema.json'));
  writeFileSync(path.join(split, 'notes.txt'), 'not read by any reader, still part of the split\n');
  return dir;
}

describe('ReadDigests: a folder hashed from the bytes its reader read', () => {
  it('gives contentDigest to the byte, reads each file once, and hashes the files no reader asked for', async () => {
    const dir = tempDir('read-digests');
    const files: Record<string, string> = { 'a.json': '[1]', 'b.json': '[22]', 'notes.txt': 'x', 'schema.json': '{"s": 1}', 'sub/d.json': '{"d": 4}' };
    const when = new Date('2024-01-02T03:04:05Z');
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), text);
      utimesSync(path.join(dir, rel), when, when);
    }
    const expected = (await oldWay()).contentDigest(dir);

    const reads = new ReadDigests([dir]);
    // Out of name order (the schema first, as the loaders read it); b.json and notes.txt never.
    for (const rel of ['schema.json', 'sub/d.json', 'a.json']) expect(reads.read(path.join(dir, rel)).toString()).toBe(files[rel]);
    // The files read are changed in place (same size, same mtime: the same stamp): a second read
    // of them would hash the new bytes.
    for (const rel of ['schema.json', 'sub/d.json', 'a.json']) {
      writeFileSync(path.join(dir, rel), files[rel].replace(/\d/, '9'));
      utimesSync(path.join(dir, rel), when, when);
    }
    reads.finish();
    // Kept by the stamp taken before reading: contentDigest answers from what the readers read.
    expect(contentDigest(dir)).toBe(expected);
  });

  it('a single file input and a file inside a folder input are each hashed from one read', async () => {
    const dir = tempDir('read-digests-file');
    writeFileSync(path.join(dir, 'schema.json'), '[]');
    writeFileSync(path.join(dir, 'dialogues_001.json'), '[{"dialogue_id": "1"}]');
    const old = await oldWay();
    const wanted = { dir: old.contentDigest(dir), schema: old.contentDigest(path.join(dir, 'schema.json')) };
    const reads = new ReadDigests([dir, path.join(dir, 'schema.json'), undefined]);
    reads.read(path.join(dir, 'schema.json'));
    reads.finish();
    expect({ dir: contentDigest(dir), schema: contentDigest(path.join(dir, 'schema.json')) }).toEqual(wanted);
  });
});

describe('loadDataset signs what it read with the old digests', () => {
  it('an SGD data-dir split (dialogue files, schema, an unread file), whole and under --limit', async () => {
    const whole = sgdDataDir('sgd-split');
    const limited = sgdDataDir('sgd-split-limit');
    const old = await oldWay();
    const want = old.contentDigest(path.join(whole, 'sgd', 'test'));
    expect(old.contentDigest(path.join(limited, 'sgd', 'test'))).toBe(want);
    expect(loadDataset({ dataset: 'sgd', dataDir: whole, split: 'test' }).source).toBe(`sgd:test@${want}`);
    // Past the limit the second dialogue file is never parsed: it is read for the digest alone.
    expect(loadDataset({ dataset: 'sgd', dataDir: limited, split: 'test', limit: 1 }).source).toBe(`sgd:test@${want}`);
  });

  it('SGD --dialogues and --schema files', async () => {
    const old = await oldWay();
    const dialogues = path.join(MINI, 'dialogues.json');
    const schema = path.join(MINI, 'schema.json');
    const loaded = loadDataset({ dataset: 'sgd', input: dialogues, schemaFile: schema });
    expect(digestOf(loaded.source)).toBe(old.contentDigest(dialogues));
    expect(digestOf(loaded.schemaLabel ?? '')).toBe(old.contentDigest(schema));
  });

  it('a MultiWOZ ConvLab file with its schema', async () => {
    const dir = tempDir('mwz-convlab');
    const file = path.join(dir, 'dialogues.json');
    const log = [
      { text: 'i need a hotel', dialog_act: {} },
      { text: 'which area ?', dialog_act: {} },
    ];
    writeFileSync(file, JSON.stringify({ 'MUL0001.json': { goal: {}, log } }));
    const schema = path.join(MINI, 'schema.json');
    const old = await oldWay();
    const loaded = loadDataset({ dataset: 'multiwoz', input: file, schemaFile: schema });
    expect(loaded.turns).toHaveLength(1);
    expect(digestOf(loaded.source)).toBe(old.contentDigest(file));
  });
});

describe('the MultiWOZ evaluation data is signed with the old digests', () => {
  it('the ground truth, the venue database and the booked domains, hashed as their loaders read them', async () => {
    const dir = tempDir('mwz-eval-data');
    const mwz = path.join(dir, 'multiwoz');
    mkdirSync(path.join(mwz, 'db'), { recursive: true });
    const log = [
      { text: 'i need a hotel', metadata: {} },
      { text: 'the acorn is in the north', metadata: {}, span_info: [] },
    ];
    writeFileSync(path.join(mwz, 'convlab_mwz21_test.json'), JSON.stringify({ 'MUL0001.json': { goal: {}, log } }));
    writeFileSync(path.join(mwz, 'booked_domains.json'), '{"mul0001": [[]]}');
    for (const d of ['restaurant', 'hotel', 'attraction', 'train', 'taxi']) writeFileSync(path.join(mwz, 'db', `${d}_db.json`), `[{"name": "${d} one"}]`);
    const want = await oldGroundTruthLabel(dir, 'multiwoz21-convlab');

    const reads = new ReadDigests(groundTruthLabelInputs(dir, 'multiwoz21-convlab'));
    expect(Object.keys(loadGroundTruth(dir, { noCache: true, read: reads.read }).dialogues)).toEqual(['mul0001']);
    MwzDatabase.load(dir, reads.read);
    expect(loadBookedDomains(dir, reads.read)).toEqual({ mul0001: [[]] });
    reads.finish();
    expect(groundTruthLabel(dir, 'multiwoz21-convlab')).toBe(want);
  });
});

describe.skipIf(!hasData('multiwoz', 'predictions', 'damd.json'))('a real MultiWOZ evaluation (../shared/data)', () => {
  it('signs its data as groundTruthLabel reads it, with the ground truth built from the files (no cache)', async () => {
    const predictions = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'predictions', 'damd.json'), 'utf8')) as unknown;
    const source = hasData('multiwoz', 'mwz22', 'dialog_acts.json') ? 'multiwoz22' : 'multiwoz21-convlab';
    const want = await oldGroundTruthLabel(DATA_DIR, source);
    const result = new Evaluator({ dataDir: DATA_DIR, success: true, noCache: true }).evaluate(predictions);
    expect((result.signature as Record<string, unknown>).data).toBe(want);
  }, 120_000);
});

describe.skipIf(!hasData('sgd', 'test', 'schema.json'))('the real SGD test split (../shared/data)', () => {
  it('is signed as contentDigest reads it', async () => {
    const old = await oldWay();
    const want = old.contentDigest(path.join(DATA_DIR, 'sgd', 'test'));
    expect(loadDataset({ dataset: 'sgd', dataDir: DATA_DIR, split: 'test' }).source).toBe(`sgd:test@${want}`);
  }, 120_000);
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('the real MultiWOZ test file (../shared/data)', () => {
  it('is signed as inputsContentDigest reads it (the test file and the schema)', async () => {
    const old = await oldWay();
    const mwz = path.join(DATA_DIR, 'multiwoz');
    const want = old.inputsContentDigest([path.join(mwz, 'convlab_mwz21_test.json'), path.join(mwz, 'schema.json')]);
    expect(loadDataset({ dataset: 'multiwoz', dataDir: DATA_DIR }).source).toBe(`multiwoz:convlab_mwz21_test.json@${want}`);
  }, 120_000);
});
