import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runRefsPipeline, runSerPipeline, runTextMetricsPipeline } from '../../src/index.js';
import { REPO_ROOT } from '../helpers/shared.js';
import { tempDir } from '../helpers/temp.js';

// A library pipeline never prints: what the CLI puts on stdout is its return value, and what it
// puts on stderr comes through hooks. Checked on the pipelines that need no model or shared data.
const MINI = path.join(REPO_ROOT, 'examples', 'sgd-mini');
const own = { dataset: 'sgd' as const, input: path.join(MINI, 'dialogues.json'), schemaFile: path.join(MINI, 'schema.json') };

function silence() {
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  return () => [...out.mock.calls, ...err.mock.calls].map((c) => String(c[0]));
}

describe('pipelines report through hooks, never on stdout or stderr', () => {
  afterEach(() => vi.restoreAllMocks());

  it('ser: a skipped prediction, ids that match no turn and missing turns reach the hooks', () => {
    const dir = tempDir('pipelines-quiet');
    const lines = readFileSync(path.join(MINI, 'predictions.jsonl'), 'utf8').trim().split('\n');
    const predictions = path.join(dir, 'part.jsonl');
    writeFileSync(predictions, [...lines.slice(0, 4), '{"id": 5}', '{"id": "zz/1", "utterance": "x"}'].join('\n') + '\n');
    const printed = silence();
    const skipped: string[] = [];
    const notices: string[] = [];
    const doc = runSerPipeline({ ...own, predictions, allowMissing: true, skipInvalid: true, hooks: { skipped: (kind, e) => skipped.push(...e.map((x) => `${kind}: ${x.oneLine()}`)), notice: (m) => notices.push(m) } });
    expect(printed()).toEqual([]);
    expect(skipped).toEqual([expect.stringMatching(/^prediction: .*part\.jsonl: line 5: /)]);
    expect(notices).toEqual([expect.stringMatching(/^1 prediction ids match no turn .*\(first: zz\/1\)$/), expect.stringMatching(/^5 turns have no prediction \(first: /)]);
    expect(doc.report.missingIds).toHaveLength(5);
  });

  it('refs: the JSONL given to `write` is the file `output` gets, and nothing is printed', async () => {
    const dir = tempDir('pipelines-quiet');
    const printed = silence();
    const pieces: string[] = [];
    const streamed = await runRefsPipeline({ ...own, write: (t) => void pieces.push(t) });
    const written = await runRefsPipeline({ ...own, output: path.join(dir, 'refs.jsonl') });
    expect(printed()).toEqual([]);
    expect(pieces.join('')).toBe(readFileSync(path.join(dir, 'refs.jsonl'), 'utf8'));
    expect(JSON.parse(readFileSync(path.join(dir, 'refs.jsonl.signature.json'), 'utf8'))).toEqual(written.signature);
    expect(streamed.coverage).toEqual(written.coverage);
  });

  it('text metrics: files in, comparisons out, nothing printed', async () => {
    const dir = tempDir('pipelines-quiet');
    writeFileSync(path.join(dir, 'ref.txt'), 'the cat sat on the mat .\nhello world\n');
    writeFileSync(path.join(dir, 'sys.txt'), 'the cat sat on a mat .\nhello world\n');
    const printed = silence();
    const [bleu] = await runTextMetricsPipeline({ references: [path.join(dir, 'ref.txt')], systems: [path.join(dir, 'sys.txt')] });
    expect(printed()).toEqual([]);
    expect(bleu.systems.map((s) => s.name)).toEqual([path.join(dir, 'sys.txt')]);
    await expect(runTextMetricsPipeline({ references: [path.join(dir, 'ref.txt')], systems: [path.join(dir, 'sys.txt'), path.join(dir, 'sys.txt')] })).rejects.toThrow('given twice');
  });
});
