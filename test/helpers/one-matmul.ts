import path from 'node:path';
import { DataType, graphProto, modelProto, nodeProto, tensorProto, valueInfoProto } from '../../src/nli/onnx-builder/onnx-proto.js';
import { writeMessageToFile } from '../../src/nli/onnx-builder/protobuf.js';
import { quantizePerColumn, roundHalfEven } from '../../src/nli/onnx-builder/int8.js';
import { quantizeOnnxFile, ROW_ACTIVATION_QMAX, ROW_MIN_AMAX, ROW_ZERO_POINT } from '../../src/nli/onnx-builder/quantize.js';

/**
 * One Linear layer, y = x W with W [K, N], as an fp32 ONNX file, and the same rewritten by the q8
 * quantizer: the smallest model on which the row scheme's arithmetic can be checked bit for bit
 * against a plain reference, including the worst case for int16 pair sums.
 */
export const ONE_MATMUL = { k: 64, n: 4 } as const;

/** Column 0 all +1 (quantizes to +qmax everywhere: the largest pair sums), 1 alternating, 2 varied, 3 all zero. */
export function oneMatMulWeight(): Float32Array {
  const { k, n } = ONE_MATMUL;
  const w = new Float32Array(k * n);
  for (let i = 0; i < k; i++) {
    w[i * n] = 1;
    w[i * n + 1] = i % 2 === 0 ? 0.5 : -0.5;
    w[i * n + 2] = Math.fround(Math.sin(i * 12.9898) * 0.3);
    w[i * n + 3] = 0;
  }
  return w;
}

/**
 * Rows: all +1 (every activation 255, so each pair on column 0 is 2 * 255 * max|w|: 64770 with 8-bit
 * weights, past int16), all -1, all zero (a padding-like row: must give 0, not NaN), and two varied.
 */
export function oneMatMulInput(): Float32Array {
  const { k } = ONE_MATMUL;
  const rows = [
    () => 1,
    () => -1,
    () => 0,
    (i: number) => Math.fround(Math.cos(i * 0.7) * 3),
    (i: number) => Math.fround(((i * 37) % 11) - 5 + 0.25),
  ];
  return Float32Array.from({ length: rows.length * k }, (_, j) => rows[Math.floor(j / k)](j % k));
}

/** Writes the fp32 file alone (the model the q8 files below are built from). */
export function writeOneMatMulFp32(file: string): void {
  const { k, n } = ONE_MATMUL;
  const graph = graphProto({
    name: 'one_matmul',
    nodes: [nodeProto('MatMul', ['x', 'W'], ['y'], 'linear')],
    initializers: [tensorProto('W', DataType.FLOAT, [k, n], new Uint8Array(oneMatMulWeight().buffer))],
    inputs: [valueInfoProto('x', DataType.FLOAT, ['batch', k])],
    outputs: [valueInfoProto('y', DataType.FLOAT, ['batch', n])],
  });
  writeMessageToFile(modelProto(graph, { name: 'todeval-test', version: '1' }), file);
}

/** Writes fp32.onnx, q8_row.onnx (7-bit weights) and q8_row_w8.onnx (the same scheme with 8-bit weights) into dir. */
export function oneMatMulFiles(dir: string): { fp32: string; row: string; row8: string } {
  const files = { fp32: path.join(dir, 'fp32.onnx'), row: path.join(dir, 'q8_row.onnx'), row8: path.join(dir, 'q8_row_w8.onnx') };
  writeOneMatMulFp32(files.fp32);
  quantizeOnnxFile(files.fp32, files.row, 'row');
  quantizeOnnxFile(files.fp32, files.row8, 'row', { weightQmax: 127 });
  return files;
}

/**
 * The row scheme computed plainly: float32 steps with Math.fround (a double result rounded to
 * float32 is the correctly rounded float32 result for one division or product), integer sums exact:
 * s = max|x| / 127 and inv = 127 / max|x| per row, x_u8 = round(x inv) + 128, y = (sum * w_scale) * s.
 */
export function rowReference(x: Float32Array, weightQmax: number): Float32Array {
  const { k, n } = ONE_MATMUL;
  const { values, scales } = quantizePerColumn(oneMatMulWeight(), k, n, weightQmax);
  const rows = x.length / k;
  const y = new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) {
    const row = x.subarray(r * k, (r + 1) * k);
    let amax = 0;
    for (const v of row) amax = Math.max(amax, Math.abs(v));
    const floor = Math.max(amax, ROW_MIN_AMAX);
    const s = Math.fround(floor / ROW_ACTIVATION_QMAX);
    const inv = Math.fround(ROW_ACTIVATION_QMAX / floor);
    const q = Array.from(row, (v) => Math.min(255, Math.max(0, roundHalfEven(Math.fround(v * inv)) + ROW_ZERO_POINT)));
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let i = 0; i < k; i++) sum += (q[i] - ROW_ZERO_POINT) * values[i * n + j];
      y[r * n + j] = Math.fround(Math.fround(Math.fround(sum) * scales[j]) * s);
    }
  }
  return y;
}
