import type { RobertaSizes } from '../../src/nli/onnx-builder/index.js';

/**
 * A plain-TypeScript RobertaForSequenceClassification forward pass, written from the HF modeling code
 * independently of the ONNX graph: loops instead of ops, masked keys skipped rather than added as a
 * large negative, positions counted directly. Agreement with onnxruntime checks the graph.
 */
export type WeightLookup = (name: string) => Float32Array;

/** erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): plenty for a 1e-3 comparison. */
function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign * (1 - poly * Math.exp(-a * a));
}

/** y = x W + b with W stored [in, out] (the builder's layout). */
function linear(x: Float64Array, w: Float32Array, b: Float32Array, inDim: number, outDim: number): Float64Array {
  const y = new Float64Array(outDim);
  for (let o = 0; o < outDim; o++) y[o] = b[o];
  for (let i = 0; i < inDim; i++) {
    const xi = x[i];
    for (let o = 0; o < outDim; o++) y[o] += xi * w[i * outDim + o];
  }
  return y;
}

function layerNorm(x: Float64Array, gamma: Float32Array, beta: Float32Array, eps: number): Float64Array {
  let mean = 0;
  for (const v of x) mean += v;
  mean /= x.length;
  let variance = 0;
  for (const v of x) variance += (v - mean) ** 2;
  variance /= x.length;
  const inv = 1 / Math.sqrt(variance + eps);
  return x.map((v, i) => (v - mean) * inv * gamma[i] + beta[i]);
}

/** Logits of one sequence; `mask[i] = 0` marks padding (right-padded, like the tokenizer does). */
export function referenceLogits(s: RobertaSizes, W: WeightLookup, ids: number[], mask = ids.map(() => 1)): number[] {
  const H = s.hiddenSize;
  const headDim = H / s.numHeads;
  const word = W('roberta.embeddings.word_embeddings.weight');
  const posTable = W('roberta.embeddings.position_embeddings.weight');
  const tokenType = W('roberta.embeddings.token_type_embeddings.weight');

  // HF create_position_ids_from_input_ids: non-pad tokens are numbered from padding_idx + 1.
  let count = 0;
  const positions = ids.map((id) => (id === s.padTokenId ? s.padTokenId : s.padTokenId + ++count));
  let hidden = ids.map((id, t) => {
    const e = new Float64Array(H);
    for (let k = 0; k < H; k++) e[k] = word[id * H + k] + posTable[positions[t] * H + k] + tokenType[k];
    return layerNorm(e, W('roberta.embeddings.LayerNorm.weight'), W('roberta.embeddings.LayerNorm.bias'), s.layerNormEps);
  });

  const lin = (x: Float64Array, prefix: string, inDim: number, outDim: number): Float64Array =>
    linear(x, W(`${prefix}.weight`), W(`${prefix}.bias`), inDim, outDim);
  const ln = (x: Float64Array, prefix: string): Float64Array =>
    layerNorm(x, W(`${prefix}.weight`), W(`${prefix}.bias`), s.layerNormEps);

  for (let l = 0; l < s.numLayers; l++) {
    const p = `roberta.encoder.layer.${l}`;
    const q = hidden.map((x) => lin(x, `${p}.attention.self.query`, H, H));
    const k = hidden.map((x) => lin(x, `${p}.attention.self.key`, H, H));
    const v = hidden.map((x) => lin(x, `${p}.attention.self.value`, H, H));
    const attended = ids.map((_, j) => j).filter((j) => mask[j] === 1);
    hidden = hidden.map((x, t) => {
      const context = new Float64Array(H);
      for (let h = 0; h < s.numHeads; h++) {
        const off = h * headDim;
        const scores = attended.map((j) => {
          let dot = 0;
          for (let d = 0; d < headDim; d++) dot += q[t][off + d] * k[j][off + d];
          return dot / Math.sqrt(headDim);
        });
        const max = Math.max(...scores);
        const exps = scores.map((sc) => Math.exp(sc - max));
        const sum = exps.reduce((a, b) => a + b, 0);
        attended.forEach((j, n) => {
          for (let d = 0; d < headDim; d++) context[off + d] += (exps[n] / sum) * v[j][off + d];
        });
      }
      const attnOut = ln(lin(context, `${p}.attention.output.dense`, H, H).map((y, i) => y + x[i]), `${p}.attention.output.LayerNorm`);
      const inter = lin(attnOut, `${p}.intermediate.dense`, H, s.intermediateSize).map((y) => 0.5 * y * (1 + erf(y / Math.SQRT2)));
      return ln(lin(inter, `${p}.output.dense`, s.intermediateSize, H).map((y, i) => y + attnOut[i]), `${p}.output.LayerNorm`);
    });
  }
  const pooled = lin(hidden[0], 'classifier.dense', H, H).map(Math.tanh);
  return Array.from(lin(pooled, 'classifier.out_proj', H, s.numLabels));
}
