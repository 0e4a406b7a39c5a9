import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildRandomRoberta,
  generateWeight,
  robertaWeightSpecs,
  type RandomModelManifest,
  type RobertaSizes,
} from '../src/nli/onnx-builder/index.js';
import { fromHalfBits, toHalfBits } from '../src/nli/onnx-builder/float16.js';
import { encodeVarint } from '../src/nli/onnx-builder/protobuf.js';
import { referenceLogits, type WeightLookup } from './helpers/roberta-reference-forward.js';
import { TOKENIZER_DIR } from './helpers/shared.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

describe('protobuf varints (values from the protobuf encoding spec)', () => {
  it('encodes small, multi-byte and negative int64 values', () => {
    expect(Array.from(encodeVarint(1))).toEqual([0x01]);
    expect(Array.from(encodeVarint(150))).toEqual([0x96, 0x01]);
    expect(Array.from(encodeVarint(300))).toEqual([0xac, 0x02]);
    // Above 2^32, where 32-bit shifts would silently truncate.
    expect(Array.from(encodeVarint(2 ** 35))).toEqual([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    expect(Array.from(encodeVarint(-1))).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  });
});

describe('float16 conversion (IEEE 754 half)', () => {
  it('matches known bit patterns and rounds to nearest even', () => {
    expect(toHalfBits(1)).toBe(0x3c00);
    expect(toHalfBits(-2)).toBe(0xc000);
    expect(toHalfBits(65504)).toBe(0x7bff);
    expect(toHalfBits(1e6)).toBe(0x7c00);
    expect(toHalfBits(2 ** -24)).toBe(0x0001);
    expect(toHalfBits(2 ** -26)).toBe(0x0000);
    expect(toHalfBits(1 / 3)).toBe(0x3555);
    // 1 + 2^-11 is exactly halfway between 1 and the next half: ties go to the even mantissa (1).
    expect(toHalfBits(1 + 2 ** -11)).toBe(0x3c00);
    expect(toHalfBits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(fromHalfBits(0x3555)).toBeCloseTo(0.33325, 5);
  });
});

function int64Tensor(rows: number[][]): ort.Tensor {
  const width = rows[0].length;
  return new ort.Tensor('int64', BigInt64Array.from(rows.flat().map(BigInt)), [rows.length, width]);
}

/** Right-pads sequences with the pad id (1) and runs them as one batch. */
async function runBatch(session: ort.InferenceSession, seqs: number[][], padId = 1): Promise<number[][]> {
  const width = Math.max(...seqs.map((s) => s.length));
  const ids = seqs.map((s) => [...s, ...Array(width - s.length).fill(padId)]);
  const mask = seqs.map((s) => [...s.map(() => 1), ...Array(width - s.length).fill(0)]);
  const out = await session.run({ input_ids: int64Tensor(ids), attention_mask: int64Tensor(mask) });
  const logits = out.logits;
  expect(logits.dims).toEqual([seqs.length, 3]);
  const data = Array.from(logits.data as Float32Array);
  return seqs.map((_, i) => data.slice(i * 3, i * 3 + 3));
}

function maxAbsDiff(a: number[], b: number[]): number {
  return Math.max(...a.map((v, i) => Math.abs(v - b[i])));
}

function sha256File(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

// <s> ... </s> with ordinary BPE ids; SHORT is a prefix-free different sentence.
const SHORT = [0, 133, 2335, 16, 11, 5, 1312, 4, 2];
const LONG = [0, 20, 1625, 9, 5, 2391, 16, 3470, 1304, 8, 24, 16, 11, 1261, 1139, 4, 2];
const OTHER = [0, 38, 74, 101, 7, 1040, 10, 4684, 2];

describe('random RoBERTa ONNX model', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'todeval-onnx-builder-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('the shared tiny model has the hub export interface, dynamic batch and sequence dims', async () => {
    const dir = await getTinyModelDir();
    const manifest = JSON.parse(readFileSync(path.join(dir, 'random-model.json'), 'utf8')) as RandomModelManifest;
    const session = await ort.InferenceSession.create(path.join(dir, manifest.onnxFile));
    expect(session.inputNames).toEqual(['input_ids', 'attention_mask']);
    expect(session.outputNames).toEqual(['logits']);
    const one = await runBatch(session, [SHORT]);
    const three = await runBatch(session, [SHORT, LONG, OTHER]);
    expect(three).toHaveLength(3);
    for (const row of [...one, ...three]) for (const v of row) expect(Number.isFinite(v)).toBe(true);

    const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 128 });
    expect(config).toMatchObject({ vocab_size: 50265, max_position_embeddings: 514, pad_token_id: 1 });
    expect(config.id2label).toEqual({ '0': 'CONTRADICTION', '1': 'NEUTRAL', '2': 'ENTAILMENT' });
    // Buffer.equals, not toEqual: vitest's toEqual walks a Buffer byte by byte (4.7 s of CPU for these
    // 1.3 MB, with the worker's event loop blocked throughout: vitest's RPC times out under load).
    expect(readFileSync(path.join(dir, 'tokenizer.json')).equals(readFileSync(path.join(TOKENIZER_DIR, 'tokenizer.json'))), 'tokenizer.json is a byte copy of models/roberta-large-mnli/tokenizer.json').toBe(true);
    expect(manifest.sha256).toBe(sha256File(path.join(dir, manifest.onnxFile)));
    expect(manifest).toMatchObject({ kind: 'random-roberta', seed: 42, dtype: 'fp32', size: 'tiny' });
  });

  it('same seed gives a byte-identical file, another seed a different one', () => {
    const build = (name: string, seed: number): string => {
      const m = buildRandomRoberta({ outDir: path.join(tmp, name), size: 'tiny', seed, tokenizerDir: TOKENIZER_DIR });
      return sha256File(path.join(tmp, name, m.onnxFile));
    };
    const a = build('seed7-a', 7);
    expect(build('seed7-b', 7)).toBe(a);
    expect(build('seed8', 8)).not.toBe(a);
  });

  // A larger weight std than HF's 0.02 makes attention peaky and the logits spread out, so a wrong
  // position id or a leaking mask moves the logits far beyond the tolerances below.
  const STD = 0.1;
  const SEED = 11;
  let sizes: RobertaSizes;
  let session: ort.InferenceSession;
  let weights: Map<string, Float32Array>;
  const W: WeightLookup = (name) => {
    const w = weights.get(name);
    if (!w) throw new Error(`no weight ${name}`);
    return w;
  };

  it('builds the amplified tiny model', async () => {
    const m = buildRandomRoberta({ outDir: path.join(tmp, 'amp'), size: 'tiny', seed: SEED, std: STD, tokenizerDir: TOKENIZER_DIR });
    sizes = m.sizes;
    session = await ort.InferenceSession.create(path.join(tmp, 'amp', m.onnxFile));
    weights = new Map(robertaWeightSpecs(sizes).map((spec) => [spec.name, generateWeight(spec, { seed: SEED, std: STD })]));
  });

  it('padding invariance: a sequence alone and padded next to a longer one give the same logits', async () => {
    const [alone] = await runBatch(session, [SHORT]);
    const [padded, long, other] = await runBatch(session, [SHORT, LONG, OTHER]);
    expect(maxAbsDiff(alone, padded)).toBeLessThan(1e-4);
    const [otherAlone] = await runBatch(session, [OTHER]);
    expect(maxAbsDiff(otherAlone, other)).toBeLessThan(1e-4);
    // The check means something only if different inputs give clearly different logits.
    expect(maxAbsDiff(alone, long)).toBeGreaterThan(1e-2);
    expect(maxAbsDiff(alone, otherAlone)).toBeGreaterThan(1e-2);
  });

  it('matches an independent TypeScript forward pass of the same weights', async () => {
    const batch = await runBatch(session, [SHORT, LONG, OTHER]);
    const expected = [SHORT, LONG, OTHER].map((ids) => referenceLogits(sizes, W, ids));
    for (let i = 0; i < 3; i++) expect(maxAbsDiff(batch[i], expected[i])).toBeLessThan(1e-3);
    // Pad tokens inside the reference's own input (masked) must not change its answer either.
    const paddedRef = referenceLogits(sizes, W, [...SHORT, 1, 1, 1], [...SHORT.map(() => 1), 0, 0, 0]);
    expect(maxAbsDiff(paddedRef, expected[0])).toBeLessThan(1e-9);
  });

  it('an unmasked pad token does change the logits (the mask is what hides padding)', async () => {
    const ids = [[...SHORT, 1, 1]];
    const out = await session.run({ input_ids: int64Tensor(ids), attention_mask: int64Tensor([ids[0].map(() => 1)]) });
    const [alone] = await runBatch(session, [SHORT]);
    expect(maxAbsDiff(Array.from(out.logits.data as Float32Array), alone)).toBeGreaterThan(1e-3);
  });

  it('fp16 computes in float16: float16 tensors inside, float32 logits out, close to the reference on the rounded weights', async () => {
    const m = buildRandomRoberta({
      outDir: path.join(tmp, 'amp16'),
      size: 'tiny',
      seed: SEED,
      std: STD,
      dtype: 'fp16',
      tokenizerDir: TOKENIZER_DIR,
    });
    expect(m.onnxFile).toBe('onnx/model_fp16.onnx');
    const s16 = await ort.InferenceSession.create(path.join(tmp, 'amp16', m.onnxFile));
    const [got] = await runBatch(s16, [LONG]);
    const rounded: WeightLookup = (name) => W(name).map((v) => fromHalfBits(toHalfBits(v)));
    const expected = referenceLogits(sizes, rounded, LONG);
    // float16 activations round to 2^-11 relative at every op; on the tiny model's O(0.1) logits
    // that stays well inside 1e-2, while different inputs differ by more than 1e-2 (checked above).
    expect(maxAbsDiff(got, expected)).toBeLessThan(1e-2);
    // Not the fp32 graph under another name: its logits differ from fp32 compute on the same weights.
    const [fp32Got] = await runBatch(session, [LONG]);
    expect(maxAbsDiff(got, fp32Got)).toBeGreaterThan(0);
    // The graph really computes in float16: its weights are FLOAT16 initializers with no Cast back to float32.
    const bytes = readFileSync(path.join(tmp, 'amp16', m.onnxFile));
    expect(bytes.includes(Buffer.from('Cast_roberta.'))).toBe(false);
    const padded = await runBatch(s16, [LONG, SHORT]);
    expect(maxAbsDiff(padded[0], got)).toBeLessThan(5e-3);
  });
});
