import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildNullStandin, isStandinModelId, localModelId, standinKind } from '../src/nli/onnx-builder/index.js';
import { createNliRunner, type NliRunner } from '../src/nli/runner.js';
import { argmaxLabel } from '../src/nli/types.js';
import { runTsx } from './helpers/cli.js';
import { TOKENIZER_DIR } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';
import { SAMPLE_PAIRS } from './nli-fixtures.js';

const quiet = () => {};

describe('null-standin NLI model (constant logits) through onnxruntime', () => {
  const tmp = suiteTempDir('null');
  let runner: NliRunner;
  beforeAll(async () => {
    buildNullStandin({ outDir: path.join(tmp, 'neutral'), tokenizerDir: TOKENIZER_DIR });
    runner = await createNliRunner({ model: path.join(tmp, 'neutral'), device: 'cpu', threads: 1, notice: quiet });
  });
  afterAll(async () => {
    await runner?.close();
  });

  it('gives every pair, whatever its length or batch, the same probabilities: softmax of 4 for the label, 0 for the others', async () => {
    const pairs = [...SAMPLE_PAIRS, { premise: 'word '.repeat(300), hypothesis: 'x' }];
    const probs = await runner.score(pairs);
    expect(runner.stats().batches).toBeGreaterThan(1);
    const expected = Math.exp(4) / (Math.exp(4) + 2);
    for (const p of probs) {
      expect(p.neutral).toBeCloseTo(expected, 6);
      expect(p.entailment).toBeCloseTo(1 / (Math.exp(4) + 2), 6);
      expect(p.contradiction).toBeCloseTo(p.entailment, 12);
      expect(argmaxLabel(p)).toBe('neutral');
    }
  });

  it('puts the label where config.json id2label says it is', async () => {
    buildNullStandin({ outDir: path.join(tmp, 'entail'), tokenizerDir: TOKENIZER_DIR, label: 'entailment' });
    const entail = await createNliRunner({ model: path.join(tmp, 'entail'), device: 'cpu', threads: 1, notice: quiet });
    try {
      expect(argmaxLabel(await entail.scoreOne(SAMPLE_PAIRS[0]))).toBe('entailment');
    } finally {
      await entail.close();
    }
  });

  it('is named as what it is in every signature, and its config claims no RoBERTa architecture', () => {
    const dir = path.join(tmp, 'neutral');
    expect(standinKind(dir)).toBe('null-standin');
    expect(localModelId(dir)).toBe('local:null-standin-neutral');
    expect(runner.modelSignature.modelId).toBe('local:null-standin-neutral');
    expect(isStandinModelId(runner.modelSignature.modelId)).toBe(true);
    const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config.architectures).toEqual(['ConstantLogitsStandin']);
    expect(config.todeval_standin).toBe('null-standin');
  });
});

describe('npm run model:null', () => {
  const tmp = suiteTempDir('null-cli');

  it('writes the model directory and says it is not a language model; same build, same bytes', async () => {
    const a = await runTsx(['scripts/build-null-standin.ts', '--out', path.join(tmp, 'a')]);
    const b = await runTsx(['scripts/build-null-standin.ts', '--out', path.join(tmp, 'b')]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(a.stdout).toContain('NOT a language model');
    const manifest = (d: string) => JSON.parse(readFileSync(path.join(tmp, d, 'null-standin.json'), 'utf8')) as { sha256: string; label: string };
    expect(manifest('a').sha256).toBe(manifest('b').sha256);
    expect(manifest('a').label).toBe('neutral');
  }, 60_000);

  it('refuses an unknown label with one line and exit 2', async () => {
    const r = await runTsx(['scripts/build-null-standin.ts', '--out', path.join(tmp, 'c'), '--label', 'maybe']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['--label must be one of entailment, neutral, contradiction']);
  });
});
