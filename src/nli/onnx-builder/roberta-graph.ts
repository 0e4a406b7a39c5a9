import {
  DataType,
  floatAttr,
  graphProto,
  modelProto,
  nodeProto,
  tensorProto,
  valueInfoProto,
  type AttrValue,
  type DataTypeCode,
} from './onnx-proto.js';
import type { LazyBytes, MessageWriter } from './protobuf.js';
import type { RobertaSizes } from './roberta-config.js';
import { float32ToFloat16, toHalfBits } from './float16.js';
import { generateWeight, numel, robertaWeightSpecs, type WeightInitOptions, type WeightSpec } from './roberta-weights.js';

/** Names the Hugging Face optimum export uses, so runners written for the hub model need no change. */
export const INPUT_IDS = 'input_ids';
export const ATTENTION_MASK = 'attention_mask';
export const LOGITS = 'logits';

/**
 * fp32: float32 weights and compute. fp16: float16 weights *and* compute, float32 logits out — what
 * a float16 conversion of the fp32 export with kept I/O types produces (onnxconverter-common's
 * convert_float_to_float16(keep_io_types=True), the recipe behind the hub's model_fp16.onnx). That
 * conversion's default block list holds neither Softmax nor LayerNormalization, so both run on
 * float16 tensors here too; ONNX Runtime's CUDA kernels for them accumulate in float32 internally.
 * The attention mask's fill value is float16's lowest finite value (-65504), where the conversion
 * clamps float32's. The int8 files (q8, q8-tensor) are not built here: quantize.ts rewrites the fp32
 * graph, as it does any fp32 export.
 */
export type WeightDtype = 'fp32' | 'fp16' | 'q8' | 'q8-tensor';
/** The dtypes this graph builder writes directly. */
export type GraphDtype = 'fp32' | 'fp16';

export interface RobertaGraphOptions extends WeightInitOptions {
  dtype: GraphDtype;
  producerVersion: string;
}

/** Collects nodes and initializers; hands out unique value names so the graph code reads like the math. */
export class GraphBuilder {
  readonly nodes: MessageWriter[] = [];
  readonly initializers: MessageWriter[] = [];
  private counter = 0;

  op(opType: string, inputs: string[], attrs: Record<string, AttrValue> = {}, hint = opType): string {
    const out = `${hint}_${this.counter++}`;
    this.nodes.push(nodeProto(opType, inputs, [out], `${opType}_${this.counter}`, attrs));
    return out;
  }

  constInt64(name: string, values: number[], dims: number[]): string {
    const raw = new Uint8Array(new BigInt64Array(values.map((v) => BigInt(v))).buffer);
    this.initializers.push(tensorProto(name, DataType.INT64, dims, raw));
    return name;
  }

  /** A scalar in the compute dtype. */
  constFloat(name: string, value: number, dtype: GraphDtype = 'fp32'): string {
    if (dtype === 'fp16') {
      this.initializers.push(tensorProto(name, DataType.FLOAT16, [], new Uint8Array(new Uint16Array([toHalfBits(value)]).buffer)));
    } else {
      this.initializers.push(tensorProto(name, DataType.FLOAT, [], new Uint8Array(new Float32Array([value]).buffer)));
    }
    return name;
  }

  /** A weight whose bytes are generated only when the file is written. */
  weight(spec: WeightSpec, opts: RobertaGraphOptions): string {
    const n = numel(spec.shape);
    if (opts.dtype === 'fp16') {
      const lazy: LazyBytes = {
        length: n * 2,
        produce: () => new Uint8Array(float32ToFloat16(generateWeight(spec, opts)).buffer),
      };
      this.initializers.push(tensorProto(spec.name, DataType.FLOAT16, spec.shape, lazy));
      return spec.name;
    }
    const lazy: LazyBytes = { length: n * 4, produce: () => new Uint8Array(generateWeight(spec, opts).buffer) };
    this.initializers.push(tensorProto(spec.name, DataType.FLOAT, spec.shape, lazy));
    return spec.name;
  }

  /**
   * The collected graph as a model with the hub export's interface (input_ids and attention_mask,
   * int64 [batch, sequence], in; float logits [batch, numLabels] out): what lets `--model DIR` load
   * any of our builds like the real export.
   */
  nliModel(name: string, numLabels: number, producerVersion: string, docString: string): MessageWriter {
    const dynamic = ['batch_size', 'sequence_length'];
    const graph = graphProto({
      name,
      nodes: this.nodes,
      initializers: this.initializers,
      inputs: [valueInfoProto(INPUT_IDS, DataType.INT64, dynamic), valueInfoProto(ATTENTION_MASK, DataType.INT64, dynamic)],
      outputs: [valueInfoProto(LOGITS, DataType.FLOAT, ['batch_size', numLabels])],
    });
    return modelProto(graph, { name: 'todeval-onnx-builder', version: producerVersion }, docString);
  }
}

/** float32 most-negative value: HF's additive mask is (1 - mask) * finfo(float32).min. */
const FLOAT32_MIN = -3.4028234663852886e38;
/** float16's lowest finite value: the float16 conversion clamps FLOAT32_MIN to it. */
const FLOAT16_MIN = -65504;

/**
 * ModelProto of RobertaForSequenceClassification with seeded random weights. Mirrors HF's forward:
 * position ids from the non-pad mask of input_ids, additive attention mask, post-LN encoder layers
 * with exact (erf) GELU, classifier head on the <s> token.
 */
export function buildRobertaModel(s: RobertaSizes, opts: RobertaGraphOptions): MessageWriter {
  const g = new GraphBuilder();
  const specs = new Map(robertaWeightSpecs(s).map((w) => [w.name, w]));
  const W = (name: string): string => {
    const spec = specs.get(name);
    if (!spec) throw new Error(`no weight spec ${name}`);
    return g.weight(spec, opts);
  };
  const H = s.hiddenSize;
  const headDim = H / s.numHeads;

  const padId = g.constInt64('const_pad_token_id', [s.padTokenId], []);
  const seqAxis = g.constInt64('const_axis_1', [1], []);
  const zeroIndex = g.constInt64('const_index_0', [0], []);
  const maskAxes = g.constInt64('const_axes_1_2', [1, 2], [2]);
  const splitHeads = g.constInt64('const_shape_split_heads', [0, 0, s.numHeads, headDim], [4]);
  const mergeHeads = g.constInt64('const_shape_merge_heads', [0, 0, H], [3]);
  const fp16 = opts.dtype === 'fp16';
  const computeType = fp16 ? DataType.FLOAT16 : DataType.FLOAT;
  const one = g.constFloat('const_one', 1, opts.dtype);
  const maskFill = g.constFloat('const_mask_fill', fp16 ? FLOAT16_MIN : FLOAT32_MIN, opts.dtype);
  const scale = g.constFloat('const_attention_scale', 1 / Math.sqrt(headDim), opts.dtype);
  const invSqrt2 = g.constFloat('const_inv_sqrt2', Math.SQRT1_2, opts.dtype);
  const half = g.constFloat('const_half', 0.5, opts.dtype);

  const linear = (x: string, prefix: string): string => {
    const hint = prefix.split('.').slice(-2).join('_');
    return g.op('Add', [g.op('MatMul', [x, W(`${prefix}.weight`)]), W(`${prefix}.bias`)], {}, hint);
  };
  const embed = (table: string, indices: string, hint: string): string => g.op('Gather', [W(table), indices], { axis: 0 }, hint);
  const layerNorm = (x: string, prefix: string): string =>
    g.op('LayerNormalization', [x, W(`${prefix}.weight`), W(`${prefix}.bias`)], {
      axis: -1,
      epsilon: floatAttr(s.layerNormEps),
    });

  // Embeddings. Positions count only non-pad tokens of input_ids (not attention_mask), like HF.
  const notPad = g.op('Cast', [g.op('Not', [g.op('Equal', [INPUT_IDS, padId])])], { to: DataType.INT64 });
  const positions = g.op('Add', [g.op('Mul', [g.op('CumSum', [notPad, seqAxis]), notPad]), padId], {}, 'position_ids');
  const words = embed('roberta.embeddings.word_embeddings.weight', INPUT_IDS, 'word_embeddings');
  const pos = embed('roberta.embeddings.position_embeddings.weight', positions, 'position_embeddings');
  // token_type_ids are all 0 (RoBERTa has one type): row 0 of the table, broadcast over [B, S, H].
  const tokenType = embed('roberta.embeddings.token_type_embeddings.weight', zeroIndex, 'token_type_embeddings');
  let h = layerNorm(g.op('Add', [g.op('Add', [words, pos]), tokenType]), 'roberta.embeddings.LayerNorm');

  // [B, S] mask -> additive [B, 1, 1, S]: 0 where attended, float32 min where masked.
  const maskF = g.op('Cast', [ATTENTION_MASK], { to: computeType });
  const additiveMask = g.op('Unsqueeze', [g.op('Mul', [g.op('Sub', [one, maskF]), maskFill]), maskAxes], {}, 'extended_mask');

  for (let i = 0; i < s.numLayers; i++) {
    const p = `roberta.encoder.layer.${i}`;
    const heads = (x: string, perm: number[]): string =>
      g.op('Transpose', [g.op('Reshape', [x, splitHeads])], { perm });
    const q = heads(linear(h, `${p}.attention.self.query`), [0, 2, 1, 3]);
    const kT = heads(linear(h, `${p}.attention.self.key`), [0, 2, 3, 1]);
    const v = heads(linear(h, `${p}.attention.self.value`), [0, 2, 1, 3]);
    const scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, kT]), scale]), additiveMask], {}, 'scores');
    const probs = g.op('Softmax', [scores], { axis: -1 });
    const context = g.op('Reshape', [g.op('Transpose', [g.op('MatMul', [probs, v])], { perm: [0, 2, 1, 3] }), mergeHeads]);
    const attnOut = layerNorm(g.op('Add', [linear(context, `${p}.attention.output.dense`), h]), `${p}.attention.output.LayerNorm`);
    const inter = linear(attnOut, `${p}.intermediate.dense`);
    // Exact GELU, 0.5 * x * (1 + erf(x / sqrt 2)), as HF's "gelu".
    const gelu = g.op('Mul', [g.op('Mul', [inter, g.op('Add', [g.op('Erf', [g.op('Mul', [inter, invSqrt2])]), one])]), half]);
    h = layerNorm(g.op('Add', [linear(gelu, `${p}.output.dense`), attnOut]), `${p}.output.LayerNorm`);
  }

  const cls = g.op('Gather', [h, zeroIndex], { axis: 1 }, 'cls');
  const pooled = g.op('Tanh', [linear(cls, 'classifier.dense')]);
  const logitsRaw = linear(pooled, 'classifier.out_proj');
  // Kept I/O types: the logits leave the graph as float32 whatever the compute dtype.
  if (fp16) g.nodes.push(nodeProto('Cast', [logitsRaw], [LOGITS], 'logits_output', { to: DataType.FLOAT }));
  else g.nodes.push(nodeProto('Identity', [logitsRaw], [LOGITS], 'logits_output'));

  return g.nliModel(
    'roberta_random',
    s.numLabels,
    opts.producerVersion,
    `RobertaForSequenceClassification with random weights (seed ${opts.seed}, std ${opts.std}, ${opts.dtype})`,
  );
}

export type { DataTypeCode };
