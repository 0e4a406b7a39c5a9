import { InputError } from '../../util/errors.js';
import { readJsonFile } from '../../util/json-file.js';

/** The sizes that shape a RobertaForSequenceClassification graph and its weights. */
export interface RobertaSizes {
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  intermediateSize: number;
  maxPositions: number;
  typeVocabSize: number;
  padTokenId: number;
  layerNormEps: number;
  numLabels: number;
}

/** roberta-large-mnli's config.json, so the builder works without the shared files. */
export const ROBERTA_LARGE_MNLI_CONFIG: Record<string, unknown> = {
  _num_labels: 3,
  architectures: ['RobertaForSequenceClassification'],
  attention_probs_dropout_prob: 0.1,
  bos_token_id: 0,
  eos_token_id: 2,
  hidden_act: 'gelu',
  hidden_dropout_prob: 0.1,
  hidden_size: 1024,
  id2label: { '0': 'CONTRADICTION', '1': 'NEUTRAL', '2': 'ENTAILMENT' },
  initializer_range: 0.02,
  intermediate_size: 4096,
  label2id: { CONTRADICTION: 0, NEUTRAL: 1, ENTAILMENT: 2 },
  layer_norm_eps: 1e-5,
  max_position_embeddings: 514,
  model_type: 'roberta',
  num_attention_heads: 16,
  num_hidden_layers: 24,
  pad_token_id: 1,
  type_vocab_size: 1,
  vocab_size: 50265,
};

/** Small enough for unit tests (the 50265-row embedding still dominates: ~13 MB). */
export const TINY_OVERRIDES = { numLayers: 2, hiddenSize: 64, numHeads: 4, intermediateSize: 128 } as const;

export type SizeOverrides = Partial<Pick<RobertaSizes, 'numLayers' | 'hiddenSize' | 'numHeads' | 'intermediateSize'>>;

function positiveInt(config: Record<string, unknown>, key: string, file?: string, fallback?: number): number {
  const v = config[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new InputError(`config field "${key}" must be a non-negative integer, got ${JSON.stringify(v)}`, { file });
  }
  return v;
}

export function sizesFromConfig(config: Record<string, unknown>, file?: string): RobertaSizes {
  const id2label = config.id2label as Record<string, string> | undefined;
  const numLabels = id2label ? Object.keys(id2label).length : positiveInt(config, 'num_labels', file, 3);
  const eps = config.layer_norm_eps ?? 1e-5;
  if (typeof eps !== 'number' || !(eps > 0)) throw new InputError('config field "layer_norm_eps" must be > 0', { file });
  return {
    vocabSize: positiveInt(config, 'vocab_size', file),
    hiddenSize: positiveInt(config, 'hidden_size', file),
    numLayers: positiveInt(config, 'num_hidden_layers', file),
    numHeads: positiveInt(config, 'num_attention_heads', file),
    intermediateSize: positiveInt(config, 'intermediate_size', file),
    maxPositions: positiveInt(config, 'max_position_embeddings', file),
    typeVocabSize: positiveInt(config, 'type_vocab_size', file, 1),
    padTokenId: positiveInt(config, 'pad_token_id', file, 1),
    layerNormEps: eps,
    numLabels,
  };
}

export function applyOverrides(sizes: RobertaSizes, o: SizeOverrides): RobertaSizes {
  const out = { ...sizes, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) };
  if (out.hiddenSize % out.numHeads !== 0) {
    throw new InputError(`hidden size ${out.hiddenSize} is not divisible by ${out.numHeads} heads`);
  }
  for (const k of ['numLayers', 'hiddenSize', 'numHeads', 'intermediateSize'] as const) {
    if (!(out[k] >= 1)) throw new InputError(`${k} must be >= 1, got ${out[k]}`);
  }
  return out;
}

/** config.json for the built model: the base config with the sizes actually used written over it. */
export function configWithSizes(base: Record<string, unknown>, sizes: RobertaSizes): Record<string, unknown> {
  return {
    ...base,
    hidden_size: sizes.hiddenSize,
    num_hidden_layers: sizes.numLayers,
    num_attention_heads: sizes.numHeads,
    intermediate_size: sizes.intermediateSize,
  };
}

export function readConfigFile(file: string): Record<string, unknown> {
  const parsed = readJsonFile(file);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InputError('config must be a JSON object', { file });
  }
  return parsed as Record<string, unknown>;
}
