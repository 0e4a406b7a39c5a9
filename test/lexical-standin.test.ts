import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextPremise } from '../src/metrics/sgsacc/premise.js';
import { canonicalWord, isStandinModelId, lexicalTables } from '../src/nli/onnx-builder/index.js';
import { isTableLookupStandin } from '../src/nli/onnx-builder/standins.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { CPU_LIMITS, CPU_STANDIN_LIMITS, createNliRunner, type NliRunner } from '../src/nli/runner.js';
import { getTinyModelDir } from './helpers/tiny-model.js';
import { argmaxLabel, type NliPair } from '../src/nli/types.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { REPO_ROOT, TOKENIZER_DIR } from './helpers/shared.js';

const quiet = () => {};

// The paper's Figure 1: the utterance alone does not entail the reference; with the previous user
// turn and the slot description in front of it, it does.
const QUEENS_REFERENCE = 'The name of the hair stylist is Queens.';
const QUEENS_UTTERANCE = 'What about Queens?';
const QUEENS_CONTEXT = contextPremise('I want to book a hair cut.', 'the name of the hair stylist', QUEENS_UTTERANCE);

const PAIRS: NliPair[] = [
  { premise: QUEENS_UTTERANCE, hypothesis: QUEENS_REFERENCE },
  { premise: QUEENS_CONTEXT, hypothesis: QUEENS_REFERENCE },
  { premise: 'Your table at Tanpopo is booked for 7 pm.', hypothesis: 'The restaurant is Tanpopo.' },
  { premise: 'Your table at Tanpopo is booked for 7 pm.', hypothesis: 'The time of the reservation is 8 pm.' },
  { premise: 'The cake is not gluten free, sorry.', hypothesis: 'The cake is gluten free.' },
  { premise: 'The cake is gluten free.', hypothesis: 'The cake is gluten free.' },
  { premise: 'I found 3 bakeries in San Jose, would you like one of them, or shall I look somewhere else for you?', hypothesis: 'I found 3 results.' },
  { premise: 'Sure.', hypothesis: 'Have a good day.' },
];

describe('lexical-standin NLI model through onnxruntime', () => {
  let dir: string;
  let batched: NliRunner;
  let single: NliRunner;
  beforeAll(async () => {
    dir = getLexicalStandinDir();
    batched = await createNliRunner({ model: dir, device: 'cpu', threads: 1, maxPadFraction: 1, notice: quiet });
    single = await createNliRunner({ model: dir, device: 'cpu', threads: 1, maxBatchSize: 1, notice: quiet });
  });
  afterAll(async () => {
    await batched?.close();
    await single?.close();
  });

  it('gets the Queens example right: not entailed alone, entailed with the context premise', async () => {
    const [alone, withContext] = await single.score(PAIRS.slice(0, 2));
    expect(argmaxLabel(alone)).not.toBe('entailment');
    expect(alone.entailment).toBeLessThan(0.5);
    expect(argmaxLabel(withContext)).toBe('entailment');
    expect(withContext.entailment).toBeGreaterThan(0.9);
    // docs/lexical-standin.md prints this pair's probability (issue 21: printed figures come from a test).
    const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'lexical-standin.md'), 'utf8');
    expect(doc).toContain(`has all four (entailment, p ≈ ${withContext.entailment.toFixed(2)}).`);
  });

  it('needs the value: a name or number of the hypothesis missing from the premise blocks entailment', async () => {
    const [name, time] = await single.score(PAIRS.slice(2, 4));
    expect(argmaxLabel(name)).toBe('entailment');
    expect(argmaxLabel(time)).not.toBe('entailment');
  });

  it('calls a negation on one side only a contradiction', async () => {
    const [negated, same] = await single.score(PAIRS.slice(4, 6));
    expect(argmaxLabel(negated)).toBe('contradiction');
    expect(argmaxLabel(same)).toBe('entailment');
  });

  it('gives batched results equal to one-at-a-time results (padding and segment finding are per row)', async () => {
    const many = await batched.score(PAIRS);
    expect(batched.stats().batches).toBe(1);
    const ones = [];
    for (const p of PAIRS) ones.push(await single.scoreOne(p));
    expect(single.stats().batches).toBeGreaterThanOrEqual(PAIRS.length);
    for (let i = 0; i < PAIRS.length; i++) {
      for (const k of ['entailment', 'neutral', 'contradiction'] as const) expect(many[i][k]).toBeCloseTo(ones[i][k], 6);
    }
    // All three labels occur, so equality is not that of a constant model.
    expect(new Set(ones.map(argmaxLabel))).toEqual(new Set(['entailment', 'neutral', 'contradiction']));
  });

  it('is known as a table-lookup stand-in from its config.json (batched by CPU_STANDIN_LIMITS, its threads sleep between passes); a language model is not', async () => {
    const standinOf = (d: string) => (JSON.parse(readFileSync(path.join(d, 'config.json'), 'utf8')) as { todeval_standin?: string }).todeval_standin;
    expect(isTableLookupStandin(standinOf(dir))).toBe(true);
    expect(isTableLookupStandin(standinOf(await getTinyModelDir()))).toBe(false);
    expect(isTableLookupStandin(undefined)).toBe(false);
  });

  it('is batched by CPU_STANDIN_LIMITS, not by the CPU_LIMITS of a language model: 64 pairs of one length make one pass', async () => {
    const runner = await createNliRunner({ model: dir, device: 'cpu', threads: 1, notice: quiet });
    try {
      // Distinct pairs (nothing from the cache) of the same token count: only the row limit can split them.
      const pairs = Array.from({ length: 64 }, (_, i) => ({ premise: `Your table is booked for ${i + 10} people.`, hypothesis: 'The table is booked.' }));
      const probs = await runner.score(pairs);
      expect(runner.stats()).toMatchObject({ issued: 64, batches: 1 });
      expect(64).toBeGreaterThan(CPU_LIMITS.maxBatchSize);
      expect(64).toBeLessThanOrEqual(CPU_STANDIN_LIMITS.maxBatchSize);
      const ones = [];
      for (const p of pairs.slice(0, 3)) ones.push(await single.scoreOne(p));
      expect(probs.slice(0, 3)).toEqual(ones);
    } finally {
      await runner.close();
    }
  });

  it('computes the token-overlap share it is documented to compute (checked against a TypeScript count)', async () => {
    // Without negation or a missing value, entailment logit - neutral logit = slope * (share - threshold).
    const manifest = JSON.parse(readFileSync(path.join(dir, 'lexical-standin.json'), 'utf8')) as {
      decision: { threshold: number; slope: number };
    };
    const tok = PairTokenizer.fromFiles(path.join(dir, 'tokenizer.json'), path.join(dir, 'tokenizer_config.json'));
    const vocab = (JSON.parse(readFileSync(path.join(TOKENIZER_DIR, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } }).model.vocab;
    const tables = lexicalTables(vocab, [0, 1, 2, 3, 50264]);
    const pairs = [PAIRS[1], PAIRS[2], PAIRS[6], { premise: 'The hair stylist is nice.', hypothesis: 'The name of the stylist is good.' }];
    const probs = await single.score(pairs);
    pairs.forEach((p, i) => {
      const premiseWords = new Set(tok.textIds(p.premise).map((t) => tables.canon[t]).filter((w) => w > 0));
      const hypWords = tok.textIds(p.hypothesis).map((t) => tables.canon[t]).filter((w) => w > 0);
      const share = hypWords.filter((w) => premiseWords.has(w)).length / hypWords.length;
      const margin = Math.log(probs[i].entailment / probs[i].neutral);
      expect(margin).toBeCloseTo(manifest.decision.slope * (share - manifest.decision.threshold), 3);
    });
    expect(canonicalWord('\u0120Queens')).toBe(canonicalWord('Queens'));
  });

  it('is named as what it is in every signature, and its config claims no RoBERTa architecture', () => {
    expect(batched.modelSignature.modelId).toMatch(/^local:.*lexical-standin/);
    expect(isStandinModelId(batched.modelSignature.modelId)).toBe(true);
    expect(batched.modelSignature.revision).toMatch(/^sha256:[0-9a-f]{16}$/);
    const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config.architectures).toEqual(['LexicalOverlapStandin']);
    expect(config.todeval_standin).toBe('lexical-standin');
    expect(isStandinModelId('Xenova/roberta-large-mnli')).toBe(false);
  });
});

describe('npm run model:lexical', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'todeval-lexical-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const run = (args: string[]) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/build-lexical-standin.ts', ...args], { cwd: REPO_ROOT }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it('writes a loadable model directory whose id names the stand-in; same build, same bytes', async () => {
    const a = await run(['--out', path.join(tmp, 'a')]);
    const b = await run(['--out', path.join(tmp, 'b')]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(a.stdout).toContain('NOT a language model');
    const sha = (d: string) => (JSON.parse(readFileSync(path.join(tmp, d, 'lexical-standin.json'), 'utf8')) as { sha256: string }).sha256;
    expect(sha('a')).toBe(sha('b'));
    const runner = await createNliRunner({ model: path.join(tmp, 'a'), device: 'cpu', threads: 1, notice: quiet });
    expect(runner.modelSignature.modelId).toBe('local:lexical-standin-a');
    await runner.close();
  }, 60_000);

  it('refuses a threshold outside (0, 1] with one line and exit 2', async () => {
    const r = await run(['--out', path.join(tmp, 'c'), '--threshold', '1.5']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
