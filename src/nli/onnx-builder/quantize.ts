import { renameSync, rmSync } from 'node:fs';
import { DataType, nodeProto, tensorProto, type AttrValue } from './onnx-proto.js';
import { MessageWriter, writeMessageToFile, type LazyBytes, type Part } from './protobuf.js';
import { fieldsOf, FileSource, readNode, readTensor, type ByteSource, type Field, type NodeInfo, type TensorInfo } from './onnx-reader.js';
import { INT7_QMAX, INT8_QMAX, quantizePerColumn, quantizePerTensor } from './int8.js';

/**
 * int8 versions of an fp32 ONNX export, written by rewriting its graph: every MatMul whose second
 * input is a 2-D float initializer (the Linear layers; attention's activation x activation MatMuls
 * stay float32) and every Gather from a 2-D float initializer (the embedding tables). Everything
 * else is copied byte for byte. Two schemes:
 *
 * row (dtype q8, the default): a pair's probabilities depend on the pair and the file only.
 *   a = max(max|x_row|, tiny) per row (last axis), s = a / 127, r = 127 / a
 *   x_u8 = QuantizeLinear(x * r, 1, zero point 128)                      in [1, 255]
 *   y = MatMulIntegerToFloat(x_u8, W_s7, 1, W_scale per column, 128) * s   (onnxruntime contrib op)
 *   W: symmetric 7-bit per output column, |W_s7| <= 63.
 *   Each row's scale is a max over that row only (exact, order-free), so no other row of the batch,
 *   padding included, can move it; the u8 x s7 pair sums stay inside int16 on every x86 kernel, so
 *   the int32 sums are exact everywhere (docs/nli.md, "q8 arithmetic").
 *
 * tensor (dtype q8-tensor): what onnxruntime's quantize_dynamic writes, the scheme of the hub's
 *   model_quantized.onnx: DynamicQuantizeLinear over the whole activation tensor (one scale per
 *   batch), MatMulInteger with 8-bit weights, rescale. Kept for comparison: its scores move with the
 *   batch and, on CPUs without VNNI, with int16 saturation.
 *
 * Embedding tables: int8 per tensor, Gather then DequantizeLinear (ORT's Gather quantization), in
 * both schemes; a gathered row depends on its index only.
 */
export type Q8Scheme = 'row' | 'tensor';
export const Q8_SCHEMES: readonly Q8Scheme[] = ['row', 'tensor'];

/** metadata_props key naming the scheme of a file this module wrote. */
export const Q8_SCHEME_KEY = 'todeval.q8_scheme';

/** The constant activation zero point of the row scheme: symmetric values on a uint8 grid. */
export const ROW_ZERO_POINT = 128;
/** Activation levels each side of the zero point. */
export const ROW_ACTIVATION_QMAX = 127;
/** Floor of a row's max |x|: an all-zero row (padding can be one) gets a finite scale, not 0 and then NaN. */
export const ROW_MIN_AMAX = Math.fround(1e-30);

export interface QuantizeResult {
  scheme: Q8Scheme;
  matmuls: number;
  gathers: number;
  bytes: number;
  sha256: string;
}

const MODEL_OPSET_IMPORT = 8;
const MODEL_GRAPH = 7;
const MODEL_METADATA = 14;
const GRAPH_NODE = 1;
const GRAPH_INITIALIZER = 5;
const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;

/** The whole field [start, end) of the source, read when written. */
function copyOf(src: ByteSource, f: Field): Part {
  return { length: f.end - f.start, produce: () => src.read(f.start, f.end - f.start) };
}

function floatsAt(src: ByteSource, t: TensorInfo): Float32Array {
  const { offset, length } = t.data!;
  const out = new Float32Array(length / 4);
  // Into an aligned buffer; ONNX stores little-endian, as every x86 and ARM host reads it.
  const bytes = new Uint8Array(out.buffer);
  if (src.readInto) src.readInto(bytes, offset);
  else bytes.set(src.read(offset, length));
  return out;
}

function bytesOf(a: Int8Array | Float32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Made once for whichever of its users is written first, dropped after the last: a 4096 x 1024 weight is read once and not held. */
function sharedOnce<T>(make: () => T, users: number): () => T {
  let value: T | undefined;
  let left = users;
  return () => {
    const v = value ?? make();
    value = --left > 0 ? v : undefined;
    return v;
  };
}

/** onnxruntime's contrib operators (MatMulIntegerToFloat). */
const MS_DOMAIN = 'com.microsoft';

function opsetDomain(src: ByteSource, f: Field): string {
  const g = fieldsOf(src, f.offset, f.end).find((x) => x.field === 1);
  return g ? new TextDecoder().decode(src.read(g.offset, g.length)) : '';
}

function defaultOpset(src: ByteSource, top: Field[]): number {
  for (const f of top.filter((t) => t.field === MODEL_OPSET_IMPORT)) {
    const domain = opsetDomain(src, f);
    if (domain === '' || domain === 'ai.onnx') return fieldsOf(src, f.offset, f.end).find((g) => g.field === 2)?.value ?? 0;
  }
  throw new Error('the model imports no default-domain opset');
}

function valueInfoName(src: ByteSource, f: Field): string {
  const name = fieldsOf(src, f.offset, f.end).find((g) => g.field === 1);
  return name ? new TextDecoder().decode(src.read(name.offset, name.length)) : '';
}

function metadataEntry(key: string, value: string): MessageWriter {
  return new MessageWriter().string(1, key).string(2, value);
}

export interface QuantizeOptions {
  /**
   * Largest |int8 weight|: the scheme's own (63 row, 127 tensor) unless given. Tests write a row file
   * with 127 to show that such weights do saturate on AVX2; nothing else should set it.
   */
  weightQmax?: number;
}

/** Rewrites the model in `src` to `outFile` (via a temporary file, renamed into place when complete). */
export function quantizeModel(src: ByteSource, outFile: string, scheme: Q8Scheme, options: QuantizeOptions = {}): QuantizeResult {
  const top = fieldsOf(src);
  const graphField = top.find((f) => f.field === MODEL_GRAPH);
  if (!graphField) throw new Error('not an ONNX model: no graph');
  const opset = defaultOpset(src, top);
  // Per-axis QuantizeLinear / DequantizeLinear arrived in opset 13.
  if (opset < 13) throw new Error(`the model's opset is ${opset}; quantizing needs opset 13 or later (re-export it)`);
  const graphFields = fieldsOf(src, graphField.offset, graphField.end);

  const nodes = new Map<Field, NodeInfo>();
  const tensors = new Map<string, TensorInfo>();
  const tensorAt = new Map<Field, TensorInfo>();
  const used = new Set<string>();
  const graphIo = new Set<string>();
  const uses = new Map<string, number>();
  for (const f of graphFields) {
    if (f.field === GRAPH_NODE) {
      const n = readNode(src, f);
      nodes.set(f, n);
      for (const i of n.inputs) uses.set(i, (uses.get(i) ?? 0) + 1);
      for (const name of [...n.inputs, ...n.outputs, n.name]) used.add(name);
    } else if (f.field === GRAPH_INITIALIZER) {
      const t = readTensor(src, f);
      tensors.set(t.name, t);
      tensorAt.set(f, t);
      used.add(t.name);
    } else if (f.field === GRAPH_INPUT || f.field === GRAPH_OUTPUT) {
      const name = valueInfoName(src, f);
      graphIo.add(name);
      used.add(name);
    }
  }
  /** A weight we may replace: a float 2-D initializer held in the file, not overridable as a graph input. */
  const weight = (name: string | undefined): TensorInfo | undefined => {
    const t = name === undefined ? undefined : tensors.get(name);
    if (!t || t.dataType !== DataType.FLOAT || t.dims.length !== 2 || graphIo.has(t.name)) return undefined;
    if (t.external) throw new Error(`initializer ${t.name} is stored outside the file (external data); only self-contained exports can be quantized`);
    return t.data && t.data.length === t.dims[0] * t.dims[1] * 4 ? t : undefined;
  };

  const fresh = (base: string): string => {
    let name = base;
    for (let k = 1; used.has(name); k++) name = `${base}_${k}`;
    used.add(name);
    return name;
  };
  const initializers: MessageWriter[] = [];
  let nodeCount = 0;
  let emit: MessageWriter[] = [];
  let usesMsDomain = false;
  const op = (opType: string, inputs: string[], attrs: Record<string, AttrValue> = {}, output?: string, domain?: string): string => {
    const out = output ?? fresh(`q8/${opType}_${nodeCount}`);
    const node = nodeProto(opType, inputs, [out], fresh(`q8/${opType}_node_${nodeCount++}`), attrs);
    emit.push(domain ? node.string(7, domain) : node);
    return out;
  };
  const constants = new Map<string, string>();
  const constant = (key: string, make: (name: string) => MessageWriter): string => {
    let name = constants.get(key);
    if (!name) {
      name = fresh(`q8/const_${key}`);
      initializers.push(make(name));
      constants.set(key, name);
    }
    return name;
  };
  const int64s = (values: number[]) =>
    constant(`i64_${values.join('_')}`, (n) => tensorProto(n, DataType.INT64, [values.length], new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer)));
  const float = (key: string, v: number) => constant(key, (n) => tensorProto(n, DataType.FLOAT, [], new Uint8Array(Float32Array.of(v).buffer)));
  const zeroPoint128 = () => constant('u8_128', (n) => tensorProto(n, DataType.UINT8, [], Uint8Array.of(ROW_ZERO_POINT)));
  // ReduceMax took its axes as an attribute until opset 18, as an input since.
  const reduceMaxLast = (x: string): string =>
    opset >= 18 ? op('ReduceMax', [x, int64s([-1])], { keepdims: 1 }) : op('ReduceMax', [x], { axes: [-1], keepdims: 1 });
  const reduceMinLast = (x: string): string =>
    opset >= 18 ? op('ReduceMin', [x, int64s([-1])], { keepdims: 1 }) : op('ReduceMin', [x], { axes: [-1], keepdims: 1 });
  const one = () => float('one', 1);

  /** Quantized weights, by source name: one set per weight however many MatMuls read it. */
  const weights = new Map<string, { values: string; scale: string; zeroPoint?: string }>();
  const matmulWeight = (t: TensorInfo): { values: string; scale: string; zeroPoint?: string } => {
    const have = weights.get(t.name);
    if (have) return have;
    const [rows, cols] = t.dims;
    const qmax = options.weightQmax ?? (scheme === 'row' ? INT7_QMAX : INT8_QMAX);
    const q = sharedOnce(() => quantizePerColumn(floatsAt(src, t), rows, cols, qmax), 2);
    const names = { values: fresh(`${t.name}_quantized`), scale: fresh(`${t.name}_scale`), zeroPoint: scheme === 'tensor' ? fresh(`${t.name}_zero_point`) : undefined };
    const values: LazyBytes = { length: rows * cols, produce: () => bytesOf(q().values) };
    const scales: LazyBytes = { length: cols * 4, produce: () => bytesOf(q().scales) };
    initializers.push(tensorProto(names.values, DataType.INT8, [rows, cols], values));
    initializers.push(tensorProto(names.scale, DataType.FLOAT, [cols], scales));
    // quantize_dynamic writes W's zero points (all 0) explicitly; the row scheme leaves them out (0).
    if (names.zeroPoint) initializers.push(tensorProto(names.zeroPoint, DataType.INT8, [cols], new Uint8Array(cols)));
    weights.set(t.name, names);
    return names;
  };

  /** Row scheme: one per activation (Q, K and V read the same one). */
  interface RowQuantized {
    /** uint8, the shape of x. */
    values: string;
    /** float, the shape of x with the last axis 1: one scale per row. */
    scale: string;
  }
  const rowQuantized = new Map<string, RowQuantized>();
  const quantizeRows = (x: string): RowQuantized => {
    const have = rowQuantized.get(x);
    if (have) return have;
    // max |x| of the row as max(max x, -min x): two reads of x, no |x| tensor written.
    const amax = op('Max', [reduceMaxLast(x), op('Neg', [reduceMinLast(x)]), float('row_min_amax', ROW_MIN_AMAX)]);
    const scale = op('Div', [amax, float('row_qmax', ROW_ACTIVATION_QMAX)]);
    // x * (127 / amax) first (one IEEE product per element: the same on every CPU, and cheaper than a
    // division), then QuantizeLinear with scale 1 (exact): a scale per row, which QuantizeLinear has
    // only along one axis, so only after a reshape to [M, K] that would hide the [batch, sequence]
    // dims from onnxruntime's shape inference, and with them its LayerNorm fusion downstream.
    const values = op('QuantizeLinear', [op('Mul', [x, op('Div', [float('row_qmax', ROW_ACTIVATION_QMAX), amax])]), one(), zeroPoint128()]);
    const q = { values, scale };
    rowQuantized.set(x, q);
    return q;
  };
  const tensorQuantized = new Map<string, { values: string; scale: string; zeroPoint: string }>();
  const quantizeTensor = (x: string) => {
    let q = tensorQuantized.get(x);
    if (!q) {
      q = { values: fresh(`${x}_quantized`), scale: fresh(`${x}_scale`), zeroPoint: fresh(`${x}_zero_point`) };
      emit.push(nodeProto('DynamicQuantizeLinear', [x], [q.values, q.scale, q.zeroPoint], fresh(`${x}_QuantizeLinear`)));
      tensorQuantized.set(x, q);
    }
    return q;
  };

  const replacedUses = new Map<string, number>();
  const replaced = new Map<Field, MessageWriter[]>();
  let matmuls = 0;
  let gathers = 0;
  for (const [f, n] of nodes) {
    if (n.domain !== '' && n.domain !== 'ai.onnx') continue;
    emit = [];
    if (n.opType === 'MatMul' && n.inputs.length === 2 && weight(n.inputs[1])) {
      const t = weight(n.inputs[1])!;
      const [k, cols] = t.dims;
      const w = matmulWeight(t);
      if (scheme === 'row') {
        const x = quantizeRows(n.inputs[0]);
        // onnxruntime's MatMulIntegerToFloat (the kernel its own fusions use, with the weight packed
        // once at load): int32 sums of (x_u8 - 128) W_s7, times a_scale (1) * W's column scale, in float.
        const perColumn = op('MatMulIntegerToFloat', [x.values, w.values, one(), w.scale, zeroPoint128()], {}, undefined, MS_DOMAIN);
        op('Mul', [perColumn, x.scale], {}, n.outputs[0]);
        usesMsDomain = true;
      } else {
        const x = quantizeTensor(n.inputs[0]);
        const sums = op('MatMulInteger', [x.values, w.values, x.zeroPoint, w.zeroPoint!]);
        const asFloat = op('Cast', [sums], { to: DataType.FLOAT });
        op('Mul', [asFloat, op('Mul', [x.scale, w.scale])], {}, n.outputs[0]);
      }
      matmuls++;
    } else if (n.opType === 'Gather' && n.inputs.length === 2 && weight(n.inputs[0])) {
      const t = weight(n.inputs[0])!;
      const q = sharedOnce(() => quantizePerTensor(floatsAt(src, t)), 2);
      const values = fresh(`${t.name}_quantized`);
      const scale = fresh(`${t.name}_scale`);
      const zeroPoint = fresh(`${t.name}_zero_point`);
      initializers.push(tensorProto(values, DataType.INT8, t.dims, { length: t.dims[0] * t.dims[1], produce: () => bytesOf(q().values) }));
      initializers.push(tensorProto(scale, DataType.FLOAT, [], { length: 4, produce: () => bytesOf(Float32Array.of(q().scale)) }));
      initializers.push(tensorProto(zeroPoint, DataType.INT8, [], new Uint8Array(1)));
      const rows = op('Gather', [values, n.inputs[1]], { axis: 0 });
      op('DequantizeLinear', [rows, scale, zeroPoint], {}, n.outputs[0]);
      gathers++;
    } else {
      continue;
    }
    const w = n.opType === 'MatMul' ? n.inputs[1] : n.inputs[0];
    replacedUses.set(w, (replacedUses.get(w) ?? 0) + 1);
    replaced.set(f, emit);
  }
  if (matmuls === 0) throw new Error('no MatMul with a float weight initializer found: nothing to quantize (is this an fp32 export?)');

  const graph = new MessageWriter();
  for (const f of graphFields) {
    if (f.field === GRAPH_NODE && replaced.has(f)) {
      for (const m of replaced.get(f)!) graph.message(GRAPH_NODE, m);
      continue;
    }
    if (f.field === GRAPH_INITIALIZER) {
      const t = tensorAt.get(f)!;
      // Dropped once every reader of the float weight reads the int8 copy instead.
      if ((replacedUses.get(t.name) ?? 0) > 0 && replacedUses.get(t.name) === uses.get(t.name)) continue;
    }
    graph.raw(copyOf(src, f));
  }
  for (const t of initializers) graph.message(GRAPH_INITIALIZER, t);

  const model = new MessageWriter();
  const importsMs = top.some((f) => f.field === MODEL_OPSET_IMPORT && opsetDomain(src, f) === MS_DOMAIN);
  for (const f of top) {
    if (f.field === MODEL_OPSET_IMPORT && usesMsDomain && !importsMs && f === top.filter((t) => t.field === MODEL_OPSET_IMPORT).pop()) {
      model.raw(copyOf(src, f));
      model.message(MODEL_OPSET_IMPORT, new MessageWriter().string(1, MS_DOMAIN).varint(2, 1));
      continue;
    }
    if (f.field === MODEL_GRAPH) model.message(MODEL_GRAPH, graph);
    else if (f.field === MODEL_METADATA && readKey(src, f) === Q8_SCHEME_KEY) continue;
    else model.raw(copyOf(src, f));
  }
  model.message(MODEL_METADATA, metadataEntry(Q8_SCHEME_KEY, scheme));

  const tmp = `${outFile}.partial-${process.pid}`;
  try {
    const written = writeMessageToFile(model, tmp);
    renameSync(tmp, outFile);
    return { scheme, matmuls, gathers, ...written };
  } finally {
    rmSync(tmp, { force: true });
  }
}

function readKey(src: ByteSource, f: Field): string {
  const key = fieldsOf(src, f.offset, f.end).find((g) => g.field === 1);
  return key ? new TextDecoder().decode(src.read(key.offset, key.length)) : '';
}

/** quantizeModel from a file on disk. */
export function quantizeOnnxFile(fp32File: string, outFile: string, scheme: Q8Scheme, options: QuantizeOptions = {}): QuantizeResult {
  const src = new FileSource(fp32File);
  try {
    return quantizeModel(src, outFile, scheme, options);
  } finally {
    src.close();
  }
}
