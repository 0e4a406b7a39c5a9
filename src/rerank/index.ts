// SGSAcc fidelity reranking of candidate utterances from several systems.
export { rerank, pickBest, rankNeedsHallucination, RANK_BY } from './rerank.js';
export type { RerankItem, RerankAction, RerankCandidate, RerankOptions, RerankResult, CandidateFidelity, RankBy } from './rerank.js';
export { itemWhere, readRerankInput, refuseUncoveredActs, resolveRerankItem, turnFromRawItem } from './input.js';
export type { RawRerankItem, RerankResolver, ItemPlace } from './input.js';
export { rerankSignature } from './signature.js';
