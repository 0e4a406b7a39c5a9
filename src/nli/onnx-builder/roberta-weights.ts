import type { RobertaSizes } from './roberta-config.js';
import { fillNormal, Xoshiro128 } from './rng.js';

export type WeightInit = 'normal' | 'ones' | 'zeros';

export interface WeightSpec {
  /** Hugging Face parameter name, so the graph reads like the PyTorch module. */
  name: string;
  /** Linear weights are stored [in, out] (ready for MatMul), i.e. the transpose of torch's [out, in]. */
  shape: number[];
  init: WeightInit;
}

export interface WeightInitOptions {
  seed: number;
  /** std of the normal weights; HF's initializer_range is 0.02. */
  std: number;
}

/** Every parameter of RobertaForSequenceClassification, in graph order. */
export function robertaWeightSpecs(s: RobertaSizes): WeightSpec[] {
  const H = s.hiddenSize;
  const specs: WeightSpec[] = [];
  const linear = (prefix: string, inDim: number, outDim: number): void => {
    specs.push({ name: `${prefix}.weight`, shape: [inDim, outDim], init: 'normal' });
    // Random rather than HF's zero bias init: keeps the bias path visible to the reference test.
    specs.push({ name: `${prefix}.bias`, shape: [outDim], init: 'normal' });
  };
  const layerNorm = (prefix: string): void => {
    specs.push({ name: `${prefix}.weight`, shape: [H], init: 'ones' });
    specs.push({ name: `${prefix}.bias`, shape: [H], init: 'zeros' });
  };
  specs.push({ name: 'roberta.embeddings.word_embeddings.weight', shape: [s.vocabSize, H], init: 'normal' });
  specs.push({ name: 'roberta.embeddings.position_embeddings.weight', shape: [s.maxPositions, H], init: 'normal' });
  specs.push({ name: 'roberta.embeddings.token_type_embeddings.weight', shape: [s.typeVocabSize, H], init: 'normal' });
  layerNorm('roberta.embeddings.LayerNorm');
  for (let i = 0; i < s.numLayers; i++) {
    const p = `roberta.encoder.layer.${i}`;
    linear(`${p}.attention.self.query`, H, H);
    linear(`${p}.attention.self.key`, H, H);
    linear(`${p}.attention.self.value`, H, H);
    linear(`${p}.attention.output.dense`, H, H);
    layerNorm(`${p}.attention.output.LayerNorm`);
    linear(`${p}.intermediate.dense`, H, s.intermediateSize);
    linear(`${p}.output.dense`, s.intermediateSize, H);
    layerNorm(`${p}.output.LayerNorm`);
  }
  linear('classifier.dense', H, H);
  linear('classifier.out_proj', H, s.numLabels);
  return specs;
}

export function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** The values of one weight: a pure function of (seed, name, std), whatever else is generated. */
export function generateWeight(spec: WeightSpec, opts: WeightInitOptions): Float32Array {
  const out = new Float32Array(numel(spec.shape));
  if (spec.init === 'ones') return out.fill(1);
  if (spec.init === 'zeros') return out;
  return fillNormal(out, new Xoshiro128(opts.seed, spec.name), opts.std);
}

export function countParameters(s: RobertaSizes): number {
  return robertaWeightSpecs(s).reduce((n, w) => n + numel(w.shape), 0);
}
