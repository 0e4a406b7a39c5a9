import { modelSignatureFields, type NliModelSignature } from '../nli/types.js';
import { makeSignature, type Signature } from '../util/signature.js';
import type { RerankConfig } from './config.js';

/** What a reranking ran against: the model, the rules and the dataset its actions belong to. */
export interface RerankGround {
  model: NliModelSignature;
  rulesHash: string;
  dataset: string;
  /**
   * The user's own schema (`--schema`; LoadedDataset.schemaLabel), absent for the data dir's: its
   * slot descriptions are in every context premise, so another schema is another reranking.
   */
  schema?: string;
}

/**
 * The signature of a reranking, shared by `todeval rerank`, the library and the service: it reads
 * the resolved config the passes ran with, so the same configuration signs its results identically
 * wherever they were computed, and a call that left an option out is signed as what it ran.
 */
export function rerankSignature(config: RerankConfig, ground: RerankGround): Signature {
  const f = config.signatureFields;
  return makeSignature({
    metric: 'sgsacc-rerank',
    ...modelSignatureFields(ground.model),
    rules: ground.rulesHash,
    dataset: ground.dataset,
    // Absent for the data dir's schema, so rerankings signed before it was recorded keep their signatures.
    schema: ground.schema,
    context: f.context,
    contextControl: f.contextControl,
    systems: f.systems,
    hallucination: f.hallucination,
    rankBy: f.rankBy,
  });
}
