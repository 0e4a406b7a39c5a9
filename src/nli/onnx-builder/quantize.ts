import { AtomicFile } from '../../util/atomic-write.js';
import { DataType, GraphField, ModelField, nodeProto, tensorProto, type AttrValue } from './onnx-proto.js';
import { MessageWriter, writeMessage, type LazyBytes, type Part } from './protobuf.js';
import {
  fieldsOf,
  FileSource,
  indexGraph,
  stringFieldOf,
  type ByteSource,
  type Field,
  type GraphIndex,
  type NodeInfo,
  type TensorInfo,
} from './onnx-reader.js';
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
 *   the int32 sums are exact everywhere (docs/nli.md, "q8 arithmetic"). Each last-axis Softmax is
 *   written out in primitive ops whose kernels agree across AVX-512 and AVX2+FMA (Q8Writer.softmax;
 *   graph version 2, docs/nli.md "q8 across CPUs").
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

/** metadata_props key naming the scheme of a file this module wrote. */
export const Q8_SCHEME_KEY = 'todeval.q8_scheme';
/**
 * metadata_props key giving the version of the row scheme's graph. Absent in the first row files
 * (version 1: onnxruntime's Softmax kept); version 2 writes each last-axis Softmax out in primitive
 * ops (see Q8Writer.softmax). Signatures name it (q8-row2), so scores of the two never compare equal.
 */
export const Q8_ROW_GRAPH_KEY = 'todeval.q8_row_graph';
export const Q8_ROW_GRAPH = 2;
/**
 * Revision of the row file's bytes within one graph version: a rewrite that computes the same bits
 * (so the same Q8_ROW_GRAPH and signature) still changes the file, and caches of built files key on
 * this so that they rebuild. 1: graph 2 as first written; 2: powers of two folded into weight scales
 * (powerOfTwoFolds).
 */
export const Q8_ROW_FILE_REVISION = 2;

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

/** The domain an OperatorSetIdProto names (field 1). */
function opsetDomain(src: ByteSource, f: Field): string {
  return stringFieldOf(src, f, 1);
}

function defaultOpset(src: ByteSource, top: Field[]): number {
  for (const f of top.filter((t) => t.field === ModelField.OPSET_IMPORT)) {
    const domain = opsetDomain(src, f);
    if (domain === '' || domain === 'ai.onnx') return fieldsOf(src, f.offset, f.end).find((g) => g.field === 2)?.value ?? 0;
  }
  throw new Error('the model imports no default-domain opset');
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
  /**
   * Row scheme: drop a Mul by a power of two into the weight scales of the MatMuls that read it
   * (powerOfTwoFolds; default true). The same bits either way; tests turn it off to show that.
   */
  foldPowersOfTwo?: boolean;
}

/** Rewrites the model in `src` to `outFile` (via a temporary file, renamed into place when complete). */
export function quantizeModel(src: ByteSource, outFile: string, scheme: Q8Scheme, options: QuantizeOptions = {}): QuantizeResult {
  const top = fieldsOf(src);
  const graphField = top.find((f) => f.field === ModelField.GRAPH);
  if (!graphField) throw new Error('not an ONNX model: no graph');
  const opset = defaultOpset(src, top);
  // Per-axis QuantizeLinear / DequantizeLinear arrived in opset 13.
  if (opset < 13) throw new Error(`the model's opset is ${opset}; quantizing needs opset 13 or later (re-export it)`);
  const graph = indexGraph(src, fieldsOf(src, graphField.offset, graphField.end));
  const weightQmax = options.weightQmax ?? (scheme === 'row' ? INT7_QMAX : INT8_QMAX);
  const q8 = new Q8Writer(src, graph.used, scheme, opset, weightQmax);
  const rewrite = rewriteNodes(src, graph, q8, options.foldPowersOfTwo ?? true);
  if (rewrite.matmuls === 0) throw new Error('no MatMul with a float weight initializer found: nothing to quantize (is this an fp32 export?)');
  const model = writeModel(src, top, writeGraph(src, graph, rewrite, q8.initializers), scheme, q8.usesMsDomain);
  return { scheme, matmuls: rewrite.matmuls, gathers: rewrite.gathers, ...writeModelFile(model, outFile) };
}

/** A weight we may replace: a float 2-D initializer held in the file, not overridable as a graph input. */
function replaceableWeight(g: GraphIndex, name: string | undefined): TensorInfo | undefined {
  const t = name === undefined ? undefined : g.tensors.get(name);
  if (!t || t.dataType !== DataType.FLOAT || t.dims.length !== 2 || g.graphIo.has(t.name)) return undefined;
  if (t.external) throw new Error(`initializer ${t.name} is stored outside the file (external data); only self-contained exports can be quantized`);
  return t.data && t.data.length === t.dims[0] * t.dims[1] * 4 ? t : undefined;
}

/** The nodes that replace source nodes, and how many readers of each initializer (a float weight, a folded constant) no longer read it. */
interface Rewrite {
  replaced: Map<Field, MessageWriter[]>;
  replacedUses: Map<string, number>;
  matmuls: number;
  gathers: number;
  softmaxes: number;
  /** Mul nodes by a power of two dropped into their readers' weight scales (powerOfTwoFolds). */
  folds: number;
}

/** A Softmax over the last axis: its axis attribute -1, or absent where opset 13 made -1 the default. */
function softmaxOverLastAxis(n: NodeInfo, opset: number): boolean {
  const axis = n.ints.get('axis');
  return axis === -1 || (axis === undefined && opset >= 13);
}

const isDefaultDomain = (n: NodeInfo): boolean => n.domain === '' || n.domain === 'ai.onnx';

/** The value of a float scalar initializer if it is a power of two in [2^-8, 2^8], else undefined. */
function powerOfTwoScalar(src: ByteSource, g: GraphIndex, name: string): number | undefined {
  const t = g.tensors.get(name);
  if (!t || t.dataType !== DataType.FLOAT || t.external || g.graphIo.has(name) || t.data?.length !== 4 || t.dims.some((d) => d !== 1)) return undefined;
  const bits = new Uint32Array(floatsAt(src, t).buffer)[0];
  const exponent = ((bits >>> 23) & 0xff) - 127;
  // positive, mantissa zero, a normal exponent within 8 of 1: a product by it and by its inverse is exact
  return bits >>> 31 === 0 && (bits & 0x7fffff) === 0 && Math.abs(exponent) <= 8 ? 2 ** exponent : undefined;
}

/** A Mul by c = 2^k whose product only row-quantized MatMuls read: they read its other input instead. */
interface Fold {
  x: string;
  factor: number;
  constant: string;
}

/**
 * Row scheme only: each Mul of an activation x by a scalar power of two c (GELU's final * 0.5)
 * whose product is read by nothing but MatMuls by weights (each weight read once) is dropped, and
 * those MatMuls quantize x with their weight's column scales times c. The same bits come out: x * c
 * is exact, so the row max of c x is c times x's, its scale s = amax / 127 is c times x's and
 * r = 127 / amax is x's divided by c (each exact: a power of two commutes with rounding), so
 * (c x) * r_cx = x * r_x and the uint8 values are the same; the int32 sums are the same, the
 * MatMulIntegerToFloat product (sum * (c w_scale)) is c times the old one, exactly, and the rescale
 * by s_x = s_cx / c gives the old output bit for bit. Only where c x would leave the normal floats
 * (a row whose every |x| is below 2^-126 / c, or the 1e-30 floor of the row max between c amax and
 * amax) could a bit differ, which no activation of a trained or random model comes near. Saves a
 * pass over the widest activation of each layer ([batch, tokens, 4096] in roberta-large).
 */
function powerOfTwoFolds(src: ByteSource, g: GraphIndex): Map<string, Fold> {
  const readers = new Map<string, NodeInfo[]>();
  for (const n of g.nodes.values()) for (const i of new Set(n.inputs)) readers.set(i, [...(readers.get(i) ?? []), n]);
  const folds = new Map<string, Fold>();
  for (const n of g.nodes.values()) {
    if (!isDefaultDomain(n) || n.opType !== 'Mul' || n.inputs.length !== 2 || n.outputs.length !== 1 || g.graphIo.has(n.outputs[0])) continue;
    const k = [0, 1].find((i) => powerOfTwoScalar(src, g, n.inputs[i]) !== undefined);
    if (k === undefined || n.inputs[0] === n.inputs[1]) continue;
    const out = n.outputs[0];
    const users = readers.get(out) ?? [];
    const allQuantized = users.every(
      (u) => isDefaultDomain(u) && u.opType === 'MatMul' && u.inputs.length === 2 && u.inputs[0] === out && u.inputs[1] !== out && replaceableWeight(g, u.inputs[1]) && g.uses.get(u.inputs[1]) === 1,
    );
    if (users.length > 0 && allQuantized) folds.set(out, { x: n.inputs[1 - k], factor: powerOfTwoScalar(src, g, n.inputs[k])!, constant: n.inputs[k] });
  }
  return folds;
}

/** Every default-domain MatMul by a weight and Gather from a table, rewritten in the scheme of `q8`. */
function rewriteNodes(src: ByteSource, g: GraphIndex, q8: Q8Writer, fold: boolean): Rewrite {
  const r: Rewrite = { replaced: new Map(), replacedUses: new Map(), matmuls: 0, gathers: 0, softmaxes: 0, folds: 0 };
  const folds = q8.rowScheme && fold ? powerOfTwoFolds(src, g) : new Map<string, Fold>();
  for (const [f, n] of g.nodes) {
    if (!isDefaultDomain(n)) continue;
    const dropped = n.opType === 'Mul' ? folds.get(n.outputs[0]) : undefined;
    if (dropped) {
      r.replaced.set(f, []);
      r.replacedUses.set(dropped.constant, (r.replacedUses.get(dropped.constant) ?? 0) + 1);
      r.folds++;
      continue;
    }
    if (n.opType === 'MatMul' && n.inputs.length === 2 && replaceableWeight(g, n.inputs[1])) {
      const t = replaceableWeight(g, n.inputs[1])!;
      const folded = folds.get(n.inputs[0]);
      r.replaced.set(f, q8.nodesFor(() => q8.matMul(n, t, folded)));
      r.matmuls++;
    } else if (n.opType === 'Gather' && n.inputs.length === 2 && replaceableWeight(g, n.inputs[0])) {
      const t = replaceableWeight(g, n.inputs[0])!;
      r.replaced.set(f, q8.nodesFor(() => q8.gather(n, t)));
      r.gathers++;
    } else if (n.opType === 'Softmax' && q8.rewritesSoftmax && softmaxOverLastAxis(n, q8.opset)) {
      r.replaced.set(f, q8.nodesFor(() => q8.softmax(n)));
      r.softmaxes++;
      continue;
    } else {
      continue;
    }
    const w = n.opType === 'MatMul' ? n.inputs[1] : n.inputs[0];
    r.replacedUses.set(w, (r.replacedUses.get(w) ?? 0) + 1);
  }
  return r;
}

/** A weight quantized per output column: one set per weight however many MatMuls read it. */
interface QuantizedWeight {
  values: string;
  scale: string;
  /** Written by the tensor scheme only (all 0, as quantize_dynamic writes them). */
  zeroPoint?: string;
}

/** Row scheme: one per activation (Q, K and V read the same one). */
interface RowQuantized {
  /** uint8, the shape of x. */
  values: string;
  /** float, the shape of x with the last axis 1: one scale per row. */
  scale: string;
}

/** Tensor scheme: DynamicQuantizeLinear's three outputs, one per activation. */
interface TensorQuantized {
  values: string;
  scale: string;
  zeroPoint: string;
}

/**
 * What the rewrite adds to the graph, under names that clash with none of the source's: the nodes
 * that stand in for each replaced node, and the initializers (quantized weights, shared constants).
 * The order of the calls fixes every name and so the output bytes, which `todeval models quantize`
 * and the random builder must agree on.
 */
class Q8Writer {
  readonly initializers: MessageWriter[] = [];
  /** Set once a node of onnxruntime's contrib domain is written: the model must then import it. */
  usesMsDomain = false;
  private emitted: MessageWriter[] = [];
  private nodeCount = 0;
  private readonly constants = new Map<string, string>();
  private readonly weights = new Map<string, QuantizedWeight>();
  private readonly rowQuantized = new Map<string, RowQuantized>();
  private readonly tensorQuantized = new Map<string, TensorQuantized>();

  constructor(
    private readonly src: ByteSource,
    private readonly used: Set<string>,
    private readonly scheme: Q8Scheme,
    readonly opset: number,
    private readonly weightQmax: number,
  ) {}

  get rowScheme(): boolean {
    return this.scheme === 'row';
  }

  /** The row scheme rewrites Softmax (below); the per-tensor scheme stays what quantize_dynamic writes. */
  get rewritesSoftmax(): boolean {
    return this.rowScheme;
  }

  /**
   * Softmax over the last axis as exp(x - max) / sum, each step a kernel that gives the same bits on
   * every x86 CPU with FMA (AVX2+FMA, AVX-512) and in any batch. onnxruntime's own Softmax does not:
   * its sum of exponentials is a vector reduction whose lane count follows the instruction set (16
   * lanes on AVX-512, 8 on AVX2), so about half its outputs differ in the last bit between the two,
   * and a last-bit difference before the next row quantization can move a whole quantization step
   * (docs/nli.md, "q8 across CPUs"). ReduceSum would not do either: its Eigen sum peels scalars up
   * to an aligned address, so a row's sum depends on where the row starts in the batch. The sum here
   * is a MatMul by a column of ones: every SGEMM kernel adds a row's products in order along K (a
   * product by 1 is exact, so FMA or not gives the same sums), and the zeros that padding appends to
   * a row add nothing. The row max is exact in any order, x - max and the division are one IEEE
   * operation per element, and Exp is elementwise (the same on AVX2+FMA and AVX-512; measured).
   */
  softmax(n: NodeInfo): void {
    const x = n.inputs[0];
    const e = this.op('Exp', [this.op('Sub', [x, this.reduceLast('ReduceMax', x)])]);
    // A column of ones as long as the rows: [S, 1] from x's last dimension, broadcast from the scalar 1.
    const width = this.op('Slice', [this.op('Shape', [x]), this.int64s([-1]), this.int64s([Number.MAX_SAFE_INTEGER]), this.int64s([0])]);
    const ones = this.op('Expand', [this.one(), this.op('Concat', [width, this.int64s([1])], { axis: 0 })]);
    this.op('Div', [e, this.op('MatMul', [e, ones])], {}, n.outputs[0]);
  }

  /** The nodes that `write` emits: what stands in for one source node. */
  nodesFor(write: () => void): MessageWriter[] {
    this.emitted = [];
    write();
    return this.emitted;
  }

  /** x W, with the weight quantized per column and x per row (row scheme) or per tensor; `fold`: x is c times fold.x (powerOfTwoFolds). */
  matMul(n: NodeInfo, t: TensorInfo, fold?: Fold): void {
    const w = this.quantizedWeight(t, fold?.factor ?? 1);
    if (this.scheme === 'row') {
      const x = this.quantizeRows(fold?.x ?? n.inputs[0]);
      // onnxruntime's MatMulIntegerToFloat (the kernel its own fusions use, with the weight packed
      // once at load): int32 sums of (x_u8 - 128) W_s7, times a_scale (1) * W's column scale, in float.
      const perColumn = this.op('MatMulIntegerToFloat', [x.values, w.values, this.one(), w.scale, this.zeroPoint128()], {}, undefined, MS_DOMAIN);
      this.op('Mul', [perColumn, x.scale], {}, n.outputs[0]);
      this.usesMsDomain = true;
    } else {
      const x = this.quantizeTensor(n.inputs[0]);
      const sums = this.op('MatMulInteger', [x.values, w.values, x.zeroPoint, w.zeroPoint!]);
      const asFloat = this.op('Cast', [sums], { to: DataType.FLOAT });
      this.op('Mul', [asFloat, this.op('Mul', [x.scale, w.scale])], {}, n.outputs[0]);
    }
  }

  /** Rows of an embedding table: the table int8 per tensor, Gather then DequantizeLinear. */
  gather(n: NodeInfo, t: TensorInfo): void {
    const q = sharedOnce(() => quantizePerTensor(floatsAt(this.src, t)), 2);
    const values = this.fresh(`${t.name}_quantized`);
    const scale = this.fresh(`${t.name}_scale`);
    const zeroPoint = this.fresh(`${t.name}_zero_point`);
    this.initializers.push(tensorProto(values, DataType.INT8, t.dims, { length: t.dims[0] * t.dims[1], produce: () => bytesOf(q().values) }));
    this.initializers.push(tensorProto(scale, DataType.FLOAT, [], { length: 4, produce: () => bytesOf(Float32Array.of(q().scale)) }));
    this.initializers.push(tensorProto(zeroPoint, DataType.INT8, [], new Uint8Array(1)));
    const rows = this.op('Gather', [values, n.inputs[1]], { axis: 0 });
    this.op('DequantizeLinear', [rows, scale, zeroPoint], {}, n.outputs[0]);
  }

  private fresh(base: string): string {
    let name = base;
    for (let k = 1; this.used.has(name); k++) name = `${base}_${k}`;
    this.used.add(name);
    return name;
  }

  /** Emits one node; returns its output (a fresh name unless given). */
  private op(opType: string, inputs: string[], attrs: Record<string, AttrValue> = {}, output?: string, domain?: string): string {
    const out = output ?? this.fresh(`q8/${opType}_${this.nodeCount}`);
    const node = nodeProto(opType, inputs, [out], this.fresh(`q8/${opType}_node_${this.nodeCount++}`), attrs);
    this.emitted.push(domain ? node.string(7, domain) : node);
    return out;
  }

  /** A constant initializer, written once under `key` however often it is used. */
  private constant(key: string, make: (name: string) => MessageWriter): string {
    let name = this.constants.get(key);
    if (!name) {
      name = this.fresh(`q8/const_${key}`);
      this.initializers.push(make(name));
      this.constants.set(key, name);
    }
    return name;
  }

  private int64s(values: number[]): string {
    return this.constant(`i64_${values.join('_')}`, (n) =>
      tensorProto(n, DataType.INT64, [values.length], new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer)),
    );
  }

  private float(key: string, v: number): string {
    return this.constant(key, (n) => tensorProto(n, DataType.FLOAT, [], new Uint8Array(Float32Array.of(v).buffer)));
  }

  private one(): string {
    return this.float('one', 1);
  }

  private zeroPoint128(): string {
    return this.constant('u8_128', (n) => tensorProto(n, DataType.UINT8, [], Uint8Array.of(ROW_ZERO_POINT)));
  }

  /** ReduceMax or ReduceMin over the last axis, kept: axes an attribute until opset 18, an input since. */
  private reduceLast(opType: 'ReduceMax' | 'ReduceMin', x: string): string {
    return this.opset >= 18 ? this.op(opType, [x, this.int64s([-1])], { keepdims: 1 }) : this.op(opType, [x], { axes: [-1], keepdims: 1 });
  }

  /** `factor` (a power of two, powerOfTwoFolds) multiplies the column scales, exactly; a folded weight has one reader. */
  private quantizedWeight(t: TensorInfo, factor = 1): QuantizedWeight {
    const have = this.weights.get(t.name);
    if (have) return have;
    const [rows, cols] = t.dims;
    const q = sharedOnce(() => {
      const c = quantizePerColumn(floatsAt(this.src, t), rows, cols, this.weightQmax);
      return factor === 1 ? c : { values: c.values, scales: c.scales.map((v) => v * factor) };
    }, 2);
    const names: QuantizedWeight = {
      values: this.fresh(`${t.name}_quantized`),
      scale: this.fresh(`${t.name}_scale`),
      zeroPoint: this.scheme === 'tensor' ? this.fresh(`${t.name}_zero_point`) : undefined,
    };
    const values: LazyBytes = { length: rows * cols, produce: () => bytesOf(q().values) };
    const scales: LazyBytes = { length: cols * 4, produce: () => bytesOf(q().scales) };
    this.initializers.push(tensorProto(names.values, DataType.INT8, [rows, cols], values));
    this.initializers.push(tensorProto(names.scale, DataType.FLOAT, [cols], scales));
    // quantize_dynamic writes W's zero points (all 0) explicitly; the row scheme leaves them out (0).
    if (names.zeroPoint) this.initializers.push(tensorProto(names.zeroPoint, DataType.INT8, [cols], new Uint8Array(cols)));
    this.weights.set(t.name, names);
    return names;
  }

  private quantizeRows(x: string): RowQuantized {
    const have = this.rowQuantized.get(x);
    if (have) return have;
    // max |x| of the row as max(max x, -min x): two reads of x, no |x| tensor written.
    const amax = this.op('Max', [
      this.reduceLast('ReduceMax', x),
      this.op('Neg', [this.reduceLast('ReduceMin', x)]),
      this.float('row_min_amax', ROW_MIN_AMAX),
    ]);
    const scale = this.op('Div', [amax, this.float('row_qmax', ROW_ACTIVATION_QMAX)]);
    // x * (127 / amax) first (one IEEE product per element: the same on every CPU, and cheaper than a
    // division), then QuantizeLinear with scale 1 (exact): a scale per row, which QuantizeLinear has
    // only along one axis, so only after a reshape to [M, K] that would hide the [batch, sequence]
    // dims from onnxruntime's shape inference, and with them its LayerNorm fusion downstream.
    const scaled = this.op('Mul', [x, this.op('Div', [this.float('row_qmax', ROW_ACTIVATION_QMAX), amax])]);
    const values = this.op('QuantizeLinear', [scaled, this.one(), this.zeroPoint128()]);
    const q = { values, scale };
    this.rowQuantized.set(x, q);
    return q;
  }

  private quantizeTensor(x: string): TensorQuantized {
    let q = this.tensorQuantized.get(x);
    if (!q) {
      q = { values: this.fresh(`${x}_quantized`), scale: this.fresh(`${x}_scale`), zeroPoint: this.fresh(`${x}_zero_point`) };
      this.emitted.push(nodeProto('DynamicQuantizeLinear', [x], [q.values, q.scale, q.zeroPoint], this.fresh(`${x}_QuantizeLinear`)));
      this.tensorQuantized.set(x, q);
    }
    return q;
  }
}

/** The graph with the replaced nodes swapped for their int8 versions and the new initializers added. */
function writeGraph(src: ByteSource, g: GraphIndex, r: Rewrite, added: MessageWriter[]): MessageWriter {
  const graph = new MessageWriter();
  for (const f of g.fields) {
    if (f.field === GraphField.NODE && r.replaced.has(f)) {
      for (const m of r.replaced.get(f)!) graph.message(GraphField.NODE, m);
      continue;
    }
    if (f.field === GraphField.INITIALIZER) {
      const t = g.tensorAt.get(f)!;
      // Dropped once every reader of the float weight reads the int8 copy instead.
      if ((r.replacedUses.get(t.name) ?? 0) > 0 && r.replacedUses.get(t.name) === g.uses.get(t.name)) continue;
    }
    graph.raw(copyOf(src, f));
  }
  for (const t of added) graph.message(GraphField.INITIALIZER, t);
  return graph;
}

/**
 * The model around the new graph: onnxruntime's contrib domain imported after the last opset import
 * where a node needs it, and the scheme named in metadata_props (replacing any earlier entry).
 */
function writeModel(src: ByteSource, top: Field[], graph: MessageWriter, scheme: Q8Scheme, usesMsDomain: boolean): MessageWriter {
  const model = new MessageWriter();
  const importsMs = top.some((f) => f.field === ModelField.OPSET_IMPORT && opsetDomain(src, f) === MS_DOMAIN);
  for (const f of top) {
    if (f.field === ModelField.OPSET_IMPORT && usesMsDomain && !importsMs && f === top.filter((t) => t.field === ModelField.OPSET_IMPORT).pop()) {
      model.raw(copyOf(src, f));
      model.message(ModelField.OPSET_IMPORT, new MessageWriter().string(1, MS_DOMAIN).varint(2, 1));
      continue;
    }
    if (f.field === ModelField.GRAPH) {
      model.message(ModelField.GRAPH, graph);
      continue;
    }
    // an earlier entry naming the scheme (a StringStringEntryProto: its key is field 1) gives way to ours
    if (f.field === ModelField.METADATA_PROPS && [Q8_SCHEME_KEY, Q8_ROW_GRAPH_KEY].includes(stringFieldOf(src, f, 1))) continue;
    model.raw(copyOf(src, f));
  }
  model.message(ModelField.METADATA_PROPS, metadataEntry(Q8_SCHEME_KEY, scheme));
  if (scheme === 'row') model.message(ModelField.METADATA_PROPS, metadataEntry(Q8_ROW_GRAPH_KEY, String(Q8_ROW_GRAPH)));
  return model;
}

/**
 * Through the project's atomic write (src/util/atomic-write.ts): streamed to a temporary file,
 * fsync'ed and renamed into place once complete, so an interrupted run leaves no model. A cleanup of
 * its own (try/finally) did not run when the process ended through process.exit while writing (an
 * 'exit' hook runs then, a finally does not) and left a file as large as the model beside it; the
 * atomic write removes its temporary file at exit. A symbolic link at -o is followed (its target
 * replaced, the link kept).
 */
function writeModelFile(model: MessageWriter, outFile: string): { sha256: string; bytes: number } {
  const out = new AtomicFile(outFile);
  try {
    const written = writeMessage(model, (bytes) => out.write(bytes));
    out.commit();
    return written;
  } catch (e) {
    // A lazy part that failed (a short read of the fp32 file) is not an I/O error of the write: the
    // temporary file is dropped here, and the error goes on as it is.
    out.abort();
    throw e;
  }
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
