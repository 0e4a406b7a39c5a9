export {
  buildRandomRoberta,
  buildRandomRobertaModelDir,
  resolveTokenizerDir,
  shippedTokenizerDir,
  onnxFileName,
  ONNX_BUILDER_VERSION,
  DEFAULT_SEED,
  DEFAULT_STD,
  RANDOM_MODEL_MANIFEST,
  type BuildRandomRobertaOptions,
  type ModelSize,
  type RandomModelManifest,
} from './model-dir.js';
export {
  sizesFromConfig,
  applyOverrides,
  ROBERTA_LARGE_MNLI_CONFIG,
  TINY_OVERRIDES,
  type RobertaSizes,
  type SizeOverrides,
} from './roberta-config.js';
export { robertaWeightSpecs, generateWeight, countParameters, type WeightSpec } from './roberta-weights.js';
export { buildRobertaModel, INPUT_IDS, ATTENTION_MASK, LOGITS, type WeightDtype } from './roberta-graph.js';
export {
  buildLexicalStandin,
  LEXICAL_STANDIN,
  LEXICAL_STANDIN_MANIFEST,
  LEXICAL_STANDIN_VERSION,
  type BuildLexicalStandinOptions,
  type LexicalStandinManifest,
} from './lexical-standin.js';
export {
  buildNullStandin,
  buildNullModel,
  NULL_STANDIN,
  NULL_STANDIN_MANIFEST,
  NULL_STANDIN_VERSION,
  DEFAULT_NULL_LABEL,
  type BuildNullStandinOptions,
  type NullStandinManifest,
} from './null-standin.js';
export { buildLexicalModel, DEFAULT_LEXICAL_DECISION, type LexicalDecision, type LogitOrder } from './lexical-graph.js';
export { lexicalTables, canonicalWord, LEXICAL_STOP_WORDS, LEXICAL_NEGATION_WORDS, type LexicalTables } from './lexical-vocab.js';
export { standinKind, localModelId, isStandinModelId, type StandinKind } from './standins.js';
