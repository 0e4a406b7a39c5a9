// Library entry point: each stage exports its public API from here.
export * from './adapters/types.js';
export * from './nli/types.js';
export * from './report/signature.js';
export * from './util/errors.js';
export { resolveDataDir, findDataDir } from './data/data-dir.js';
export { Evaluator, type EvaluatorOptions, type MwzEvaluation } from './metrics/mwz/evaluator.js';
