/**
 * Runs an NLI ONNX file on encoded pairs, one pair at a time, and prints the kernel probe hash and
 * each pair's logits as float32 bit patterns (hex), as JSON: run directly, or under
 * `qemu-x86_64 -cpu Haswell|Nehalem` so that onnxruntime picks that CPU's kernels.
 *
 *   node --import tsx test/helpers/q8-pairs-run.ts MODEL.onnx IDS.json    (IDS.json: number[][])
 */
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';
import { kernelProbeHash } from '../../src/nli/cpu-kernels.js';

const [file, idsFile] = process.argv.slice(2);
const rows = JSON.parse(readFileSync(idsFile, 'utf8')) as number[][];
const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 1 });
const logits: string[] = [];
for (const ids of rows) {
  const t = (v: number[]) => new ort.Tensor('int64', BigInt64Array.from(v.map(BigInt)), [1, v.length]);
  const y = (await session.run({ input_ids: t(ids), attention_mask: t(ids.map(() => 1)) })).logits.data as Float32Array;
  logits.push(Buffer.from(y.buffer, y.byteOffset, y.byteLength).toString('hex'));
}
await session.release();
process.stdout.write(`${JSON.stringify({ probe: await kernelProbeHash(), logits })}\n`);
