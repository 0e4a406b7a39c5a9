// SGSAcc fidelity reranking of candidate utterances from several systems.
export { rerank, pickBest } from './rerank.js';
export type { RerankItem, RerankAction, RerankCandidate, RerankOptions, RerankResult, CandidateFidelity } from './rerank.js';
export { readRerankInput, resolveRerankItem } from './input.js';
export type { RawRerankItem, RerankResolver } from './input.js';
