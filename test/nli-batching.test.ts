import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { planBatches, takeBatch } from '../src/nli/batcher.js';
import { labelIndexFromConfig, probsFromLogits } from '../src/nli/labels.js';
import { PairCache } from '../src/nli/pair-cache.js';
import { BatchedNliRunner } from '../src/nli/runner.js';
import { unpadRows, type PaddedBatch } from '../src/nli/feeds.js';
import type { LogitsSession } from '../src/nli/session.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { InputError, ModelRunError } from '../src/util/errors.js';
import { TOKENIZER_DIR } from './helpers/shared.js';
import { SAMPLE_PAIRS } from './nli-fixtures.js';
import { tempDir } from './helpers/temp.js';

describe('planBatches / takeBatch', () => {
  it('respects the padded-token budget and the row limit', () => {
    const lengths = [5, 5, 6, 8, 10, 20, 40, 41];
    const batches = planBatches(lengths, { maxBatchTokens: 40, maxBatchSize: 3 });
    expect(batches.flat()).toEqual(lengths.map((_, i) => i));
    for (const b of batches) {
      expect(b.length).toBeLessThanOrEqual(3);
      const longest = Math.max(...b.map((i) => lengths[i]));
      if (b.length > 1) expect(longest * b.length).toBeLessThanOrEqual(40);
    }
    // A row longer than the budget still runs, alone.
    expect(batches[batches.length - 1]).toEqual([7]);
    expect(batches).toEqual([[0, 1, 2], [3, 4], [5], [6], [7]]);
  });

  it('caps the share of padding when asked (rows must be of similar length)', () => {
    const lengths = [10, 10, 11, 12, 20, 21, 40];
    // [10,10,11,12]: 48 padded, 43 real -> 10% padding; adding 20 would make 100 padded for 63 real.
    expect(planBatches(lengths, { maxBatchTokens: 1000, maxBatchSize: 64, maxPadFraction: 0.15 })).toEqual([[0, 1, 2, 3], [4, 5], [6]]);
    expect(planBatches(lengths, { maxBatchTokens: 1000, maxBatchSize: 64 })).toEqual([[0, 1, 2, 3, 4, 5, 6]]);
    expect(takeBatch((i) => lengths[i], 7, { maxBatchTokens: 1000, maxBatchSize: 64, maxPadFraction: 0.15 })).toBe(4);
  });

  it('takeBatch takes the longest prefix that fits', () => {
    const lengths = [3, 3, 4, 4, 9];
    expect(takeBatch((i) => lengths[i], 5, { maxBatchTokens: 16, maxBatchSize: 10 })).toBe(4);
    expect(takeBatch((i) => lengths[i], 5, { maxBatchTokens: 16, maxBatchSize: 2 })).toBe(2);
    expect(takeBatch((i) => [50][i], 1, { maxBatchTokens: 16, maxBatchSize: 2 })).toBe(1);
  });
});

describe('labels from config.json id2label', () => {
  it('maps each class to its logit whatever the order', () => {
    const mnli = labelIndexFromConfig({ id2label: { 0: 'CONTRADICTION', 1: 'NEUTRAL', 2: 'ENTAILMENT' } });
    expect(mnli).toEqual({ contradiction: 0, neutral: 1, entailment: 2 });
    const reversed = labelIndexFromConfig({ id2label: { 0: 'entailment', 1: 'neutral', 2: 'contradiction' } });
    expect(reversed).toEqual({ entailment: 0, neutral: 1, contradiction: 2 });
    const logits = [3, 1, -2];
    expect(probsFromLogits(logits, 0, 3, mnli).contradiction).toBeCloseTo(Math.exp(3) / (Math.exp(3) + Math.exp(1) + Math.exp(-2)), 12);
    expect(probsFromLogits(logits, 0, 3, reversed).entailment).toBeCloseTo(Math.exp(3) / (Math.exp(3) + Math.exp(1) + Math.exp(-2)), 12);
  });

  it('rejects configs without MNLI names', () => {
    expect(() => labelIndexFromConfig({ id2label: { 0: 'LABEL_0', 1: 'LABEL_1', 2: 'LABEL_2' } })).toThrow(InputError);
    expect(() => labelIndexFromConfig({})).toThrow(/id2label/);
  });
});

describe('PairCache file', () => {
  it('persists per model key and ignores other models', () => {
    const file = path.join(tempDir('nli-cache'), 'cache.jsonl');
    const a = new PairCache('model-a', file);
    a.set('p1', 'h1', { entailment: 0.7, neutral: 0.2, contradiction: 0.1 });
    a.set('p\u0000x', 'h "q"', { entailment: 0.1, neutral: 0.8, contradiction: 0.1 });
    expect(a.flush()).toBe(2);
    expect(a.flush()).toBe(0);
    const b = new PairCache('model-b', file);
    b.set('p1', 'h1', { entailment: 0.2, neutral: 0.2, contradiction: 0.6 });
    b.flush();
    const a2 = new PairCache('model-a', file);
    expect(a2.size).toBe(2);
    expect(a2.get('p1', 'h1')?.entailment).toBe(0.7);
    expect(a2.get('p\u0000x', 'h "q"')?.neutral).toBe(0.8);
    expect(new PairCache('model-b', file).get('p1', 'h1')?.contradiction).toBe(0.6);
  });

  it('gives two distinct pairs two keys whatever characters their texts hold', () => {
    expect(PairCache.key('a\u0000b', 'c')).not.toBe(PairCache.key('a', 'b\u0000c'));
    expect(PairCache.key('a"', 'b')).not.toBe(PairCache.key('a', '"b'));
    expect(PairCache.key('p', 'h')).toBe(PairCache.key('p', 'h'));
  });

  it('tolerates a torn last line but reports damage elsewhere', () => {
    const dir = tempDir('nli-cache');
    const torn = path.join(dir, 'torn.jsonl');
    writeFileSync(torn, `${JSON.stringify({ m: 'k', p: 'a', h: 'b', e: 1, n: 0, c: 0 })}\n{"m":"k","p":`);
    expect(new PairCache('k', torn).size).toBe(1);
    const bad = path.join(dir, 'bad.jsonl');
    writeFileSync(bad, `garbage\n${JSON.stringify({ m: 'k', p: 'a', h: 'b', e: 1, n: 0, c: 0 })}\n\n`);
    let err: unknown;
    try {
      new PairCache('k', bad);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).oneLine()).toBe(`${bad}: line 1: NLI cache file is corrupt (not JSON lines); delete it or pass another --cache`);
    expect(readFileSync(bad, 'utf8')).toContain('garbage');
  });
});

/**
 * Fake ONNX session: logits depend only on a row's unpadded tokens, so any batching or padding
 * mistake (lost rows, swapped order, pads counted) changes the answer. Records every batch and can
 * raise a CUDA-style out-of-memory error for batches above a size.
 */
class FakeLogitsSession implements LogitsSession {
  readonly device = 'cpu' as const;
  readonly numLabels = 3;
  batches: number[][][] = [];
  oomAbove = Number.POSITIVE_INFINITY;

  static rowLogits(row: number[]): [number, number, number] {
    let s = 0;
    for (let i = 0; i < row.length; i++) s = (s * 31 + row[i]) % 1000003;
    return [(s % 97) / 10, row.length / 10, ((s >> 3) % 89) / 10];
  }

  constructor(readonly padId = 1) {}

  async run(batch: PaddedBatch): Promise<Float32Array> {
    // The rows as the model sees them: ids under the mask, which must be 1s then 0s with pad ids under the 0s.
    const ids = unpadRows(batch);
    ids.forEach((row, r) => {
      for (let j = row.length; j < batch.width; j++) {
        const k = r * batch.width + j;
        expect([batch.attentionMask[k], batch.inputIds[k]]).toEqual([0n, BigInt(this.padId)]);
      }
    });
    expect(Math.max(...ids.map((r) => r.length))).toBe(batch.width);
    await new Promise((r) => setTimeout(r, 1));
    if (ids.length > this.oomAbove) throw new Error('CUDA failure 2: out of memory ; GPU=0');
    this.batches.push(ids);
    const out = new Float32Array(ids.length * 3);
    ids.forEach((row, i) => out.set(FakeLogitsSession.rowLogits(row), i * 3));
    return out;
  }

  async release(): Promise<void> {}
}

/** Fake session whose last logit of every batch is NaN, as an overflowing fp16 export gives. */
class FakeNanLogitsSession extends FakeLogitsSession {
  override async run(batch: PaddedBatch): Promise<Float32Array> {
    const out = await super.run(batch);
    out[out.length - 1] = Number.NaN;
    return out;
  }
}

describe('BatchedNliRunner queue logic (fake session)', () => {
  let tokenizer: PairTokenizer;
  const labels = { contradiction: 0, neutral: 1, entailment: 2 };
  const signature = { modelId: 'fake', revision: 'r', dtype: 'fp32' };
  beforeAll(() => {
    tokenizer = PairTokenizer.fromFiles(path.join(TOKENIZER_DIR, 'tokenizer.json'), path.join(TOKENIZER_DIR, 'tokenizer_config.json'));
  });
  const expected = (p: { premise: string; hypothesis: string }) =>
    probsFromLogits(Float32Array.from(FakeLogitsSession.rowLogits(tokenizer.encodePair(p.premise, p.hypothesis).ids)), 0, 3, labels);
  const manyPairs = Array.from({ length: 40 }, (_, i) => ({
    premise: `${SAMPLE_PAIRS[i % SAMPLE_PAIRS.length].premise} ${'more '.repeat(i % 7)}`,
    hypothesis: `${SAMPLE_PAIRS[(i * 3) % SAMPLE_PAIRS.length].hypothesis} (${i})`,
  }));

  it('returns each caller its own results in order, batched by length within the budget', async () => {
    const session = new FakeLogitsSession();
    const runner = new BatchedNliRunner({ session, tokenizer, labels, signature, limits: { maxBatchTokens: 400, maxBatchSize: 8 } });
    const got = await runner.score(manyPairs);
    got.forEach((g, i) => expect(g).toEqual(expected(manyPairs[i])));
    expect(session.batches.length).toBeLessThan(manyPairs.length / 2);
    for (const b of session.batches) {
      expect(b.length).toBeLessThanOrEqual(8);
      expect(Math.max(...b.map((r) => r.length)) * b.length).toBeLessThanOrEqual(400);
    }
    const s = runner.stats();
    expect(s).toMatchObject({ requested: 40, issued: 40, cacheHits: 0, batches: session.batches.length });
    expect(s.tokens).toBe(manyPairs.reduce((n, p) => n + tokenizer.encodePair(p.premise, p.hypothesis).ids.length, 0));
  });

  it('lets concurrent callers share batches and dedupes identical pairs across them', async () => {
    const session = new FakeLogitsSession();
    const runner = new BatchedNliRunner({ session, tokenizer, labels, signature, limits: { maxBatchTokens: 100000, maxBatchSize: 64 } });
    const a = manyPairs.slice(0, 25);
    const b = manyPairs.slice(15, 40);
    const [ra, rb, rc] = await Promise.all([runner.score(a), runner.score(b), runner.scoreOne(manyPairs[3])]);
    ra.forEach((g, i) => expect(g).toEqual(expected(a[i])));
    rb.forEach((g, i) => expect(g).toEqual(expected(b[i])));
    expect(rc).toEqual(expected(manyPairs[3]));
    // All 40 distinct pairs went through in one forward pass.
    expect(session.batches).toHaveLength(1);
    expect(session.batches[0]).toHaveLength(40);
    expect(runner.stats()).toMatchObject({ requested: 51, issued: 40, cacheHits: 11 });
    // Asking again computes nothing.
    await runner.score(manyPairs);
    expect(session.batches).toHaveLength(1);
    expect(runner.stats()).toMatchObject({ requested: 91, issued: 40, cacheHits: 51 });
  });

  it('pairs arriving while a batch runs join later batches', async () => {
    const session = new FakeLogitsSession();
    const runner = new BatchedNliRunner({ session, tokenizer, labels, signature, limits: { maxBatchTokens: 100000, maxBatchSize: 4 } });
    const first = runner.score(manyPairs.slice(0, 12));
    await new Promise((r) => setTimeout(r, 0));
    const second = runner.score(manyPairs.slice(12, 20));
    const [r1, r2] = await Promise.all([first, second]);
    [...r1, ...r2].forEach((g, i) => expect(g).toEqual(expected(manyPairs[i])));
    expect(session.batches.flat()).toHaveLength(20);
  });

  it('halves a batch on out-of-memory and gives the same results', async () => {
    const session = new FakeLogitsSession();
    session.oomAbove = 3;
    const runner = new BatchedNliRunner({ session, tokenizer, labels, signature, limits: { maxBatchTokens: 100000, maxBatchSize: 16 } });
    const got = await runner.score(manyPairs.slice(0, 20));
    got.forEach((g, i) => expect(g).toEqual(expected(manyPairs[i])));
    expect(runner.stats().oomSplits).toBeGreaterThan(0);
    expect(Math.max(...session.batches.map((b) => b.length))).toBeLessThanOrEqual(3);
  });

  it('fails the affected pairs when a single row runs out of memory, without hanging', async () => {
    const session = new FakeLogitsSession();
    session.oomAbove = 0;
    const runner = new BatchedNliRunner({ session, tokenizer, labels, signature, limits: { maxBatchTokens: 100000, maxBatchSize: 4 } });
    await expect(runner.score(manyPairs.slice(0, 3))).rejects.toThrow(/out of memory/);
  });

  it('fails a batch with a NaN logit as a model failure and caches none of its pairs', async () => {
    const file = path.join(tempDir('nli-cache'), 'cache.jsonl');
    const runner = new BatchedNliRunner({ session: new FakeNanLogitsSession(), tokenizer, labels, signature, limits: { maxBatchTokens: 100000, maxBatchSize: 64 }, cacheFile: file });
    const err = await runner.score(manyPairs.slice(0, 3)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelRunError);
    expect((err as Error).message).toMatch(/non-finite logit \(NaN\) for pair 3 of the batch/);
    // NaN would have been written as null, a record the next run refuses as lacking p/h/e/n/c.
    expect(runner.flushCache()).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  it('refuses a batch limit under one row (the pool would hand out empty batches forever)', () => {
    const make = (maxBatchSize: number) => new BatchedNliRunner({ session: new FakeLogitsSession(), tokenizer, labels, signature, limits: { maxBatchTokens: 400, maxBatchSize } });
    expect(() => make(0)).toThrow(InputError);
    expect(() => make(Number.NaN)).toThrow(/maxBatchSize must be at least 1/);
    expect(make(1).maxLength).toBe(tokenizer.maxLength);
  });

  it('reports progress over issued pairs', async () => {
    const seen: [number, number][] = [];
    const runner = new BatchedNliRunner({
      session: new FakeLogitsSession(),
      tokenizer,
      labels,
      signature,
      limits: { maxBatchTokens: 100000, maxBatchSize: 5 },
      onProgress: (d, t) => seen.push([d, t]),
    });
    await runner.score(manyPairs.slice(0, 12));
    expect(seen[seen.length - 1]).toEqual([12, 12]);
    expect(seen.map((s) => s[0])).toEqual([...seen.map((s) => s[0])].sort((x, y) => x - y));
  });
});
