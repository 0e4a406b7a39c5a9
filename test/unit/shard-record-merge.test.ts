import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPLETED_FIELDS, type StoreKind } from '../../src/metrics/sgsacc/store.js';
import { mergeRecordFiles, type LoadedShard } from '../../src/shard/merge.js';
import { readRecordLines } from '../../src/util/record-lines.js';
import { signatureDigest, type Signature } from '../../src/util/signature.js';
import { refusal } from '../helpers/refusal.js';
import { tempDir } from '../helpers/temp.js';

// todeval merge joined the shards' record files keeping the first record of each id: a shard whose
// record for an id differed from another shard's (or from the merged file's own) was dropped
// without a word, a references record that completed the merged file's (its ground truth) was lost,
// and a report naming another shard's file merged that shard's records twice and its own never.
// Handwritten files (no model): only the joining is under test.

const RUN: Signature = { tool: 'todeval', version: '0.0.0', metric: 'sgsacc-turns' };
type Rec = { id: string } & Record<string, unknown>;

/** A record file with its header: written by shard `shard` (its label in the header) or by no shard. */
function writeRecords(file: string, kind: StoreKind, records: Rec[], shard?: string): void {
  const signature: Signature = shard ? { ...RUN, shard } : RUN;
  const header = { kind, digest: signatureDigest(signature), signature };
  writeFileSync(file, [header, ...records].map((r) => JSON.stringify(r)).join('\n') + '\n');
}

/** Shard K/N's report as merge reads it, naming `file` (relative to `dir`) as its record file. */
function shard(dir: string, index: number, count: number, which: 'turns' | 'references', file: string): LoadedShard {
  return {
    file: path.join(dir, `s${index}.json`),
    report: {
      signature: { ...RUN, shard: `${index}/${count}` },
      shard: { index, count, by: 'dialogue', positions: [], files: which === 'turns' ? { turns: file } : { references: file } },
    },
  };
}

const recordsOf = (file: string, kind: StoreKind) =>
  readRecordLines<Rec>(readFileSync(file, 'utf8').split('\n').slice(1), file, { firstLine: 2, completedFields: COMPLETED_FIELDS[kind] });

describe('mergeRecordFiles: a record is never dropped or silently picked', () => {
  const TURNS: StoreKind = 'todeval-sgsacc-turns';
  const REFS: StoreKind = 'todeval-sgsacc-references';

  it('two shards with different records for one id are refused, naming the id and both files; nothing is appended', () => {
    const dir = tempDir('record-merge');
    writeRecords(path.join(dir, 's1.turns.jsonl'), TURNS, [{ id: 'd1/0', sgsacc: 1 }, { id: 'd1/1', sgsacc: 0 }], '1/2');
    writeRecords(path.join(dir, 's2.turns.jsonl'), TURNS, [{ id: 'd2/0', sgsacc: 1 }, { id: 'd1/1', sgsacc: 1 }], '2/2');
    const out = path.join(dir, 'all.turns.jsonl');
    const shards = [shard(dir, 1, 2, 'turns', 's1.turns.jsonl'), shard(dir, 2, 2, 'turns', 's2.turns.jsonl')];
    expect(refusal(() => mergeRecordFiles(shards, 'turns', TURNS, out))).toBe(
      `${path.join(dir, 's2.turns.jsonl')}: id "d1/1" has a different record in ${path.join(dir, 's1.turns.jsonl')}; ` +
        'the files are of other runs or were edited: rerun the shard, or remove one of the two records',
    );
    expect(recordsOf(out, TURNS).size).toBe(0);
  });

  it("a report naming another shard's file is refused (was: that shard's turns merged twice, this shard's never)", () => {
    const dir = tempDir('record-merge');
    writeRecords(path.join(dir, 's1.turns.jsonl'), TURNS, [{ id: 'd1/0', sgsacc: 1 }], '1/2');
    const shards = [shard(dir, 1, 2, 'turns', 's1.turns.jsonl'), shard(dir, 2, 2, 'turns', 's1.turns.jsonl')];
    expect(refusal(() => mergeRecordFiles(shards, 'turns', TURNS, path.join(dir, 'all.turns.jsonl')))).toBe(
      `${path.join(dir, 's1.turns.jsonl')}: this turns file was written by shard 1/2, but the report ${path.join(dir, 's2.json')} is shard 2/2's; give each shard its own file`,
    );
  });

  it("a shard's references record that completes the merged file's (its ground truth) is kept", () => {
    const dir = tempDir('record-merge');
    const early = { id: 'd1/0', actions: [{ act: 'INFORM' }] };
    const completed = { ...early, groundTruth: { sgsacc: 1 } };
    const out = path.join(dir, 'refs.jsonl');
    writeRecords(out, REFS, [early]);
    writeRecords(path.join(dir, 's1.refs.jsonl'), REFS, [completed]);
    writeRecords(path.join(dir, 's2.refs.jsonl'), REFS, [{ id: 'd2/0', actions: [] }]);
    const shards = [shard(dir, 1, 2, 'references', 's1.refs.jsonl'), shard(dir, 2, 2, 'references', 's2.refs.jsonl')];
    expect(mergeRecordFiles(shards, 'references', REFS, out)).toBe(2);
    expect(recordsOf(out, REFS).get('d1/0')).toEqual(completed);
  });

  it("a shard's older references record (without the merged file's ground truth) takes nothing away", () => {
    const dir = tempDir('record-merge');
    const early = { id: 'd1/0', actions: [{ act: 'INFORM' }] };
    const completed = { ...early, groundTruth: { sgsacc: 1 } };
    const out = path.join(dir, 'refs.jsonl');
    writeRecords(out, REFS, [completed]);
    writeRecords(path.join(dir, 's1.refs.jsonl'), REFS, [early]);
    writeRecords(path.join(dir, 's2.refs.jsonl'), REFS, []);
    const shards = [shard(dir, 1, 2, 'references', 's1.refs.jsonl'), shard(dir, 2, 2, 'references', 's2.refs.jsonl')];
    expect(mergeRecordFiles(shards, 'references', REFS, out)).toBe(1);
    expect(recordsOf(out, REFS).get('d1/0')).toEqual(completed);
  });

  it("a shard's references record that contradicts the merged file's is refused, naming the merged file", () => {
    const dir = tempDir('record-merge');
    const out = path.join(dir, 'refs.jsonl');
    writeRecords(out, REFS, [{ id: 'd1/0', actions: [{ act: 'INFORM' }] }]);
    writeRecords(path.join(dir, 's1.refs.jsonl'), REFS, [{ id: 'd1/0', actions: [{ act: 'REQUEST' }] }]);
    writeRecords(path.join(dir, 's2.refs.jsonl'), REFS, []);
    const shards = [shard(dir, 1, 2, 'references', 's1.refs.jsonl'), shard(dir, 2, 2, 'references', 's2.refs.jsonl')];
    expect(refusal(() => mergeRecordFiles(shards, 'references', REFS, out))).toBe(
      `${path.join(dir, 's1.refs.jsonl')}: id "d1/0" has a different record in ${out}; the files are of other runs or were edited: rerun the shard, or remove one of the two records`,
    );
    expect(recordsOf(out, REFS).get('d1/0')).toEqual({ id: 'd1/0', actions: [{ act: 'INFORM' }] });
  });
});
