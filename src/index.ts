// Library entry point: the public API of each stage, in data-flow order
// (adapters -> turns -> references -> NLI pairs -> scores -> report).
export * from './adapters/types.js';
export { loadDataset } from './adapters/load.js';
export { SchemaIndex, loadSchemaFile } from './schema/schema-index.js';
export { loadRules, expandTurn, Expander, buildValueIndex } from './rules/index.js';
export type { ActionReferences, RuleSet } from './rules/types.js';

export * from './nli/types.js';
export { createNliRunner } from './nli/runner.js';
export { closeIdleInferenceThreads } from './nli/session-thread.js';
export type { NliRunner, NliRunnerOptions, NliRunnerStats } from './nli/runner.js';

export { computeSer, serIsCategorical } from './metrics/ser.js';
export type { SerReport } from './metrics/ser.js';
export { loadPredictions, comparePredictionIds } from './metrics/predictions-file.js';
export { loadSgsaccData, runSgsacc, aggregateSgsacc, aggregateHallucination } from './metrics/sgsacc/index.js';
export type { SgsaccRunOptions, SgsaccRun, SgsaccSummary, HallucinationSummary, FourWayLabel, TurnScore } from './metrics/sgsacc/index.js';
// Sentence granularity (docs/sgsacc.md): the splitter, the courtesy rule, the check and its rate.
export { splitSentences, courtesyKind, COURTESY_PATTERNS, checkSentences, aggregateSentences, sentenceConfidence } from './metrics/sgsacc/index.js';
export type { Granularity, SentenceSpan, CourtesyKind, SentenceFact, SentenceVerdict, SentenceVerdictLabel, TurnSentences, SentenceSummary, SentenceCounts } from './metrics/sgsacc/index.js';
export { rerank, RANK_BY } from './rerank/index.js';
export type { RerankItem, RerankOptions, RerankResult, RankBy } from './rerank/index.js';

export { corpusBleu, sentenceBleu, tokenize13a, type BleuOptions, type BleuResult } from './metrics/text/bleu.js';
export { BleuReferences, bleuFromSegmentStats, BLEU_STATS_WIDTH } from './metrics/text/bleu.js';
export { BLEU_TOKENIZERS, bleuTokenizer, type BleuTokenizerName } from './metrics/text/bleu-tokenizers.js';
export { compareBleu, bleuStatMetric, type BleuComparison, type BleuTestOptions } from './metrics/text/bleu-significance.js';
export { corpusChrf, sentenceChrf, ChrfReferences, chrfFromSegmentStats, chrfStatMetric, chrfStatsWidth, type ChrfOptions, type ChrfResult } from './metrics/text/chrf.js';
export { corpusTer, sentenceTer, TerReferences, terFromSegmentStats, terStatMetric, tercomTokenize, TER_STATS_WIDTH, type TerOptions, type TerResult } from './metrics/text/ter.js';
export { compareTextMetrics, TEXT_METRICS, type TextCompareOptions, type TextMetricComparison, type TextMetricKey } from './metrics/text/text-compare.js';
export { lexicalRichness } from './metrics/text/richness.js';
export { mosesTokenize, mosesDetokenize } from './metrics/text/moses.js';
export { normalizeResponse } from './metrics/text/normalize-response.js';
export { Evaluator, type EvaluatorOptions, type MwzEvaluation } from './metrics/mwz/evaluator.js';

export { loadConfig as loadGcdf1Config } from './metrics/gcdf1/config.js';
export { loadCanonicalValues } from './metrics/gcdf1/canonical-values.js';
export { makeEvaluator as makeGcdf1Evaluator, evaluateDialogue as evaluateGcdf1Dialogue, aggregate as aggregateGcdf1, loadDialogues as loadGcdf1Dialogues } from './metrics/gcdf1/evaluate.js';

// `todeval score` as one call (runScorePipeline, from the files to the written report), or in its two steps: the turns it covers, then the run (stores, scoring, report) with your runner.
export { selectScoreTurns, type ScoreSelection } from './pipeline/score-selection.js';
export { scoreSelectedTurns, type ScoreTurnsOptions, type ScoreTurnsHooks, type ScoreTurnsResult } from './pipeline/score-turns.js';
export { runScorePipeline, type ScorePipelineOptions, type ScorePipelineHooks } from './pipeline/score.js';
// The SGSAcc pipeline score, evaluate --sgsacc and serve share; the evaluate and rerank pipelines.
export { scoreSgsacc, sgsaccReferencesSignature, sgsaccResultSignature, serOfTurns, type SgsaccScoring } from './pipeline/sgsacc.js';
// The one resolved configuration of each product, built once at each edge (docs/library.md).
export { resolveSgsaccConfig, SGSACC_DEFAULTS, type SgsaccConfig, type SgsaccSettings, type SgsaccProduct } from './metrics/sgsacc/index.js';
export { resolveRerankConfig, RERANK_DEFAULTS, rerankSignature, type RerankConfig, type RerankSettings } from './rerank/index.js';
export { runEvaluatePipeline, type EvaluatePipelineOptions, type EvaluateHooks, type EvaluateResult } from './pipeline/evaluate.js';
export { evaluateSgsacc, type EvaluateSgsaccOptions } from './pipeline/evaluate-sgsacc.js';
export { runRerankPipeline, type RerankPipelineOptions, type RerankHooks } from './pipeline/rerank.js';
// `score|rerank --workers N` as library calls: the same run as N shard processes, merged; the process ends only after every shard has.
export { runScoreWorkers, runRerankWorkers, type WorkersRunOptions } from './pipeline/workers.js';
export type { WorkersHooks } from './shard/workers.js';
// `todeval compare`: the runs' per-item files read, then the paired tests (resampling that yields to signals).
export { runComparePipeline, loadCompareRuns, type ComparePipelineOptions, type CompareHooks } from './pipeline/compare.js';
// `todeval ser`, `refs`, `gcdf1`, `bleu` and `report`; the hooks every newer pipeline reports through (warnings, notices, skipped records).
export { runSerPipeline, type SerPipelineOptions, type SerDocument } from './pipeline/ser.js';
export { runRefsPipeline, type RefsPipelineOptions, type RefsResult, type ActCoverage } from './pipeline/refs.js';
export { runGcdf1Pipeline, type Gcdf1PipelineOptions, type Gcdf1Result } from './pipeline/gcdf1.js';
export { runTextMetricsPipeline, type TextMetricsPipelineOptions } from './pipeline/text-metrics.js';
export { runReportPipeline, checkReportOutputs, type ReportPipelineOptions, type ReportResult } from './pipeline/report.js';
export { readPredictions, checkPredictionIds } from './pipeline/predictions-check.js';
export type { PipelineHooks } from './pipeline/hooks.js';

// Significance: sacreBLEU's paired tests and intervals over any metric of summed per-item
// statistics, with NumPy's generator for its exact draws (docs/significance.md).
export { pairedBootstrap, pairedApproximateRandomization, bootstrapConfidence, estimateCi, DEFAULT_SEED, type PairedResult, type ResampleOptions } from './metrics/significance/paired.js';
export { NumpyGenerator, Pcg64, SeedSequence, type Seed } from './metrics/significance/pcg64.js';
export type { StatMetric, ItemStats, SystemResult, ConfidenceResult, MetricSpec } from './metrics/significance/types.js';
export { ratioMetric, metricItems, byDialogue, selectItems, type MetricItems, type RunItems, type ItemLevel } from './metrics/significance/items.js';
export { runConfidence, formatConfidence, type ConfidenceBlock, type MetricConfidence, type ResampleUnit } from './metrics/significance/confidence.js';
// Each metric's per-item sufficient statistics (docs/significance.md), and `todeval compare`.
export { turnItemStats } from './metrics/sgsacc/item-stats.js';
export { mwzItemStats, type MwzItems } from './metrics/mwz/item-stats.js';
export { gcdf1ItemStats } from './metrics/gcdf1/item-stats.js';
export { rerankItemStats } from './rerank/item-stats.js';
export { loadItemSource, itemsFileJson, type ItemSource, type ItemsFile } from './report/stats/item-files.js';
export { compareRuns, formatComparison, type CompareOptions, type CompareResult, type MetricComparison } from './report/stats/compare.js';

// Scale-out: the split `--shard K/N` makes, and `todeval merge` (docs/scale-out.md).
export { shardPositions, shardLabel, type ShardSpec } from './shard/spec.js';
export { mergeRunShards, type MergedRun, type MergeRunOptions } from './shard/run-merge.js';

// The service for generation loops (`todeval serve`), embedded in a program.
export { serveFaithfulness, type ServeOptions, type ServingFaithfulness } from './serve/embed.js';
export { DEFAULT_LIMITS as SERVE_DEFAULT_LIMITS, type ServeLimits } from './serve/limits.js';

export * from './util/signature.js';
export { buildHtmlReport, type HtmlReportInput } from './report/html/index.js';
export * from './util/errors.js';
export { resolveDataDir, findDataDir } from './data/data-dir.js';
