import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { conversation, system, user } from './gcdf1-conversations.js';
import { HAS_BUILT_CLI, runBuiltCli } from './helpers/cli.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { makeSignature, normalizeSignature, signatureDigest, SIGNATURE_KEYS, type Signature } from '../src/util/signature.js';
import { referencesSignature } from '../src/metrics/sgsacc/signature.js';
import { rerankSignature } from '../src/rerank/signature.js';
import { resolveRerankConfig } from '../src/rerank/config.js';
import { RecordStore } from '../src/metrics/sgsacc/store.js';
import { loadRun, loadTurns } from '../src/report/html/runs.js';
import { tempDir } from './helpers/temp.js';

const MINI = path.join(REPO_ROOT, 'examples', 'sgd-mini');
const tmp = tempDir('sigkeys');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The keys of the one table of signature keys in docs/cli-conventions.md. */
function documentedKeys(): Set<string> {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'cli-conventions.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Signatures'));
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  return new Set(rows.flatMap((row) => [...row.split('|')[1].matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1])));
}

const DOCUMENTED = documentedKeys();
const MODEL = { modelId: 'local:fake', revision: 'r1', dtype: 'fp32' as const };

function undocumented(sig: Record<string, unknown>): string[] {
  return Object.keys(sig).filter((k) => !DOCUMENTED.has(k));
}

describe('one signature vocabulary (docs/cli-conventions.md)', () => {
  it('the documented table is exactly the vocabulary makeSignature accepts', () => {
    expect([...DOCUMENTED].sort()).toEqual([...SIGNATURE_KEYS].sort());
  });

  it('makeSignature refuses a key outside the vocabulary, also through a spread', () => {
    const spread = { ...makeSignature({ metric: 'x' }), sgsacc_model: 'm' } as unknown as Parameters<typeof makeSignature>[0];
    expect(() => makeSignature(spread)).toThrow(/sgsacc_model/);
  });

  it('score, rerank and serve sign with documented keys only, every option set', () => {
    const refs = referencesSignature({ model: MODEL, rulesHash: 'abc', dataset: 'sgd', source: 'sgd:test', validation: true, context: true, referenceSelection: 'paper' });
    expect(refs).toMatchObject({ data: 'sgd:test', dataset: 'sgd', rules: 'abc', model: 'local:fake' });
    const rerank = rerankSignature(resolveRerankConfig({ context: true, systemOrder: ['a', 'b'], hallucination: true, rankBy: 'omission-hallucination' }), { model: MODEL, rulesHash: 'abc', dataset: 'sgd' });
    for (const sig of [refs, rerank]) expect(undocumented(sig)).toEqual([]);
  });

  it.skipIf(!HAS_BUILT_CLI)('refs and ser emit documented keys only; same things under the same keys', async () => {
    const out = path.join(tmp, 'refs.jsonl');
    const schema = path.join(MINI, 'schema.json');
    const dialogues = path.join(MINI, 'dialogues.json');
    expect((await runBuiltCli(['refs', '--dialogues', dialogues, '--schema', schema, '-o', out])).code).toBe(0);
    const refs = JSON.parse(readFileSync(`${out}.signature.json`, 'utf8')) as Signature;
    const ser = await runBuiltCli(['ser', '--dialogues', dialogues, '--schema', schema, '-i', path.join(MINI, 'predictions.jsonl'), '--robust', '--json']);
    expect(ser.code).toBe(0);
    const serSig = (JSON.parse(ser.stdout) as { signature: Signature }).signature;
    for (const sig of [refs, serSig]) expect(undocumented(sig)).toEqual([]);
    // The dataset format and the dialogues' source under one key each, in both commands.
    expect(serSig.dataset).toBe('sgd');
    expect(refs.dataset).toBe('sgd');
    expect(serSig.data).toBe(refs.data);
    expect(serSig.canonicalMap).toBe('none');
  });

  it.skipIf(!HAS_BUILT_CLI)('gcdf1 emits documented keys only', async () => {
    const one = conversation({ hotel: { info: { area: 'north' }, reqt: { phone: '?' } } }, [
      user([['Hotel-Inform', 'area', 'north'], ['Hotel-Request', 'phone']]),
      system([['Hotel-Inform', 'phone', '01223']]),
    ]);
    const folder = mkdtempSync(path.join(tmp, 'conv-'));
    writeFileSync(path.join(folder, 'dialogues_001.json'), JSON.stringify([one]));
    const r = await runBuiltCli(['gcdf1', '--dialogues', folder, '--no-canonical-map', '--json']);
    expect(r.code).toBe(0);
    const sig = (JSON.parse(r.stdout) as { metadata: { signature: Signature } }).metadata.signature;
    expect(undocumented(sig)).toEqual([]);
    expect(sig).toMatchObject({ metric: 'gcdf1', canonicalMap: 'none', configFile: 'published-defaults' });
  });

  it.skipIf(!HAS_BUILT_CLI || !hasData('multiwoz', 'predictions', 'augpt.json'))('evaluate emits documented keys only', async () => {
    const r = await runBuiltCli(['evaluate', '-i', path.join(DATA_DIR, 'multiwoz', 'predictions', 'augpt.json'), '--limit', '2', '--bleu', '--chrf', '--ter', '--json', '--data-dir', DATA_DIR]);
    expect(r.code).toBe(0);
    const sig = (JSON.parse(r.stdout) as { signature: Signature }).signature;
    expect(undocumented(sig)).toEqual([]);
    expect(typeof sig.data).toBe('string');
  });
});

describe('old key spellings still load', () => {
  const wanted = referencesSignature({ model: MODEL, rulesHash: 'abc', dataset: 'sgd', source: 'sgd:test', validation: true, context: true, referenceSelection: 'entailed' });
  // What score wrote before the keys were unified: the dialogues' source under `source`.
  const { data, ...rest } = wanted;
  const old = { ...rest, source: data } as Signature;

  it('normalizeSignature renames every old spelling to today’s key', () => {
    expect(normalizeSignature(old)).toEqual(wanted);
    expect(normalizeSignature({ tool: 'todeval', version: '0.1.0', metric: 'ser', dataset: 'sgd:test', invalidSkipped: 0 })).toEqual({
      tool: 'todeval', version: '0.1.0', metric: 'ser', dataset: 'sgd', data: 'sgd:test', skipped: 0,
    });
    expect(normalizeSignature({ tool: 'todeval', version: '0.1.0', metric: 'mwz-evaluate', ground_truth: 'multiwoz22', sgsacc_model: 'm', sgsacc_dtype: 'fp16', data_source: 'flag' })).toEqual({
      tool: 'todeval', version: '0.1.0', metric: 'mwz-evaluate', data: 'multiwoz22', model: 'm', dtype: 'fp16', dataDir: 'flag',
    });
  });

  it('a references file written under the old spellings is reused; another configuration is still refused', () => {
    const file = path.join(tmp, 'old-refs.jsonl');
    const header = { kind: 'todeval-sgsacc-references', digest: signatureDigest(old), signature: old };
    writeFileSync(file, JSON.stringify(header) + '\n' + JSON.stringify({ id: 'd/1', actions: [] }) + '\n');
    expect(RecordStore.open(file, 'todeval-sgsacc-references', wanted).done.has('d/1')).toBe(true);
    const other = makeSignature({ ...wanted, rules: 'def' });
    expect(() => RecordStore.open(file, 'todeval-sgsacc-references', other)).toThrow(/rules: abc vs def/);
  });

  it('the report reads an old evaluate report and an old per-turn file in today’s keys', () => {
    const report = path.join(tmp, 'old-eval.json');
    writeFileSync(report, JSON.stringify({ signature: { tool: 'todeval', version: '0.1.0', metric: 'mwz-evaluate', sgsacc_model: 'local:x', ground_truth: 'multiwoz22' }, bleu: { score: 10 } }));
    const run = loadRun(report);
    expect(run.signature).toMatchObject({ model: 'local:x', data: 'multiwoz22' });
    const turns = path.join(tmp, 'old-turns.jsonl');
    writeFileSync(turns, JSON.stringify({ kind: 'todeval-sgsacc-turns', digest: 'x', signature: { ...old, metric: 'sgsacc-turns' } }) + '\n');
    expect(loadTurns(turns).signature.data).toBe('sgd:test');
  });
});

describe('inputs are named by content and a relative path, never an absolute one (issue 21)', () => {
  /** What the docs say a signature names a file by: its path from the working directory (here the repo root) and 12 hex of its sha256. */
  const inputLabel = (file: string) => `${path.relative(process.cwd(), file)}@${createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 12)}`;
  /** `todeval ARGS` run from `cwd`; its signature line. */
  const signatureFrom = async (cwd: string, args: string[]): Promise<string> => {
    const r = await runBuiltCli(args, cwd);
    expect(r.stderr).toBe('');
    const line = r.stdout.split('\n').find((l) => l.startsWith('signature: '));
    expect(line, r.stdout).toBeDefined();
    return line!;
  };
  const rel = (f: string) => path.relative(REPO_ROOT, f);

  it('the same files named by an absolute and a relative path give one signature (was: two, each with the path as typed)', async () => {
    const abs = ['--dialogues', path.join(MINI, 'dialogues.json'), '--schema', path.join(MINI, 'schema.json'), '-i', path.join(MINI, 'predictions.jsonl')];
    const relative = ['--dialogues', rel(path.join(MINI, 'dialogues.json')), '--schema', rel(path.join(MINI, 'schema.json')), '-i', rel(path.join(MINI, 'predictions.jsonl'))];
    const a = await signatureFrom(REPO_ROOT, ['ser', ...abs]);
    expect(await signatureFrom(REPO_ROOT, ['ser', ...relative])).toBe(a);
    expect(a).not.toContain(REPO_ROOT);
    expect(a).toMatch(/\|data:sgd:examples\/sgd-mini\/dialogues\.json@[0-9a-f]{12}\|/);
    expect(a).toMatch(/\|predictions:examples\/sgd-mini\/predictions\.jsonl@[0-9a-f]{12}\|/);
    expect(a).toMatch(/\|schema:examples\/sgd-mini\/schema\.json@[0-9a-f]{12}\|/);
  }, 60_000);

  it.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))('files in the data dir are named relative to it: the same signature from any working directory', async () => {
    const file = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
    const args = ['refs', '--data-dir', DATA_DIR, '--dialogues', file, '--limit', '3', '--summary'];
    const here = await signatureFrom(REPO_ROOT, args);
    expect(await signatureFrom(tmp, args)).toBe(here);
    expect(here).toMatch(/\|data:sgd:sgd\/test\/dialogues_017\.json@[0-9a-f]{12}\|/);
  }, 60_000);

  it('a stored file is reused from another working directory (same content), and one of other content is refused', () => {
    const wanted = referencesSignature({ model: MODEL, rulesHash: 'abc', dataset: 'sgd', source: `sgd:${inputLabel(path.join(MINI, 'dialogues.json'))}`, validation: true, context: true, referenceSelection: 'entailed' });
    const digest = String(wanted.data).split('@')[1];
    const file = path.join(tmp, 'moved-refs.jsonl');
    // Written by a run whose working directory reached the same file as ../../examples/...
    const there = makeSignature({ ...wanted, data: `sgd:../../examples/sgd-mini/dialogues.json@${digest}` });
    writeFileSync(file, JSON.stringify({ kind: 'todeval-sgsacc-references', digest: signatureDigest(there), signature: there }) + '\n' + JSON.stringify({ id: 'd/1', actions: [] }) + '\n');
    expect(RecordStore.open(file, 'todeval-sgsacc-references', wanted).done.has('d/1')).toBe(true);
    const changed = makeSignature({ ...wanted, data: `sgd:examples/sgd-mini/dialogues.json@${'0'.repeat(12)}` });
    expect(() => RecordStore.open(file, 'todeval-sgsacc-references', changed)).toThrow(/written under a different configuration \(data: sgd:\.\.\/\.\.\/examples\/sgd-mini\/dialogues\.json@[0-9a-f]{12} vs sgd:examples/);
  });

  it('a file written when signatures held the path as typed still loads while that file is there with this content', () => {
    const wanted = referencesSignature({ model: MODEL, rulesHash: 'abc', dataset: 'sgd', source: `sgd:${inputLabel(path.join(MINI, 'dialogues.json'))}`, validation: true, context: true, referenceSelection: 'entailed' });
    const old = makeSignature({ ...wanted, data: `sgd:${path.join(MINI, 'dialogues.json')}` });
    const file = path.join(tmp, 'old-path-refs.jsonl');
    writeFileSync(file, JSON.stringify({ kind: 'todeval-sgsacc-references', digest: signatureDigest(old), signature: old }) + '\n' + JSON.stringify({ id: 'd/1', actions: [] }) + '\n');
    expect(RecordStore.open(file, 'todeval-sgsacc-references', wanted).done.has('d/1')).toBe(true);
  });
});
