import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNliRunner, type NliRunner } from '../src/nli/runner.js';
import { resolveModel } from '../src/nli/model-store.js';
import { argmaxLabel, type NliProbs } from '../src/nli/types.js';
import { InputError, MissingResourceError } from '../src/util/errors.js';

import { copyModelDir, editJson, getSensitiveTinyModelDir, SAMPLE_PAIRS } from './nli-fixtures.js';

function maxDiff(a: NliProbs, b: NliProbs): number {
  return Math.max(Math.abs(a.entailment - b.entailment), Math.abs(a.neutral - b.neutral), Math.abs(a.contradiction - b.contradiction));
}

const quiet = () => {};

describe('NLI runner on a real ONNX model (tiny random RoBERTa)', () => {
  let dir: string;
  let batched: NliRunner;
  let single: NliRunner;
  const tmp: string[] = [];
  beforeAll(async () => {
    dir = getSensitiveTinyModelDir();
    // No padding cap here: the point is to run rows of different lengths in one padded batch.
    batched = await createNliRunner({ model: dir, device: 'cpu', threads: 1, maxPadFraction: 1, notice: quiet });
    single = await createNliRunner({ model: dir, device: 'cpu', threads: 1, maxBatchSize: 1, notice: quiet });
  });
  afterAll(async () => {
    await batched?.close();
    await single?.close();
    for (const d of tmp) rmSync(d, { recursive: true, force: true });
  });

  it('gives batched results equal to one-at-a-time results within 1e-4 (padding and masking)', async () => {
    const pairs = [...SAMPLE_PAIRS, { premise: `${SAMPLE_PAIRS[2].premise} ${SAMPLE_PAIRS[6].premise}`, hypothesis: 'The city is Seattle.' }];
    const many = await batched.score(pairs);
    expect(batched.stats().batches).toBe(1);
    const ones: NliProbs[] = [];
    for (const p of pairs) ones.push(await single.scoreOne(p));
    expect(single.stats().batches).toBe(pairs.length);
    for (let i = 0; i < pairs.length; i++) expect(maxDiff(many[i], ones[i])).toBeLessThan(1e-4);
    // The model separates these pairs clearly, so the comparison above could fail.
    const spread = Math.max(...ones.map((o) => maxDiff(o, ones[0])));
    expect(spread).toBeGreaterThan(0.05);
  });

  it('signs the model as a local random export with a content digest', () => {
    expect(batched.modelSignature.modelId).toMatch(/^local:.*random/);
    expect(batched.modelSignature.revision).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(batched.modelSignature.dtype).toBe('fp32');
    expect(batched.device).toBe('cpu');
  });

  it('takes the label order from config.json id2label', async () => {
    const swapped = copyModelDir(dir, (d) =>
      editJson(path.join(d, 'config.json'), (c) => {
        c.id2label = { 0: 'ENTAILMENT', 1: 'NEUTRAL', 2: 'CONTRADICTION' };
        c.label2id = { ENTAILMENT: 0, NEUTRAL: 1, CONTRADICTION: 2 };
      }),
    );
    tmp.push(swapped);
    const r = await createNliRunner({ model: swapped, device: 'cpu', threads: 1, notice: quiet });
    try {
      const a = await batched.score(SAMPLE_PAIRS);
      const b = await r.score(SAMPLE_PAIRS);
      for (let i = 0; i < a.length; i++) {
        expect(b[i].entailment).toBeCloseTo(a[i].contradiction, 6);
        expect(b[i].contradiction).toBeCloseTo(a[i].entailment, 6);
        expect(b[i].neutral).toBeCloseTo(a[i].neutral, 6);
      }
    } finally {
      await r.close();
    }
  });

  it('truncates long premises to the model maximum and still scores them', async () => {
    const long = Array.from({ length: 900 }, (_, i) => `token${i % 37}`).join(' ');
    const before = batched.stats().truncated;
    const [p] = await batched.score([{ premise: long, hypothesis: 'The city is San Jose.' }]);
    expect(batched.stats().truncated).toBe(before + 1);
    expect(p.entailment + p.neutral + p.contradiction).toBeCloseTo(1, 6);
    // Only the first 512 tokens matter: an even longer premise with the same start scores the same.
    const [q] = await batched.score([{ premise: `${long} ${long}`, hypothesis: 'The city is San Jose.' }]);
    expect(maxDiff(p, q)).toBeLessThan(1e-6);
  });

  it('persists the pair cache so a second runner computes nothing', async () => {
    const cacheFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'nli-cache-')), 'pairs.jsonl');
    tmp.push(path.dirname(cacheFile));
    const r1 = await createNliRunner({ model: dir, device: 'cpu', threads: 1, cacheFile, notice: quiet });
    const first = await r1.score(SAMPLE_PAIRS);
    await r1.close();
    expect(readFileSync(cacheFile, 'utf8').trim().split('\n')).toHaveLength(SAMPLE_PAIRS.length);
    const r2 = await createNliRunner({ model: dir, device: 'cpu', threads: 1, cacheFile, notice: quiet });
    const again = await r2.score(SAMPLE_PAIRS);
    expect(r2.stats()).toMatchObject({ requested: SAMPLE_PAIRS.length, issued: 0, cacheHits: SAMPLE_PAIRS.length, batches: 0 });
    expect(again).toEqual(first);
    await r2.close();
  });

  it('serves concurrent callers from shared batches', async () => {
    const r = await createNliRunner({ model: dir, device: 'cpu', threads: 1, maxPadFraction: 1, notice: quiet });
    try {
      const halves = [SAMPLE_PAIRS.slice(0, 5), SAMPLE_PAIRS.slice(3)];
      const [a, b] = await Promise.all(halves.map((h) => r.score(h)));
      expect(r.stats()).toMatchObject({ requested: SAMPLE_PAIRS.length + 2, issued: SAMPLE_PAIRS.length, cacheHits: 2, batches: 1 });
      const ref = await single.score(SAMPLE_PAIRS);
      [...a, ...b.slice(2)].forEach((x, i) => expect(maxDiff(x, ref[i])).toBeLessThan(1e-4));
      expect(argmaxLabel(a[0])).toBe(argmaxLabel(ref[0]));
    } finally {
      await r.close();
    }
  });

  it('reports a missing model dir, a dir without ONNX and a corrupt ONNX file as one-line input errors', async () => {
    await expect(createNliRunner({ model: '/nonexistent/model-dir', notice: quiet })).rejects.toThrow(MissingResourceError);
    const noOnnx = copyModelDir(dir, (d) => rmSync(path.join(d, 'onnx'), { recursive: true }));
    tmp.push(noOnnx);
    await expect(createNliRunner({ model: noOnnx, notice: quiet })).rejects.toThrow(/has no ONNX file/);
    const corrupt = copyModelDir(dir, (d) => {
      const f = path.join(d, 'onnx', 'model.onnx');
      truncateSync(f, Math.floor(statSync(f).size / 3));
    });
    tmp.push(corrupt);
    const err = await createNliRunner({ model: corrupt, device: 'cpu', notice: quiet }).catch((e) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).oneLine()).toMatch(/model\.onnx: cannot load ONNX model .*missing or corrupt/);
    expect((err as InputError).oneLine()).not.toContain('\n');
  });

  it('looks the default model up in the HF cache and names the pull command when absent', () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'hf-empty-'));
    tmp.push(empty);
    expect(() => resolveModel(undefined, 'q8', { HF_HOME: empty })).toThrow(/todeval models pull --dtype q8/);
    expect(() => resolveModel(undefined, undefined, { TODEVAL_MODEL: dir })).not.toThrow();
    writeFileSync(path.join(empty, 'x'), '');
  });
});
