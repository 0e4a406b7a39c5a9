import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRandomRoberta, type RandomModelManifest } from '../src/nli/onnx-builder/index.js';
import { INT7_QMAX, quantizePerColumn, quantizePerTensor, roundHalfEven } from '../src/nli/onnx-builder/int8.js';
import { INT16_MAX, INT32_MAX, matMulIntegerBoundsOfFile, opTypeCountsOfFile } from '../src/nli/onnx-builder/q8-audit.js';
import { readFileMetadata } from '../src/nli/onnx-builder/onnx-reader.js';
import { Q8_ROW_GRAPH, Q8_ROW_GRAPH_KEY, Q8_SCHEME_KEY, quantizeOnnxFile } from '../src/nli/onnx-builder/quantize.js';
import { cpuKernelClass } from '../src/nli/cpu-kernels.js';
import { buildQ8 } from '../src/nli/q8-build.js';
import { formatDoctor, runDoctor } from '../src/nli/cuda/doctor.js';
import { oneMatMulFiles, rowReference, ONE_MATMUL } from './helpers/one-matmul.js';
import { resolveModel } from '../src/nli/model-store.js';
import { createNliRunner, type NliRunner } from '../src/nli/runner.js';
import { argmaxLabel, type NliProbs } from '../src/nli/types.js';
import { runCli, runProcess, runTsx } from './helpers/cli.js';
import { REPO_ROOT, TOKENIZER_DIR } from './helpers/shared.js';
import { SAMPLE_PAIRS } from './nli-fixtures.js';

describe('int8 weight quantization (symmetric, per output column)', () => {
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

  it('7-bit (the row scheme): max |w| / 63, every value within +-63', () => {
    const w = Float32Array.from([1, -0.5, -2, 0.25, 0.0157, 0.5]);
    const { values, scales } = quantizePerColumn(w, 3, 2, INT7_QMAX);
    expect(Array.from(scales)).toEqual([Math.fround(2 / 63), Math.fround(0.5 / 63)]);
    // 1 / (2/63) = 31.5 -> 32 (half to even, after float32 rounding of the scale); 0.25 / (0.5/63) = 31.5 -> 32.
    expect(Array.from(values).map(Math.abs).every((v) => v <= 63)).toBe(true);
    expect([values[1], values[2], values[5]]).toEqual([-63, -63, 63]);
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


const quiet = () => {};

function maxDiff(a: NliProbs, b: NliProbs): number {
  return Math.max(Math.abs(a.entailment - b.entailment), Math.abs(a.neutral - b.neutral), Math.abs(a.contradiction - b.contradiction));
}

/** Every probability bit-identical (Object.is: +0 and -0 would differ too). */
function expectIdentical(a: NliProbs, b: NliProbs, what: string): void {
  for (const k of ['entailment', 'neutral', 'contradiction'] as const) expect(Object.is(a[k], b[k]), `${what}: ${k} ${a[k]} vs ${b[k]}`).toBe(true);
}

// qemu-user's TCG emulates an AVX2 CPU with no AVX-512 and no VNNI (-cpu Haswell): onnxruntime's
// MLAS then takes its AVX2 u8s8 kernel, whose vpmaddubsw adds pairs of products in saturating int16.
const qemu = await (async () => {
  const r = await runProcess('sh', ['-c', 'command -v qemu-x86_64']);
  return (r.code === 0 && r.stdout.trim()) || undefined;
})();

describe('the row scheme on one Linear layer: exact against a plain reference, worst case included', () => {
  let dir: string;
  let files: ReturnType<typeof oneMatMulFiles>;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'todeval-q8-one-'));
    files = oneMatMulFiles(dir);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const run = async (file: string, x: Float32Array): Promise<Float32Array> => {
    const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1 });
    try {
      return (await session.run({ x: new ort.Tensor('float32', x, [x.length / ONE_MATMUL.k, ONE_MATMUL.k]) })).y.data as Float32Array;
    } finally {
      await session.release();
    }
  };

  it('gives the reference bit for bit; an all-zero row gives 0, not NaN; each row alone gives the same bits', async () => {
    const { oneMatMulInput } = await import('./helpers/one-matmul.js');
    const x = oneMatMulInput();
    const y = await run(files.row, x);
    const ref = rowReference(x, INT7_QMAX);
    expect(Array.from(y)).toEqual(Array.from(ref));
    expect(Array.from(y.subarray(2 * ONE_MATMUL.n, 3 * ONE_MATMUL.n))).toEqual([0, 0, 0, 0]);
    // Column 0 of the all-+1 row: 64 products of 127 (the activation) and 63 (the weight), rescaled.
    expect(y[0]).toBeCloseTo(64, 4);
    for (let r = 0; r < x.length / ONE_MATMUL.k; r++) {
      const alone = await run(files.row, x.slice(r * ONE_MATMUL.k, (r + 1) * ONE_MATMUL.k));
      expect(Array.from(alone)).toEqual(Array.from(y.subarray(r * ONE_MATMUL.n, (r + 1) * ONE_MATMUL.n)));
    }
    // The reference is not blind: 8-bit weights give other numbers (on this CPU, exact too, where VNNI sums in int32).
    expect(Array.from(rowReference(x, 127))).not.toEqual(Array.from(ref));
  });

  it.skipIf(!qemu)('on an emulated AVX2-only CPU (qemu-x86_64 -cpu Haswell): 7-bit weights exact, 8-bit weights saturate', async () => {
    // Plain JavaScript under the emulation (tsx's transform there costs ~12 s); it gets the input as a file.
    const script = path.join(REPO_ROOT, 'test', 'helpers', 'one-matmul-run.mjs');
    const { oneMatMulInput } = await import('./helpers/one-matmul.js');
    const x = oneMatMulInput();
    const input = path.join(dir, 'x.json');
    writeFileSync(input, JSON.stringify({ k: ONE_MATMUL.k, x: Array.from(x) }));
    const { stdout } = await promisify(execFile)(qemu!, ['-cpu', 'Haswell', process.execPath, script, input, files.row, files.row8], {
      cwd: REPO_ROOT,
      timeout: 240_000,
      maxBuffer: 1 << 24,
    });
    const out = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number[]>;
    expect(out[files.row]).toEqual(Array.from(rowReference(x, INT7_QMAX)));
    // The emulation really runs the saturating path: with 8-bit weights the all-+1 row's column 0
    // (pairs of 2 * 255 * 127 = 64770) comes out wrong there (on a VNNI host it is exact natively;
    // not asserted, as an AVX2-only host saturates natively too).
    expect(out[files.row8]).not.toEqual(Array.from(rowReference(x, 127)));
  }, 300_000);
});

/**
 * A tiny model with std-0.1 weights (pairs get different probabilities, attention is not yet one-hot)
 * and its q8 files built next to the fp32 one, as `npm run model:random -- --dtype q8` writes them.
 * At std 0.3 (test/nli-fixtures.ts) attention is nearly one-hot, int8 noise flips which token a head
 * attends to, and q8 is no longer an approximation of fp32 at all (logits move by ~1.5).
 */
const SEED = 11;
const STD = 0.1;

describe('q8 random RoBERTa: activations per row, 7-bit weights (QuantizeLinear / MatMulInteger)', () => {
  let dir: string;
  let manifest: RandomModelManifest;
  let tensorManifest: RandomModelManifest;
  let fp32: NliRunner;
  let batched: NliRunner;
  let single: NliRunner;
  let tensorBatched: NliRunner;
  let tensorSingle: NliRunner;
  const long = { premise: `${SAMPLE_PAIRS[2].premise} ${SAMPLE_PAIRS[6].premise} ${SAMPLE_PAIRS[4].premise}`, hypothesis: `${SAMPLE_PAIRS[1].premise} The city is Seattle.` };
  const pairs = [...SAMPLE_PAIRS, { premise: `${SAMPLE_PAIRS[2].premise} ${SAMPLE_PAIRS[6].premise}`, hypothesis: 'The city is Seattle.' }];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'todeval-q8-'));
    buildRandomRoberta({ outDir: dir, size: 'tiny', seed: SEED, std: STD, tokenizerDir: TOKENIZER_DIR });
    tensorManifest = buildRandomRoberta({ outDir: dir, size: 'tiny', seed: SEED, std: STD, dtype: 'q8-tensor', tokenizerDir: TOKENIZER_DIR });
    manifest = buildRandomRoberta({ outDir: dir, size: 'tiny', seed: SEED, std: STD, dtype: 'q8', tokenizerDir: TOKENIZER_DIR });
    const open = (dtype: 'fp32' | 'q8' | 'q8-tensor', one: boolean) =>
      createNliRunner({ model: dir, dtype, device: 'cpu', threads: 1, maxPadFraction: 1, ...(one ? { maxBatchSize: 1 } : {}), notice: quiet });
    [fp32, batched, single, tensorBatched, tensorSingle] = await Promise.all([open('fp32', false), open('q8', false), open('q8', true), open('q8-tensor', false), open('q8-tensor', true)]);
  });
  afterAll(async () => {
    await Promise.all([fp32?.close(), batched?.close(), single?.close(), tensorBatched?.close(), tensorSingle?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is written beside fp32 as onnx/model_q8_row.onnx, a quarter of its size, named q8-row2 in signatures with the CPU kernel class', async () => {
    expect(manifest).toMatchObject({ dtype: 'q8', onnxFile: 'onnx/model_q8_row.onnx', seed: SEED });
    expect(tensorManifest).toMatchObject({ dtype: 'q8-tensor', onnxFile: 'onnx/model_quantized.onnx' });
    const q8Bytes = readFileSync(path.join(dir, 'onnx', 'model_q8_row.onnx')).length;
    const fp32Bytes = readFileSync(path.join(dir, 'onnx', 'model.onnx')).length;
    // Every weight is int8 except biases and LayerNorm parameters (+ a scale per column).
    expect(q8Bytes / fp32Bytes).toBeGreaterThan(0.24);
    expect(q8Bytes / fp32Bytes).toBeLessThan(0.27);
    const meta = readFileMetadata(path.join(dir, 'onnx', 'model_q8_row.onnx'));
    expect(meta.get(Q8_SCHEME_KEY)).toBe('row');
    expect(meta.get(Q8_ROW_GRAPH_KEY)).toBe(String(Q8_ROW_GRAPH));
    expect(resolveModel(dir, 'q8').onnxPath).toBe(path.join(dir, 'onnx', 'model_q8_row.onnx'));
    expect(resolveModel(dir, 'q8').signature.dtype).toBe('q8-row2');
    expect(resolveModel(dir, 'q8-tensor').onnxPath).toBe(path.join(dir, 'onnx', 'model_quantized.onnx'));
    expect(resolveModel(dir, 'q8-tensor').signature.dtype).toBe('q8-tensor');
    expect(resolveModel(dir).onnxPath).toBe(path.join(dir, 'onnx', 'model.onnx'));
    expect(batched.modelSignature.dtype).toBe('q8-row2');
    expect(tensorBatched.modelSignature.dtype).toBe('q8-tensor');
    expect(fp32.modelSignature.dtype).toBe('fp32');
    // Only q8-row2 carries the kernel class: the one this CPU's probe measures.
    expect(batched.modelSignature.kernels).toBe(await cpuKernelClass());
    expect(batched.modelSignature.kernels).toMatch(/^(fma|no-fma|probe-[0-9a-f]{12})$/);
    expect(tensorBatched.modelSignature.kernels).toBeUndefined();
    expect(fp32.modelSignature.kernels).toBeUndefined();
    expect(new Set([batched.cacheKey, tensorBatched.cacheKey, fp32.cacheKey]).size).toBe(3);
  });

  it('--dtype q8 without the row file loads the per-tensor file, and its signature says q8-tensor', () => {
    const other = mkdtempSync(path.join(os.tmpdir(), 'todeval-q8-hubfile-'));
    try {
      mkdirSync(path.join(other, 'onnx'));
      for (const f of ['tokenizer.json', 'config.json']) copyFileSync(path.join(dir, f), path.join(other, f));
      copyFileSync(path.join(dir, 'onnx', 'model_quantized.onnx'), path.join(other, 'onnx', 'model_quantized.onnx'));
      const m = resolveModel(other, 'q8');
      expect(m.onnxPath).toBe(path.join(other, 'onnx', 'model_quantized.onnx'));
      expect(m.signature.dtype).toBe('q8-tensor');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('every integer MatMul of the file keeps u8 x s8 pair sums inside int16 and dot products inside int32 (the per-tensor file does not)', () => {
    const bounds = matMulIntegerBoundsOfFile(path.join(dir, 'onnx', 'model_q8_row.onnx'));
    const { sizes } = manifest;
    // Q, K, V, attention output, intermediate, output per layer; the classifier's dense and out_proj.
    expect(bounds).toHaveLength(6 * sizes.numLayers + 2);
    for (const b of bounds) {
      expect(b.activationFrom).toBe('QuantizeLinear');
      expect(b.activationType).toBe('uint8');
      expect(b.maxAbsWeight).toBeLessThanOrEqual(INT7_QMAX);
      expect(b.pairSum).toBeLessThanOrEqual(INT16_MAX);
      expect(b.dotSum).toBeLessThan(INT32_MAX);
    }
    // roberta-large's widest dot product (K = 4096) would still fit: 4096 * 255 * 63 = 65.8M < 2^31.
    expect(4096 * 255 * INT7_QMAX).toBeLessThan(INT32_MAX);
    const tensor = matMulIntegerBoundsOfFile(path.join(dir, 'onnx', 'model_quantized.onnx'));
    expect(tensor).toHaveLength(bounds.length);
    expect(Math.max(...tensor.map((b) => b.pairSum))).toBeGreaterThan(INT16_MAX);
  });

  it('writes each softmax out in primitive ops (q8-row2); the per-tensor file keeps onnxruntime\'s Softmax', () => {
    const row = opTypeCountsOfFile(path.join(dir, 'onnx', 'model_q8_row.onnx'));
    const layers = manifest.sizes.numLayers;
    expect(row.get('Softmax')).toBeUndefined();
    expect(row.get('Exp')).toBe(layers);
    // Per layer: the two attention MatMuls and the softmax's sum (a MatMul by a column of ones).
    expect(row.get('MatMul')).toBe(3 * layers);
    expect(row.get('Expand')).toBe(layers);
    const tensor = opTypeCountsOfFile(path.join(dir, 'onnx', 'model_quantized.onnx'));
    expect(tensor.get('Softmax')).toBe(layers);
    expect(tensor.get('Exp')).toBeUndefined();
  });

  it("drops GELU's final * 0.5 into the output dense's weight scales (one Mul and one pass over the widest activation fewer per layer) and changes no bit of any score", async () => {
    const other = mkdtempSync(path.join(os.tmpdir(), 'todeval-q8-nofold-'));
    let plain: NliRunner | undefined;
    let withFold: NliRunner | undefined;
    try {
      mkdirSync(path.join(other, 'onnx'));
      for (const f of ['tokenizer.json', 'tokenizer_config.json', 'config.json']) copyFileSync(path.join(dir, f), path.join(other, f));
      quantizeOnnxFile(path.join(dir, 'onnx', 'model.onnx'), path.join(other, 'onnx', 'model_q8_row.onnx'), 'row', { foldPowersOfTwo: false });
      const folded = opTypeCountsOfFile(path.join(dir, 'onnx', 'model_q8_row.onnx'));
      const unfolded = opTypeCountsOfFile(path.join(other, 'onnx', 'model_q8_row.onnx'));
      expect(unfolded.get('Mul')! - folded.get('Mul')!).toBe(manifest.sizes.numLayers);
      // Runners of their own: the suite's runners remember the pairs they scored, which later tests count on.
      const open = (model: string) => createNliRunner({ model, dtype: 'q8', device: 'cpu', threads: 1, maxPadFraction: 1, notice: quiet });
      [plain, withFold] = await Promise.all([open(other), open(dir)]);
      // One padded batch of short and long rows, then the long pair alone.
      const [a, b] = await Promise.all([plain.score(pairs), withFold.score(pairs)]);
      for (let i = 0; i < pairs.length; i++) expectIdentical(b[i], a[i], `pair ${i}`);
      expectIdentical(await withFold.scoreOne(long), await plain.scoreOne(long), 'the long pair');
    } finally {
      await Promise.all([plain?.close(), withFold?.close()]);
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('doctor says which q8 scheme a cached model holds: the hub\'s per-tensor file, then the per-row one once built', async () => {
    const cache = mkdtempSync(path.join(os.tmpdir(), 'todeval-q8-doctor-'));
    try {
      const snap = path.join(cache, 'models--Xenova--roberta-large-mnli', 'snapshots', 'a'.repeat(40));
      mkdirSync(path.join(snap, 'onnx'), { recursive: true });
      copyFileSync(path.join(dir, 'tokenizer.json'), path.join(snap, 'tokenizer.json'));
      copyFileSync(path.join(dir, 'onnx', 'model_quantized.onnx'), path.join(snap, 'onnx', 'model_quantized.onnx'));
      const env = { HF_HUB_CACHE: cache, PATH: process.env.PATH };
      const before = formatDoctor(await runDoctor({ device: 'cpu', env }));
      expect(before).toMatch(/only the hub's per-tensor int8 file \(signature q8-tensor\).*`todeval models quantize` builds the per-row one/);
      copyFileSync(path.join(dir, 'onnx', 'model_q8_row.onnx'), path.join(snap, 'onnx', 'model_q8_row.onnx'));
      const after = formatDoctor(await runDoctor({ device: 'cpu', env }));
      expect(after).toContain('per-row int8 (signature q8-row2)');
      expect(after).toMatch(new RegExp(`cpu kernels +${await cpuKernelClass()}: `));
      expect(after).not.toContain('only the hub');
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
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
    const margin = (p: NliProbs): number => {
      const [a, b] = [p.entailment, p.neutral, p.contradiction].sort((x, y) => y - x);
      return a - b;
    };
    const clear = pairs.map((_, i) => i).filter((i) => margin(reference[i]) > 2 * worst);
    expect(clear.length).toBeGreaterThan(0);
    for (const i of clear) expect(argmaxLabel(alone[i])).toBe(argmaxLabel(reference[i]));
  });

  it('batched equals one at a time exactly: pairs of different lengths in one padded batch', async () => {
    const lengths = new Set(pairs.map((p) => p.premise.length + p.hypothesis.length));
    expect(lengths.size).toBeGreaterThan(5);
    const before = batched.stats().batches;
    const many = await batched.score(pairs);
    expect(batched.stats().batches - before).toBe(1);
    for (let i = 0; i < pairs.length; i++) expectIdentical(many[i], alone[i], `pair ${i}`);
  });

  it('exactly the same alone, beside a pair of its own length (no padding), and among long pairs (much padding)', async () => {
    // Pairs neither runner has seen (each runner remembers the pairs it scored).
    const q = { premise: 'The hotel is cheap.', hypothesis: 'The price is low.' };
    const sameLength = { premise: 'The hotel is small.', hypothesis: 'The price is low.' };
    const r = { premise: 'The hotel is cheap.', hypothesis: 'The price is high.' };
    const qAlone = await single.scoreOne(q);
    const rAlone = await single.scoreOne(r);
    const s0 = batched.stats();
    const [qTwin] = await batched.score([q, sameLength], { separate: true });
    const s1 = batched.stats();
    expect(s1.batches - s0.batches).toBe(1);
    expect(s1.paddedTokens - s0.paddedTokens).toBe(s1.tokens - s0.tokens);
    expectIdentical(qTwin, qAlone, 'beside a pair of its own length');
    const longs = [long, { premise: long.hypothesis, hypothesis: long.premise }, { premise: `${long.premise} Again.`, hypothesis: long.hypothesis }];
    const mixed = await batched.score([...longs, r], { separate: true });
    const s2 = batched.stats();
    expect(s2.batches - s1.batches).toBe(1);
    expect(s2.paddedTokens - s1.paddedTokens).toBeGreaterThan(2 * (s2.tokens - s1.tokens) / 3);
    expectIdentical(mixed[3], rAlone, 'among long pairs');
  });

  it('the per-tensor file (q8-tensor) is not batch-invariant on the same pairs: the exact checks above can fail', async () => {
    const lone: NliProbs[] = [];
    for (const p of pairs) lone.push(await tensorSingle.scoreOne(p));
    const many = await tensorBatched.score(pairs);
    expect(Math.max(...many.map((m, i) => maxDiff(m, lone[i])))).toBeGreaterThan(0);
  });

  it('a leaking attention mask changes a padded pair, which the correct mask leaves bit-identical', async () => {
    const session = await ort.InferenceSession.create(path.join(dir, manifest.onnxFile), { intraOpNumThreads: 1 });
    const logits = async (rows: number[][], leak: boolean): Promise<number[][]> => {
      const width = Math.max(...rows.map((r) => r.length));
      const ids = rows.flatMap((r) => [...r, ...Array(width - r.length).fill(1)]);
      const mask = rows.flatMap((r) => [...r.map(() => 1), ...Array(width - r.length).fill(leak ? 1 : 0)]);
      const t = (v: number[]) => new ort.Tensor('int64', BigInt64Array.from(v.map(BigInt)), [rows.length, width]);
      const out = (await session.run({ input_ids: t(ids), attention_mask: t(mask) })).logits.data as Float32Array;
      return rows.map((_, i) => Array.from(out.subarray(i * 3, i * 3 + 3)));
    };
    try {
      // <s> ... </s> with ordinary BPE ids: a short row next to one 90 tokens longer.
      const short = [0, 133, 2335, 16, 11, 5, 1312, 4, 2];
      const longRow = [0, ...Array.from({ length: 97 }, (_, i) => 20 + ((i * 613) % 5000)), 2];
      const [shortAlone] = await logits([short], false);
      const [masked] = await logits([short, longRow], false);
      const [leaked] = await logits([short, longRow], true);
      expect(masked).toEqual(shortAlone);
      expect(Math.max(...leaked.map((v, i) => Math.abs(v - shortAlone[i])))).toBeGreaterThan(1e-3);
    } finally {
      await session.release();
    }
  });

  it('todeval models quantize builds the same bytes from the fp32 file as the random builder; npm run model:random -- --dtype q8 too', async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'todeval-q8-script-'));
    try {
      const viaLibrary = buildQ8(dir, path.join(out, 'lib.onnx'));
      expect(viaLibrary.sha256).toBe(manifest.sha256);
      const cli = await runCli(['models', 'quantize', '--model', dir, '-o', path.join(out, 'cli.onnx')]);
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toMatch(new RegExp(`sha256 ${manifest.sha256.slice(0, 12)}.*${6 * manifest.sizes.numLayers + 2} MatMuls, 3 embedding tables`));
      const script = path.join('scripts', 'build-random-roberta.ts');
      const common = ['--size', 'tiny', '--seed', String(SEED), '--std', String(STD), '--tokenizer-dir', TOKENIZER_DIR];
      const r = await runTsx([script, ...common, '--dtype', 'int8', '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      const written = JSON.parse(readFileSync(path.join(out, 'random-model.json'), 'utf8')) as RandomModelManifest;
      expect(written).toMatchObject({ dtype: 'q8', onnxFile: 'onnx/model_q8_row.onnx', sha256: manifest.sha256 });
      const bad = await runTsx([script, ...common, '--dtype', 'int4', '--out', out]);
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toContain('--dtype');
      const noModel = await runCli(['models', 'quantize', '--model', path.join(out, 'absent')]);
      expect(noModel.code).toBe(2);
      expect(noModel.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('loads through the CLI: todeval nli --model DIR --dtype q8 (and the int8 alias), signature dtype q8-row2 and the kernel class', async () => {
    const [expected] = await single.score([SAMPLE_PAIRS[0]]);
    for (const dtype of ['q8', 'int8']) {
      const r = await runCli(['nli', SAMPLE_PAIRS[0].premise, SAMPLE_PAIRS[0].hypothesis, '--model', dir, '--dtype', dtype, '--device', 'cpu', '--threads', '1', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as NliProbs & { signature: { dtype: string; kernels?: string } };
      expect(out.signature.dtype).toBe('q8-row2');
      expect(out.signature.kernels).toBe(await cpuKernelClass());
      expectIdentical(out, expected, `--dtype ${dtype}`);
    }
  });
});
