// SGSAcc (schema-guided semantic accuracy): reference selection, validation, context rescue, scoring.
export * from './types.js';
export { contextPremise } from './premise.js';
export { PairBatch } from './batch.js';
export { chooseReference, selectReferences } from './references.js';
export { scoreTurns } from './scoring.js';
export { aggregateSgsacc } from './aggregate.js';
export type { SgsaccSummary, SplitScores, GroupScore, SgsaccCounts } from './aggregate.js';
export { makeUnseenTest } from './domains.js';
export { RecordStore } from './store.js';
export { runSgsacc } from './run.js';
export type { SgsaccRunOptions, SgsaccRun } from './run.js';
export { toSgsaccTurns } from './from-turns.js';
export type { ExpandedAction } from './from-turns.js';
export { formatSgsaccReport, bleuSummary } from './report.js';
export type { SgsaccReport } from './report.js';
export { loadSgsaccData } from "./dataset.js";
export type { SgsaccData } from "./dataset.js";
