import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRandomRoberta, type RandomModelManifest } from '../src/nli/onnx-builder/index.js';
import { quantizePerColumn, quantizePerTensor, roundHalfEven } from '../src/nli/onnx-builder/int8.js';
import { resolveModel } from '../src/nli/model-store.js';
import { createNliRunner, type NliRunner } from '../src/nli/runner.js';
import { argmaxLabel, type NliProbs } from '../src/nli/types.js';
import { runCli, runTsx } from './helpers/cli.js';
import { REPO_ROOT, TOKENIZER_DIR } from './helpers/shared.js';
import { SAMPLE_PAIRS } from './nli-fixtures.js';

describe('int8 weight quantization (symmetric, as ORT quantize_dynamic)', () => {
  it('rounds half to even, like numpy.rint', () => {
    expect([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 2.5001].map(roundHalfEven)).toEqual([0, 2, 2, -0, -2, -2, 2, 3]);
  });

  it('gives each output column its own scale, max |w| / 127', () => {
    // [in = 3, out = 2]: column 0 spans +-2, column 1 only +-0.5.
    const w = Float32Array.from([1, -0.5, -2, 0.25, 0.0157, 0.5]);
    const { values, scales } = quantizePerColumn(w, 3, 2);
    expect(Array.from(scales)).toEqual([Math.fround(2 / 127), Math.fround(0.5 / 127)]);
    // 1 / (2/127) = 63.5 -> 64 (half to even); 0.25 / (0.5/127) = 63.5 -> 64; 0.0157 * 63.5 = 0.997 -> 1.
    expect(Array.from(values)).toEqual([64, -127, -127, 64, 1, 127]);
  });

  it('dequantizes within half a step of every weight; an all-zero column stays zero', () => {
    const rows = 64;
    const cols = 5;
    const w = Float32Array.from({ length: rows * cols }, (_, k) => (k % cols === 4 ? 0 : Math.sin(k * 12.9898) * (1 + (k % cols))));
    const { values, scales } = quantizePerColumn(w, rows, cols);
    for (let k = 0; k < w.length; k++) {
      const j = k % cols;
      expect(Math.abs(values[k] * scales[j] - w[k])).toBeLessThanOrEqual(scales[j] / 2 + 1e-7);
      expect(Math.abs(values[k])).toBeLessThanOrEqual(127);
    }
    expect(scales[4]).toBe(1);
    expect(values.filter((_, k) => k % cols === 4).every((v) => v === 0)).toBe(true);
    const t = quantizePerTensor(Float32Array.from([0.1, -0.3, 0.2]));
    expect(t.scale).toBe(Math.fround(0.3 / 127));
    expect(Array.from(t.values)).toEqual([42, -127, 85]);
  });
});

function maxDiff(a: NliProbs, b: NliProbs): number {
  return Math.max(Math.abs(a.entailment - b.entailment), Math.abs(a.neutral - b.neutral), Math.abs(a.contradiction - b.contradiction));
}

const quiet = () => {};

/**
 * A tiny model with std-0.1 weights (pairs get different probabilities, attention is not yet one-hot)
 * and its q8 export built next to the fp32 one, as `npm run model:random -- --dtype q8` writes it.
 * At std 0.3 (test/nli-fixtures.ts) attention is nearly one-hot, int8 noise flips which token a head
 * attends to, and q8 is no longer an approximation of fp32 at all (logits move by ~1.5).
 */
const SEED = 11;
const STD = 0.1;

/**
 * Tolerance for q8 batched vs one-at-a-time, derived from the int8 arithmetic rather than fitted to
 * one CPU's result (0.0028406 against a fitted 0.0028383 failed on every run on an AMD EPYC).
 *
 * Where q8 results come from, per MatMulInteger y = (x_u8 - zp) W_s8 * s_x * s_w:
 * - W's int8 values and scales are fixed in the file: identical for a pair alone and in a batch.
 * - x is put on a uint8 grid by DynamicQuantizeLinear, per tensor: step s_x = range / 255, with the
 *   range spanning the whole tensor (and 0). A batch's tensor holds all its rows (padding included),
 *   so its range is the union of the rows' ranges: a row in a batch is rounded on a grid ρ = s_batch
 *   / s_alone >= 1 times coarser than alone. Rounding moves each activation by at most s_x / 2, so the
 *   activation part of the int8 error of a row grows (at most) linearly with ρ.
 * - The integer sums are exact int32 on AVX-512 VNNI / AVX-VNNI (vpdpbusd) and on the u8u8 / widening
 *   paths. On AVX2 or AVX-512BW without VNNI, MLAS's u8s8 kernel adds u8*s8 products in pairs with
 *   vpmaddubsw, which saturates at int16: 255*127*2 = 64770 > 32767, so a pair of large activations on
 *   large same-sign weights is clipped. That error is a deterministic function of the u8 values, so it
 *   is part of the int8 error measured below on whichever CPU runs the test, alone and batched alike.
 * - The float ops (dequantize, softmax, LayerNorm, GELU) add ~1e-6: negligible here.
 * So with f = fp32, a = alone, b = batched (all measured in this run, on this CPU's kernel path):
 *   |b - a| <= |b - f| + |a - f| <= ρ E + E = (1 + ρ) E,   E = max over the pairs of |a - f|
 * (E also holds the weight rounding, which b and a share, so this over-estimates; fine for a bound).
 * ρ: these activations are LayerNorm outputs, attention averages of them and GELU outputs: near-
 * Gaussian, and the expected range of n such values grows like sqrt(2 ln n). One pair's tensor holds
 * ~500-2,500 values (8-40 tokens x hidden 64), the batch's at most ~40,000 (13 rows x the longest), so
 * ρ ~ sqrt(ln 40000 / ln 500) = 1.3; even a tensor of a million values next to one of 500 gives 1.5.
 * ρ = 2 covers that with room: tolerance = 3 E. For scale: the pairs' fp32 probabilities differ by
 * ~0.05, twenty times E, and a leaking attention mask moves a padded row by far more (checked below),
 * so the bound still tells a correct batch from a wrong one.
 */
const RHO = 2;
const int8Tolerance = (alone: NliProbs[], fp32: NliProbs[]): number => (1 + RHO) * Math.max(...alone.map((p, i) => maxDiff(p, fp32[i])));

describe('q8 random RoBERTa (MatMulInteger / DynamicQuantizeLinear)', () => {
  let dir: string;
  let manifest: RandomModelManifest;
  let fp32: NliRunner;
  let batched: NliRunner;
  let single: NliRunner;
  const pairs = [...SAMPLE_PAIRS, { premise: `${SAMPLE_PAIRS[2].premise} ${SAMPLE_PAIRS[6].premise}`, hypothesis: 'The city is Seattle.' }];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'todeval-q8-'));
    buildRandomRoberta({ outDir: dir, size: 'tiny', seed: SEED, std: STD, tokenizerDir: TOKENIZER_DIR });
    manifest = buildRandomRoberta({ outDir: dir, size: 'tiny', seed: SEED, std: STD, dtype: 'q8', tokenizerDir: TOKENIZER_DIR });
    fp32 = await createNliRunner({ model: dir, dtype: 'fp32', device: 'cpu', threads: 1, maxPadFraction: 1, notice: quiet });
    batched = await createNliRunner({ model: dir, dtype: 'q8', device: 'cpu', threads: 1, maxPadFraction: 1, notice: quiet });
    single = await createNliRunner({ model: dir, dtype: 'q8', device: 'cpu', threads: 1, maxBatchSize: 1, notice: quiet });
  });
  afterAll(async () => {
    await Promise.all([fp32?.close(), batched?.close(), single?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is written as the hub names it, a quarter of the fp32 file, and picked by --dtype q8 only', () => {
    expect(manifest).toMatchObject({ dtype: 'q8', onnxFile: 'onnx/model_quantized.onnx', seed: SEED });
    const q8Bytes = readFileSync(path.join(dir, 'onnx', 'model_quantized.onnx')).length;
    const fp32Bytes = readFileSync(path.join(dir, 'onnx', 'model.onnx')).length;
    // Every weight is int8 except biases and LayerNorm parameters (+ a scale per column).
    expect(q8Bytes / fp32Bytes).toBeGreaterThan(0.24);
    expect(q8Bytes / fp32Bytes).toBeLessThan(0.27);
    expect(resolveModel(dir, 'q8').onnxPath).toBe(path.join(dir, 'onnx', 'model_quantized.onnx'));
    expect(resolveModel(dir, 'q8').signature.dtype).toBe('q8');
    expect(resolveModel(dir).onnxPath).toBe(path.join(dir, 'onnx', 'model.onnx'));
    expect(batched.modelSignature.dtype).toBe('q8');
    expect(fp32.modelSignature.dtype).toBe('fp32');
    expect(batched.cacheKey).not.toBe(fp32.cacheKey);
  });

  let alone: NliProbs[];
  let reference: NliProbs[];

  it('stays close to fp32 and agrees on the label wherever fp32 is clear, yet is a different computation', async () => {
    alone = [];
    for (const p of pairs) alone.push(await single.scoreOne(p));
    reference = await fp32.score(pairs);
    const diffs = alone.map((p, i) => maxDiff(p, reference[i]));
    const worst = Math.max(...diffs);
    // Integer arithmetic really ran: an fp32 graph under a q8 name would give zero difference.
    expect(worst).toBeGreaterThan(1e-4);
    // Small next to the probabilities themselves (about 1/3 each at this size).
    expect(worst).toBeLessThan(0.05);
    // Where fp32's top label leads by more than int8 can move two probabilities, q8 keeps it.
    const margin = (p: NliProbs): number => {
      const [a, b] = [p.entailment, p.neutral, p.contradiction].sort((x, y) => y - x);
      return a - b;
    };
    const clear = pairs.map((_, i) => i).filter((i) => margin(reference[i]) > 2 * worst);
    expect(clear.length).toBeGreaterThan(0);
    for (const i of clear) expect(argmaxLabel(alone[i])).toBe(argmaxLabel(reference[i]));
  });

  it('batched equals one-at-a-time within the int8 tolerance, and the pairs differ by more than it', async () => {
    const tolerance = int8Tolerance(alone, reference);
    const many = await batched.score(pairs);
    expect(batched.stats().batches).toBe(1);
    for (let i = 0; i < pairs.length; i++) expect(maxDiff(many[i], alone[i])).toBeLessThan(tolerance);
    const spread = Math.max(...reference.map((o) => maxDiff(o, reference[0])));
    expect(spread).toBeGreaterThan(tolerance);
  });

  it('a leaking attention mask moves a padded pair by more than that tolerance (the check above can fail)', async () => {
    const session = await ort.InferenceSession.create(path.join(dir, manifest.onnxFile), { intraOpNumThreads: 1 });
    const probs = async (rows: number[][], leak: boolean): Promise<number[][]> => {
      const width = Math.max(...rows.map((r) => r.length));
      const ids = rows.flatMap((r) => [...r, ...Array(width - r.length).fill(1)]);
      const mask = rows.flatMap((r) => [...r.map(() => 1), ...Array(width - r.length).fill(leak ? 1 : 0)]);
      const t = (v: number[]) => new ort.Tensor('int64', BigInt64Array.from(v.map(BigInt)), [rows.length, width]);
      const logits = (await session.run({ input_ids: t(ids), attention_mask: t(mask) })).logits.data as Float32Array;
      return rows.map((_, i) => {
        const e = Array.from(logits.subarray(i * 3, i * 3 + 3), Math.exp);
        return e.map((v) => v / (e[0] + e[1] + e[2]));
      });
    };
    // <s> ... </s> with ordinary BPE ids: a short row next to one 90 tokens longer.
    const short = [0, 133, 2335, 16, 11, 5, 1312, 4, 2];
    const long = [0, ...Array.from({ length: 97 }, (_, i) => 20 + ((i * 613) % 5000)), 2];
    const [shortAlone] = await probs([short], false);
    const [masked] = await probs([short, long], false);
    const [leaked] = await probs([short, long], true);
    const diff = (a: number[], b: number[]) => Math.max(...a.map((v, i) => Math.abs(v - b[i])));
    const tolerance = int8Tolerance(alone, reference);
    expect(diff(masked, shortAlone)).toBeLessThan(tolerance);
    expect(diff(leaked, shortAlone)).toBeGreaterThan(tolerance);
    await session.release();
  });

  it('npm run model:random -- --dtype q8 (or int8) writes the same file; an unknown dtype is one line, exit 2', async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'todeval-q8-script-'));
    try {
      const script = path.join('scripts', 'build-random-roberta.ts');
      const common = ['--size', 'tiny', '--seed', String(SEED), '--std', String(STD), '--tokenizer-dir', TOKENIZER_DIR];
      const r = await runTsx([script, ...common, '--dtype', 'int8', '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      const written = JSON.parse(readFileSync(path.join(out, 'random-model.json'), 'utf8')) as RandomModelManifest;
      expect(written).toMatchObject({ dtype: 'q8', onnxFile: 'onnx/model_quantized.onnx', sha256: manifest.sha256 });
      const bad = await runTsx([script, ...common, '--dtype', 'int4', '--out', out]);
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toContain('--dtype');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('loads through the CLI: todeval nli --model DIR --dtype q8 (and the int8 alias)', async () => {
    const [expected] = await single.score([SAMPLE_PAIRS[0]]);
    for (const dtype of ['q8', 'int8']) {
      const r = await runCli(['nli', SAMPLE_PAIRS[0].premise, SAMPLE_PAIRS[0].hypothesis, '--model', dir, '--dtype', dtype, '--device', 'cpu', '--threads', '1', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as NliProbs & { signature: { dtype: string } };
      expect(out.signature.dtype).toBe('q8');
      expect(maxDiff(out, expected)).toBeLessThan(1e-6);
    }
  });
});
