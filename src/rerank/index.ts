// SGSAcc fidelity reranking of candidate utterances from several systems.
export { rerank, rerankPairBound, rerankWith, pickBest } from './rerank.js';
export type { RerankItem, RerankAction, RerankCandidate, RerankOptions, RerankResult, CandidateFidelity } from './rerank.js';
export { RANK_BY, RERANK_DEFAULTS, rankNeedsHallucination, resolveRerankConfig } from './config.js';
export type { RankBy, RerankConfig, RerankSettings } from './config.js';
export { invalidTurnReasons, itemWhere, readRerankInput, refuseUncoveredActs, resolveRerankItem, turnFromRawItem } from './input.js';
export type { RawRerankItem, RerankResolver, ItemPlace } from './input.js';
export { rerankSignature } from './signature.js';
export type { RerankGround } from './signature.js';
