/**
 * Runs the one-MatMul files on oneMatMulInput() and prints their outputs as JSON: run directly, or
 * under `qemu-x86_64 -cpu Haswell` so that onnxruntime sees an AVX2 CPU without AVX-512 or VNNI.
 *
 *   node --import tsx test/helpers/one-matmul-run.ts FILE...
 */
import * as ort from 'onnxruntime-node';
import { ONE_MATMUL, oneMatMulInput } from './one-matmul.js';

const x = oneMatMulInput();
const out: Record<string, number[]> = {};
for (const file of process.argv.slice(2)) {
  const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1 });
  const y = (await session.run({ x: new ort.Tensor('float32', x, [x.length / ONE_MATMUL.k, ONE_MATMUL.k]) })).y.data as Float32Array;
  out[file] = Array.from(y);
  await session.release();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
