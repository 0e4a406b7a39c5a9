/**
 * Runs an NLI ONNX file on encoded pairs, one pair at a time, and prints the kernel probe hash and
 * each pair's logits as float32 bit patterns (hex), as JSON: run directly, or under
 * `qemu-x86_64 -cpu Haswell|Nehalem` so that onnxruntime picks that CPU's kernels.
 *
 *   node test/helpers/q8-pairs-run.mjs MODEL.onnx IDS.json    (IDS.json: number[][])
 *
 * Plain JavaScript over the built dist/ (the tests' globalSetup builds it) rather than TypeScript
 * through tsx: under qemu's emulation tsx's transform at start costs about 12 s a run.
 */
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';
import { kernelProbeHash } from '../../dist/src/nli/cpu-kernels.js';

const [file, idsFile] = process.argv.slice(2);
/** @type {number[][]} */
const rows = JSON.parse(readFileSync(idsFile, 'utf8'));
const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1 });
const logits = [];
for (const ids of rows) {
  const t = (/** @type {number[]} */ v) => new ort.Tensor('int64', BigInt64Array.from(v.map(BigInt)), [1, v.length]);
  const y = /** @type {Float32Array} */ ((await session.run({ input_ids: t(ids), attention_mask: t(ids.map(() => 1)) })).logits.data);
  logits.push(Buffer.from(y.buffer, y.byteOffset, y.byteLength).toString('hex'));
}
await session.release();
process.stdout.write(`${JSON.stringify({ probe: await kernelProbeHash(), logits })}\n`);
