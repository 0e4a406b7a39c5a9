import { DataType, nodeProto, tensorProto, type AttrValue } from './onnx-proto.js';
import type { LazyBytes, MessageWriter } from './protobuf.js';
import { generateWeight, numel, type WeightInitOptions, type WeightSpec } from './roberta-weights.js';

/**
 * Dynamic int8 quantization, written as the graph onnxruntime's `quantize_dynamic` produces (and so
 * the structure of the hub's onnx/model_quantized.onnx): weights are stored as int8 and quantized
 * once here; activations are quantized to uint8 at run time, per tensor, by DynamicQuantizeLinear.
 *
 *   x -> DynamicQuantizeLinear -> (x_u8, x_scale, x_zp)
 *   MatMulInteger(x_u8, W_int8, x_zp, W_zp) -> Cast(float) -> Mul(x_scale * W_scale) -> y
 *
 * ORT fuses that chain into one DynamicQuantizeMatMul kernel at load (u8 x s8 dot products: VNNI
 * on CPUs that have it). Embedding tables become int8 Gathers followed by DequantizeLinear, as
 * ORT's Gather quantization writes them. Attention's activation x activation MatMuls stay float32
 * (quantize_dynamic's MatMulConstBOnly default).
 */

/** The part of the graph builder the quantized ops need: fresh value names and somewhere to put nodes and tensors. */
export interface GraphSink {
  readonly nodes: MessageWriter[];
  readonly initializers: MessageWriter[];
  op(opType: string, inputs: string[], attrs?: Record<string, AttrValue>, hint?: string): string;
}

/**
 * Symmetric int8 range without -128, as ORT uses for symmetric int8 weights: scale = max|w| / 127
 * keeps 0 exact and the grid the same on both sides.
 */
export const INT8_QMAX = 127;

/** Round half to even, as numpy's rint (and so ORT's Python quantizer) rounds. */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  // Math.round sends .5 up; at an exact tie step back to the even neighbour.
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

function quantizeValue(v: number, scale: number): number {
  const q = roundHalfEven(v / scale);
  return q > INT8_QMAX ? INT8_QMAX : q < -INT8_QMAX ? -INT8_QMAX : q;
}

/** An all-zero tensor gets scale 1, so the division is defined and every value quantizes to 0. */
function scaleOf(amax: number): number {
  return amax > 0 ? Math.fround(amax / INT8_QMAX) : 1;
}

export interface Int8PerColumn {
  values: Int8Array;
  /** One float32 scale per output column: w[i][j] ~ values[i][j] * scales[j]. */
  scales: Float32Array;
}

/**
 * Per output column (per channel) symmetric int8 of a [rows, cols] row-major matrix, the MatMul
 * weight layout [in, out]: each column (one output feature) gets its own scale, so a column of small
 * weights is not flattened to zero by one large weight elsewhere in the matrix.
 */
export function quantizePerColumn(w: Float32Array, rows: number, cols: number): Int8PerColumn {
  if (w.length !== rows * cols) throw new Error(`matrix of ${w.length} values is not ${rows} x ${cols}`);
  const amax = new Float64Array(cols);
  for (let i = 0; i < rows; i++) {
    const row = i * cols;
    for (let j = 0; j < cols; j++) {
      const a = Math.abs(w[row + j]);
      if (a > amax[j]) amax[j] = a;
    }
  }
  const scales = Float32Array.from(amax, scaleOf);
  const values = new Int8Array(w.length);
  for (let i = 0; i < rows; i++) {
    const row = i * cols;
    for (let j = 0; j < cols; j++) values[row + j] = quantizeValue(w[row + j], scales[j]);
  }
  return { values, scales };
}

/** One scale for the whole tensor: what ORT's Gather quantization does to embedding tables. */
export function quantizePerTensor(w: Float32Array): { values: Int8Array; scale: number } {
  let amax = 0;
  for (const v of w) amax = Math.max(amax, Math.abs(v));
  const scale = scaleOf(amax);
  return { values: Int8Array.from(w, (v) => quantizeValue(v, scale)), scale };
}

function bytesOf(a: Int8Array | Float32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/**
 * The quantized data and its scales are separate initializers, both made from one generated fp32
 * weight: generate it once for whichever is written first and drop it once both are written, so a
 * 1024 x 4096 matrix is never generated twice nor held after use.
 */
function sharedOnce<T>(make: () => T, users: number): () => T {
  let value: T | undefined;
  let left = users;
  return () => {
    const v = value ?? make();
    value = --left > 0 ? v : undefined;
    return v;
  };
}

/** Names ORT's quantizer gives the tensors it adds for a weight W. */
export const quantizedNames = (w: string) => ({ values: `${w}_quantized`, scale: `${w}_scale`, zeroPoint: `${w}_zero_point` });

/** Adds W as int8 [in, out] with float32 per-column scales and int8 zero points (all 0); returns their names. */
export function int8MatMulWeight(g: GraphSink, spec: WeightSpec, opts: WeightInitOptions): ReturnType<typeof quantizedNames> {
  if (spec.shape.length !== 2) throw new Error(`${spec.name}: a MatMul weight must be 2-D, got [${spec.shape.join(', ')}]`);
  const [rows, cols] = spec.shape;
  const names = quantizedNames(spec.name);
  const quantized = sharedOnce(() => quantizePerColumn(generateWeight(spec, opts), rows, cols), 2);
  const values: LazyBytes = { length: rows * cols, produce: () => bytesOf(quantized().values) };
  const scales: LazyBytes = { length: cols * 4, produce: () => bytesOf(quantized().scales) };
  g.initializers.push(tensorProto(names.values, DataType.INT8, [rows, cols], values));
  g.initializers.push(tensorProto(names.scale, DataType.FLOAT, [cols], scales));
  g.initializers.push(tensorProto(names.zeroPoint, DataType.INT8, [cols], new Uint8Array(cols)));
  return names;
}

/** An activation quantized to uint8 at run time: its range, hence its scale, is that of the whole batch. */
export interface DynamicQuantized {
  values: string;
  scale: string;
  zeroPoint: string;
}

export function dynamicQuantize(g: GraphSink, x: string): DynamicQuantized {
  const q: DynamicQuantized = { values: `${x}_quantized`, scale: `${x}_scale`, zeroPoint: `${x}_zero_point` };
  g.nodes.push(nodeProto('DynamicQuantizeLinear', [x], [q.values, q.scale, q.zeroPoint], `${x}_QuantizeLinear`));
  return q;
}

/**
 * y = x W in integers: MatMulInteger of uint8 x and int8 W gives int32 sums, which are rescaled by
 * x's scale times W's column scales. Both zero points are subtracted inside MatMulInteger.
 */
export function int8MatMul(g: GraphSink, x: DynamicQuantized, w: ReturnType<typeof quantizedNames>, hint: string): string {
  const sums = g.op('MatMulInteger', [x.values, w.values, x.zeroPoint, w.zeroPoint], {}, `${hint}_MatMulInteger`);
  const asFloat = g.op('Cast', [sums], { to: DataType.FLOAT }, `${hint}_cast`);
  const scale = g.op('Mul', [x.scale, w.scale], {}, `${hint}_scale`);
  return g.op('Mul', [asFloat, scale], {}, hint);
}

/** Gather from an int8 embedding table, then DequantizeLinear back to float32 rows. */
export function int8Gather(g: GraphSink, spec: WeightSpec, opts: WeightInitOptions, indices: string, hint: string): string {
  const names = quantizedNames(spec.name);
  const quantized = sharedOnce(() => quantizePerTensor(generateWeight(spec, opts)), 2);
  const values: LazyBytes = { length: numel(spec.shape), produce: () => bytesOf(quantized().values) };
  const scale: LazyBytes = { length: 4, produce: () => bytesOf(Float32Array.of(quantized().scale)) };
  g.initializers.push(tensorProto(names.values, DataType.INT8, spec.shape, values));
  g.initializers.push(tensorProto(names.scale, DataType.FLOAT, [], scale));
  g.initializers.push(tensorProto(names.zeroPoint, DataType.INT8, [], new Uint8Array(1)));
  const rows = g.op('Gather', [names.values, indices], { axis: 0 }, `${hint}_quantized`);
  return g.op('DequantizeLinear', [rows, names.scale, names.zeroPoint], {}, hint);
}
