// Numbers that travel (issue 31): the same bytes give the same comparable signature from any
// folder, any working directory, through $TODEVAL_DATA or --data-dir, with the model in a folder of
// any name; compare and report accept such runs, and one changed byte of an input, the model or
// the rules is refused, naming the field. Runs the built CLI (bin/todeval.js over dist/, built by
// `npm test`) from working directories outside the repository.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { comparableSignature, formatSignature, sameConfiguration, signatureDifferences, signatureDigest, type Signature } from '../src/util/signature.js';
import { BUILT_CLI, HAS_BUILT_CLI, type CliResult } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';

function todeval(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  // Neither a data directory nor a model from the environment unless the test gives one.
  const base = { ...process.env, TODEVAL_DATA: '', TODEVAL_MODEL: '', TODEVAL_RULES_DIR: '' };
  return promisify(execFile)(process.execPath, [BUILT_CLI, ...args], { cwd, env: { ...base, ...env }, maxBuffer: 1 << 26 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: CliResult) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

const ok = (r: CliResult, what: string) => expect(r.code, `${what}: ${r.stderr}`).toBe(0);
const signatureOf = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { signature: Signature }).signature;
const compared = (s: Signature) => formatSignature(comparableSignature(s));

describe.skipIf(!HAS_BUILT_CLI)('the same bytes from two folders: one signature (score on the example)', () => {
  const root = suiteTempDir('travel');
  const side = (s: 'a' | 'b' | 'c') => path.join(root, s);
  /** score of the example from `<side>/work`, the example and the model beside it, by relative paths. */
  const score = (s: 'a' | 'b' | 'c', model: string, out: string, how: 'env' | 'flag', env: NodeJS.ProcessEnv = {}, ex = 'ex') =>
    todeval(
      ['score', '--dataset', 'sgd', '--dialogues', `../${ex}/dialogues.json`, '--schema', `../${ex}/schema.json`, '-i', `../${ex}/predictions.jsonl`,
        '--model', `../models/${model}`, '-o', `${out}.json`, '--turns', `${out}.turns.jsonl`, ...(how === 'flag' ? ['--data-dir', '../data'] : [])],
      path.join(side(s), 'work'),
      { ...(how === 'env' ? { TODEVAL_DATA: path.join(side(s), 'data') } : {}), ...env },
    );
  let a: CliResult;
  let b: CliResult;

  beforeAll(async () => {
    const model = getLexicalStandinDir();
    for (const [s, name] of [['a', 'standin-one'], ['b', 'standin-two']] as const) {
      mkdirSync(path.join(side(s), 'work'), { recursive: true });
      mkdirSync(path.join(side(s), 'data'), { recursive: true });
      cpSync(path.join(REPO_ROOT, 'examples', 'sgd-mini'), path.join(side(s), 'ex'), { recursive: true });
      cpSync(model, path.join(side(s), 'models', name), { recursive: true });
    }
    // b's second folder holds each one-byte change: the dialogues, the model, the rules.
    cpSync(path.join(side('b'), 'ex'), path.join(side('b'), 'ex-changed'), { recursive: true });
    const dialogues = path.join(side('b'), 'ex-changed', 'dialogues.json');
    const text = readFileSync(dialogues, 'utf8');
    const at = text.indexOf('Saturday');
    expect(at).toBeGreaterThan(0);
    writeFileSync(dialogues, text.slice(0, at) + 'S' + text.slice(at + 1).replace(/^a/, 'A'));
    cpSync(model, path.join(side('b'), 'models', 'standin-changed'), { recursive: true });
    const onnx = path.join(side('b'), 'models', 'standin-changed', 'onnx', 'model.onnx');
    const bytes = readFileSync(onnx);
    const doc = bytes.indexOf('NOT a language model');
    expect(doc).toBeGreaterThan(0);
    bytes[doc + 'NOT a language mode'.length] = 'L'.charCodeAt(0); // its description, not its weights
    writeFileSync(onnx, bytes);
    cpSync(path.join(REPO_ROOT, 'rules'), path.join(side('b'), 'rules'), { recursive: true });
    const general = path.join(side('b'), 'rules', 'general.json');
    writeFileSync(general, readFileSync(general, 'utf8') + '\n');
    [a, b] = await Promise.all([score('a', 'standin-one', 'run', 'env'), score('b', 'standin-two', 'run', 'flag')]);
  }, 300_000);

  it('equal comparable signatures and digests; the provenance (model folder) differs, and is not compared', () => {
    ok(a, 'a');
    ok(b, 'b');
    const sa = signatureOf(path.join(side('a'), 'work', 'run.json'));
    const sb = signatureOf(path.join(side('b'), 'work', 'run.json'));
    expect(sa.model).not.toBe(sb.model);
    expect(compared(sa)).toBe(compared(sb));
    expect(signatureDigest(sa)).toBe(signatureDigest(sb));
  });

  it('compare and report accept them', async () => {
    const turns = ['a', 'b'].map((s) => path.join(side(s as 'a'), 'work', 'run.turns.jsonl'));
    const c = await todeval(['compare', ...turns, '--json'], root);
    ok(c, 'compare');
    const j = JSON.parse(c.stdout) as { comparisons: { systems: { pValue: number | null }[] }[]; provenance: Record<string, string> };
    expect(j.comparisons.length).toBeGreaterThan(0);
    for (const x of j.comparisons) expect(x.systems[1].pValue).toBe(1);
    expect(Object.values(j.provenance).join(' ')).toMatch(/standin-one.*standin-two/);
    const reports = ['a', 'b'].map((s) => path.join(side(s as 'a'), 'work', 'run.json'));
    const r = await todeval(['report', ...reports, '--turns', ...turns, '-o', path.join(root, 'report.html')], root);
    ok(r, 'report');
    expect(r.stdout).toMatch(/p-values of 1 of 1 against the first/);
    expect(r.stdout).not.toMatch(/no p-value/);
    // The report decides as compare does: no "not comparable" beside the p-values it computed.
    expect(r.stdout + r.stderr).not.toMatch(/not comparable|differ in signature/);
    expect(readFileSync(path.join(root, 'report.html'), 'utf8')).not.toMatch(/not comparable with each other|differ in signature/);
  });

  it('one changed byte of an input, the model or the rules is refused, naming the field', async () => {
    const runs = await Promise.all([
      score('b', 'standin-two', 'input', 'flag', {}, 'ex-changed'),
      score('b', 'standin-changed', 'model', 'flag'),
      score('b', 'standin-two', 'rules', 'flag', { TODEVAL_RULES_DIR: path.join(side('b'), 'rules') }),
    ]);
    const base = path.join(side('a'), 'work', 'run.turns.jsonl');
    for (const [r, name, field] of [[runs[0], 'input', 'data'], [runs[1], 'model', 'revision'], [runs[2], 'rules', 'rules']] as const) {
      ok(r, name);
      const c = await todeval(['compare', base, path.join(side('b'), 'work', `${name}.turns.jsonl`)], root);
      expect(c.code, name).toBe(2);
      expect(c.stderr.trim().split('\n'), name).toEqual([expect.stringMatching(new RegExp(`signature differs from the baseline's .* apart from the system: ${field}: \\S+ vs \\S+$`))]);
    }
  }, 300_000);
});

describe.skipIf(!HAS_BUILT_CLI || !hasData('multiwoz', 'predictions', 'augpt.json'))('the same MultiWOZ data through $TODEVAL_DATA and --data-dir (evaluate)', () => {
  const root = suiteTempDir('travel-mwz');
  let a: CliResult;
  let b: CliResult;

  beforeAll(async () => {
    for (const s of ['a', 'b']) {
      mkdirSync(path.join(root, s, 'work'), { recursive: true });
      cpSync(path.join(DATA_DIR, 'multiwoz'), path.join(root, s, 'data', 'multiwoz'), { recursive: true });
    }
    const run = (s: string, how: 'env' | 'flag') =>
      todeval(['evaluate', '-i', '../data/multiwoz/predictions/augpt.json', '--bleu', '--items', 'augpt.items.json', '--json', ...(how === 'flag' ? ['--data-dir', '../data'] : [])],
        path.join(root, s, 'work'), how === 'env' ? { TODEVAL_DATA: path.join(root, s, 'data') } : {});
    [a, b] = await Promise.all([run('a', 'env'), run('b', 'flag')]);
  }, 600_000);

  it('dataDir env vs flag is provenance: the signatures compare equal, and compare accepts the runs', async () => {
    ok(a, 'a');
    ok(b, 'b');
    const sa = (JSON.parse(a.stdout) as { signature: Signature }).signature;
    const sb = (JSON.parse(b.stdout) as { signature: Signature }).signature;
    expect([sa.dataDir, sb.dataDir]).toEqual(['env', 'flag']);
    expect(compared(sa)).toBe(compared(sb));
    const c = await todeval(['compare', path.join(root, 'a', 'work', 'augpt.items.json'), path.join(root, 'b', 'work', 'augpt.items.json'), '--json'], root);
    ok(c, 'compare');
    const j = JSON.parse(c.stdout) as { comparisons: { id: string; systems: { pValue: number | null }[] }[]; provenance: Record<string, string> };
    expect(j.comparisons.find((x) => x.id === 'bleu')!.systems[1].pValue).toBe(1);
    expect(Object.values(j.provenance)).toEqual([expect.stringContaining('dataDir:env'), expect.stringContaining('dataDir:flag')]);
  });
});

describe.skipIf(!HAS_BUILT_CLI)('a data directory is named by content too (ser on a data dir made of the example)', () => {
  const root = suiteTempDir('travel-datadir');
  /** A data dir `<root>/<name>` whose sgd/test split is the example's dialogues and schema. */
  const dataDir = (name: string, change = false): string => {
    const split = path.join(root, name, 'sgd', 'test');
    mkdirSync(split, { recursive: true });
    cpSync(path.join(REPO_ROOT, 'examples', 'sgd-mini', 'schema.json'), path.join(split, 'schema.json'));
    const text = readFileSync(path.join(REPO_ROOT, 'examples', 'sgd-mini', 'dialogues.json'), 'utf8');
    // One byte of an utterance: the turns, and so SER's inputs, keep their shape.
    writeFileSync(path.join(split, 'dialogues_001.json'), change ? text.replace('Saturday', 'saturday') : text);
    return path.join(root, name);
  };
  const ser = (data: string, cwd: string, how: 'env' | 'flag', out: string) =>
    todeval(['ser', '--dataset', 'sgd', '-i', path.join(REPO_ROOT, 'examples', 'sgd-mini', 'predictions.jsonl'), '-o', out, ...(how === 'flag' ? ['--data-dir', data] : [])],
      cwd, how === 'env' ? { TODEVAL_DATA: data } : {});

  it('the same bytes in two folders (TODEVAL_DATA vs --data-dir) compare equal; one changed byte in the data dir is refused, naming data', async () => {
    const [one, two, changed] = [dataDir('one'), dataDir('two'), dataDir('changed', true)];
    mkdirSync(path.join(root, 'cwd'), { recursive: true });
    const outs = ['one.json', 'two.json', 'changed.json'].map((f) => path.join(root, f));
    const runs = await Promise.all([ser(one, root, 'env', outs[0]), ser(two, path.join(root, 'cwd'), 'flag', outs[1]), ser(changed, root, 'flag', outs[2])]);
    runs.forEach((r, i) => ok(r, outs[i]));
    const [s1, s2, s3] = outs.map(signatureOf);
    expect(s1.data).toMatch(/^sgd:test@[0-9a-f]{12}$/);
    expect(compared(s1)).toBe(compared(s2));
    expect(signatureDigest(s1)).toBe(signatureDigest(s2));
    // What compare, report, merge and resume decide by (SER's report has no per-item output to run
    // compare itself on).
    expect(sameConfiguration(s1, s2)).toBe(true);
    expect(sameConfiguration(s1, s3)).toBe(false);
    expect(signatureDifferences(s1, s3).join(' ')).toMatch(/^data: /);
  }, 120_000);
});

describe.skipIf(!HAS_BUILT_CLI || !hasData('multiwoz', 'convlab_mwz21_test.json'))('evaluate --sgsacc signs its rules and schema (issue 43)', () => {
  const root = suiteTempDir('travel-sgsacc');
  /** Two test dialogues with their gold texts as lexicalized utterances: SGSAcc scores them. */
  const input = path.join(root, 'preds.json');
  /** evaluate --sgsacc --bleu --items on `data` (a copy of the MultiWOZ folder), from `root`. */
  const evaluate = (data: string, items: string, env: NodeJS.ProcessEnv = {}) =>
    todeval(['evaluate', '-i', input, '--bleu', '--sgsacc', '--model', getLexicalStandinDir(), '--data-dir', data, '--items', items, '--json'], root, env);
  let runs: CliResult[] = [];

  beforeAll(async () => {
    const convlab = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'), 'utf8')) as Record<string, { log: { text: string }[] }>;
    const dialogue = (id: string) => convlab[id].log.filter((_, i) => i % 2 === 1).map((t) => ({ response: t.text, utterance: t.text }));
    writeFileSync(input, JSON.stringify({ sng0580: dialogue('SNG0580'), pmul4648: dialogue('PMUL4648') }));
    for (const s of ['same', 'schema']) cpSync(path.join(DATA_DIR, 'multiwoz'), path.join(root, s, 'multiwoz'), { recursive: true });
    // One byte more in the schema (a trailing newline: it still parses); one more in a rule file.
    const schema = path.join(root, 'schema', 'multiwoz', 'schema.json');
    writeFileSync(schema, readFileSync(schema, 'utf8') + '\n');
    cpSync(path.join(REPO_ROOT, 'rules'), path.join(root, 'rules'), { recursive: true });
    const general = path.join(root, 'rules', 'multiwoz', 'general.json');
    writeFileSync(general, readFileSync(general, 'utf8') + '\n');
    const data = (s: string) => path.join(root, s);
    runs = await Promise.all([
      evaluate(data('same'), 'base.items.json'),
      evaluate(data('schema'), 'schema.items.json'),
      evaluate(data('same'), 'rules.items.json', { TODEVAL_RULES_DIR: path.join(root, 'rules') }),
    ]);
  }, 600_000);

  it('the signature carries the rules hash and the schema by content, the items the predictions relative to the data directory', () => {
    runs.forEach((r, i) => ok(r, `run ${i}`));
    const sig = (JSON.parse(runs[0].stdout) as { signature: Signature }).signature;
    expect(sig.rules).toMatch(/^[0-9a-f]{16,}$/);
    expect(sig.schema).toMatch(/^multiwoz\/schema\.json@[0-9a-f]{12}$/);
    // The input lies outside the data directory: relative to the working directory (root).
    expect((JSON.parse(readFileSync(path.join(root, 'base.items.json'), 'utf8')) as { signature: Signature }).signature.predictions).toMatch(/^preds\.json@[0-9a-f]{12}$/);
  });

  it('one changed byte of the rules or the schema: compare refuses, naming the field', async () => {
    const base = path.join(root, 'base.items.json');
    for (const [name, field] of [['schema', 'schema'], ['rules', 'rules']] as const) {
      const c = await todeval(['compare', base, path.join(root, `${name}.items.json`)], root);
      expect(c.code, name).toBe(2);
      expect(c.stderr.trim().split('\n'), name).toEqual([expect.stringMatching(new RegExp(`signature differs from the baseline's .* apart from the system: ${field}: \\S+ vs \\S+$`))]);
    }
  }, 300_000);
});

describe.skipIf(!HAS_BUILT_CLI)('an SGD train schema that cannot be read is an error, never "every service seen" (issue 43)', () => {
  const root = suiteTempDir('travel-train-schema');

  it('score on a data-dir split: an unparsable or unreadable sgd/train/schema.json exits 2 naming it', async () => {
    const model = getLexicalStandinDir();
    for (const [name, bad] of [['garbled', 'file'], ['folder', 'dir']] as const) {
      const split = path.join(root, name, 'sgd', 'test');
      mkdirSync(split, { recursive: true });
      cpSync(path.join(REPO_ROOT, 'examples', 'sgd-mini', 'schema.json'), path.join(split, 'schema.json'));
      cpSync(path.join(REPO_ROOT, 'examples', 'sgd-mini', 'dialogues.json'), path.join(split, 'dialogues_001.json'));
      const train = path.join(root, name, 'sgd', 'train', 'schema.json');
      if (bad === 'file') {
        mkdirSync(path.dirname(train), { recursive: true });
        writeFileSync(train, '[{"service_name": ');
      } else mkdirSync(train, { recursive: true });
      const r = await todeval(['score', '--dataset', 'sgd', '--data-dir', path.join(root, name), '-i', path.join(REPO_ROOT, 'examples', 'sgd-mini', 'predictions.jsonl'), '--model', model, '--json'], root);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines, name).toEqual([expect.stringContaining(train)]);
    }
  }, 300_000);
});
