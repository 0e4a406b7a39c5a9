import { createHash } from 'node:crypto';
import { DataType, graphProto, modelProto, nodeProto, tensorProto, valueInfoProto } from './onnx-builder/onnx-proto.js';
import { messageToBytes } from './onnx-builder/protobuf.js';
import { ort } from './ort.js';

/**
 * Which float kernels onnxruntime runs on this CPU, named by what they compute. The q8-row graph's
 * integer sums are exact everywhere, but its float steps (the attention MatMuls, Exp, Erf, Tanh)
 * run MLAS kernels picked by instruction set at run time, and CPUs without FMA round a*b + c twice
 * where FMA rounds once: measured under qemu (docs/nli.md, "q8 across CPUs"), AVX-512 and AVX2+FMA
 * give the same bits for every one of those ops, SSE4.2 and AVX without FMA give other bits
 * (both the same), and one last-bit difference before a row quantization can move a whole step.
 * So q8-row signatures carry the class, and `compare` refuses scores from two classes.
 *
 * The class is measured, not read from CPU flags: a virtual machine or an emulator can report flags
 * that are not what runs (qemu-user passes the host's /proc/cpuinfo through), and what matters is
 * what the kernels give. The probe is a small graph of those ops on fixed inputs; its output bytes
 * are hashed and the known hashes named. A hash not listed (another onnxruntime version, an ARM
 * CPU) is named by the hash itself: still a class of its own, so nothing compares across it.
 */
export const KNOWN_KERNEL_CLASSES: Readonly<Record<string, string>> = {
  // onnxruntime-node 1.x as pinned in package.json; measured natively (AVX-512 VNNI) and under
  // qemu-x86_64 -cpu Haswell (AVX2+FMA): the same bytes. test/q8-cross-cpu.test.ts checks both.
  '201dcd843645': 'fma',
  // qemu-x86_64 -cpu Nehalem (SSE4.2) and -cpu SandyBridge (AVX without FMA): the same bytes.
  '4577faebfb3f': 'no-fma',
};

const ROWS = 8;
const COLS = 40;

/** Fixed probe inputs in [-4, 4): an LCG, so the same on every machine and in every version of Node. */
function probeInput(): Float32Array {
  let s = 20261127;
  return Float32Array.from({ length: ROWS * COLS }, () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s / 2 ** 32 - 0.5) * 8;
  });
}

/**
 * The probe graph: each float op of the q8-row graph whose CPU kernel may depend on the instruction
 * set, on one input x [8, 40]: Exp, Erf (inside the GELU pattern that onnxruntime fuses, as it does
 * in the model), Tanh, LayerNormalization, x x^T (an SGEMM along 40, as the attention MatMuls are)
 * and x times a column of ones (the row-scheme softmax's sum).
 */
export function kernelProbeBytes(): Uint8Array {
  const f32 = (name: string, dims: number[], values: number[]) => tensorProto(name, DataType.FLOAT, dims, new Uint8Array(Float32Array.from(values).buffer));
  const n = (op: string, inputs: string[], out: string, attrs = {}) => nodeProto(op, inputs, [out], `probe_${out}`, attrs);
  const outputs = ['exp', 'gelu', 'tanh', 'ln', 'gram', 'rowsum'];
  const graph = graphProto({
    name: 'todeval_kernel_probe',
    nodes: [
      n('Exp', ['x'], 'exp'),
      n('Mul', ['x', 'inv_sqrt2'], 'scaled'),
      n('Erf', ['scaled'], 'erf'),
      n('Add', ['erf', 'one'], 'erf1'),
      n('Mul', ['x', 'erf1'], 'xerf1'),
      n('Mul', ['xerf1', 'half'], 'gelu'),
      n('Tanh', ['x'], 'tanh'),
      n('LayerNormalization', ['x', 'gamma', 'beta'], 'ln', { axis: -1, epsilon: { float: 1e-5 } }),
      n('Transpose', ['x'], 'xt', { perm: [1, 0] }),
      n('MatMul', ['x', 'xt'], 'gram'),
      n('MatMul', ['x', 'ones'], 'rowsum'),
    ],
    initializers: [
      f32('inv_sqrt2', [], [Math.SQRT1_2]),
      f32('one', [], [1]),
      f32('half', [], [0.5]),
      f32('gamma', [COLS], Array.from({ length: COLS }, (_, i) => 0.5 + i / COLS)),
      f32('beta', [COLS], Array.from({ length: COLS }, (_, i) => (i - COLS / 2) / 100)),
      f32('ones', [COLS, 1], Array(COLS).fill(1)),
    ],
    inputs: [valueInfoProto('x', DataType.FLOAT, [ROWS, COLS])],
    outputs: outputs.map((o) => valueInfoProto(o, DataType.FLOAT, [])),
  });
  return messageToBytes(modelProto(graph, { name: 'todeval-kernel-probe', version: '1' }));
}

/** The first 12 hex digits of the sha256 of the probe's outputs, in order, as onnxruntime computes them on this CPU. */
export async function kernelProbeHash(): Promise<string> {
  const session = await ort().InferenceSession.create(kernelProbeBytes(), { executionProviders: ['cpu'], intraOpNumThreads: 1, logSeverityLevel: 3 });
  try {
    const out = await session.run({ x: new (ort().Tensor)('float32', probeInput(), [ROWS, COLS]) });
    const hash = createHash('sha256');
    for (const name of session.outputNames) {
      const d = out[name].data as Float32Array;
      hash.update(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
    }
    return hash.digest('hex').slice(0, 12);
  } finally {
    await session.release();
  }
}

/** A probe hash's class: its name where known, else `probe-<hash>`. */
export function kernelClassOf(hash: string): string {
  return KNOWN_KERNEL_CLASSES[hash] ?? `probe-${hash}`;
}

let measured: Promise<string> | undefined;

/** This process's CPU kernel class (the probe runs once, ~10 ms). */
export function cpuKernelClass(): Promise<string> {
  measured ??= kernelProbeHash().then(kernelClassOf);
  return measured;
}
