import { DataType, ModelField } from './onnx-proto.js';
import { fieldsOf, FileSource, indexGraph, type ByteSource, type NodeInfo } from './onnx-reader.js';

/** int16, where AVX2's and AVX-512BW's vpmaddubsw adds each pair of u8 x s8 products (saturating). */
export const INT16_MAX = 32767;
export const INT32_MAX = 2 ** 31 - 1;
/** Largest uint8 activation (the row scheme's values lie in [1, 255]; 255 bounds any uint8). */
export const U8_MAX = 255;

/** The integer range of one integer MatMul of a file, from what the file itself holds. */
export interface MatMulIntegerBound {
  node: string;
  /** Length of each dot product (rows of the weight). */
  k: number;
  n: number;
  /** Largest |int8 weight|. */
  maxAbsWeight: number;
  /** Op producing the uint8 activations (QuantizeLinear: per row; DynamicQuantizeLinear: per tensor). */
  activationFrom: string;
  activationType: 'uint8' | 'int8' | 'unknown';
  /** Largest |a * w0 + a' * w1| one vpmaddubsw lane can form: 2 * 255 * maxAbsWeight. */
  pairSum: number;
  /** Largest |sum over K| of u8 x s8 products: K * 255 * maxAbsWeight. */
  dotSum: number;
}

/**
 * Every integer MatMul of an ONNX model (MatMulInteger, and onnxruntime's MatMulIntegerToFloat, which
 * the row scheme uses) with the bounds of its integer sums (see docs/nli.md, "q8 arithmetic").
 */
export function matMulIntegerBounds(src: ByteSource): MatMulIntegerBound[] {
  const graph = fieldsOf(src).find((f) => f.field === ModelField.GRAPH);
  if (!graph) throw new Error('not an ONNX model: no graph');
  // The quantizer's own reading of the graph (onnx-reader's indexGraph), not a second one.
  const { nodes: byField, tensors } = indexGraph(src, fieldsOf(src, graph.offset, graph.end));
  const nodes = [...byField.values()];
  const producer = new Map<string, NodeInfo>();
  for (const n of nodes) for (const o of n.outputs) producer.set(o, n);
  const out: MatMulIntegerBound[] = [];
  for (const n of nodes.filter((x) => x.opType === 'MatMulInteger' || x.opType === 'MatMulIntegerToFloat')) {
    const w = tensors.get(n.inputs[1]);
    if (!w || w.dataType !== DataType.INT8 || w.dims.length !== 2 || !w.data) throw new Error(`${n.name}: weight ${n.inputs[1]} is not an int8 2-D initializer`);
    const values = new Int8Array(src.read(w.data.offset, w.data.length));
    let maxAbsWeight = 0;
    for (const v of values) maxAbsWeight = Math.max(maxAbsWeight, Math.abs(v));
    const from = producer.get(n.inputs[0]);
    // The activation type is the zero point's: a uint8 scalar initializer, or DynamicQuantizeLinear's uint8 output.
    const zpInput = n.opType === 'MatMulInteger' ? n.inputs[2] : n.inputs[4];
    const zp = zpInput ? tensors.get(zpInput) : undefined;
    const activationType = from?.opType === 'DynamicQuantizeLinear' || zp?.dataType === DataType.UINT8 ? 'uint8' : zp?.dataType === DataType.INT8 ? 'int8' : 'unknown';
    const [k, cols] = w.dims;
    out.push({ node: n.name, k, n: cols, maxAbsWeight, activationFrom: from?.opType ?? 'graph input', activationType, pairSum: 2 * U8_MAX * maxAbsWeight, dotSum: k * U8_MAX * maxAbsWeight });
  }
  return out;
}

export function matMulIntegerBoundsOfFile(file: string): MatMulIntegerBound[] {
  const src = new FileSource(file);
  try {
    return matMulIntegerBounds(src);
  } finally {
    src.close();
  }
}

/** How many nodes of each op type a model file holds: what a rewrite left in and took out. */
export function opTypeCountsOfFile(file: string): Map<string, number> {
  const src = new FileSource(file);
  try {
    const graph = fieldsOf(src).find((f) => f.field === ModelField.GRAPH);
    if (!graph) throw new Error('not an ONNX model: no graph');
    const counts = new Map<string, number>();
    for (const n of indexGraph(src, fieldsOf(src, graph.offset, graph.end)).nodes.values()) counts.set(n.opType, (counts.get(n.opType) ?? 0) + 1);
    return counts;
  } finally {
    src.close();
  }
}
