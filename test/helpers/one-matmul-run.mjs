/**
 * Runs the one-MatMul files (test/helpers/one-matmul.ts) on the input X.json holds ({ k, x }: the
 * rows of oneMatMulInput(), written by the test) and prints their outputs as JSON: run directly, or
 * under `qemu-x86_64 -cpu Haswell` so that onnxruntime sees an AVX2 CPU without AVX-512 or VNNI.
 *
 *   node test/helpers/one-matmul-run.mjs X.json FILE...
 *
 * Plain JavaScript, not TypeScript through tsx: tsx's transform under emulation costs about 12 s a
 * run. The float32 inputs survive JSON exactly (each is a double that JSON writes in full).
 */
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';

const [input, ...files] = process.argv.slice(2);
/** @type {{ k: number; x: number[] }} */
const { k, x: values } = JSON.parse(readFileSync(input, 'utf8'));
const x = Float32Array.from(values);
/** @type {Record<string, number[]>} */
const out = {};
for (const file of files) {
  const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1 });
  const y = /** @type {Float32Array} */ ((await session.run({ x: new ort.Tensor('float32', x, [x.length / k, k]) })).y.data);
  out[file] = Array.from(y);
  await session.release();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
