import type { NliModelSignature } from '../nli/types.js';
import { makeSignature, type Signature } from '../util/signature.js';
import { contextControlSignature } from '../metrics/sgsacc/signature.js';
import { contextControlOn } from '../metrics/sgsacc/context-control.js';
import type { RankBy } from './rerank.js';

export interface RerankConfig {
  model: NliModelSignature;
  rulesHash: string;
  dataset: string;
  context: boolean;
  /** The context-only control (on by default in rerank). */
  contextControl?: boolean;
  /** Tie-break order of systems; undefined: the order of each item's candidates. */
  systems?: string[];
  /** The facts => text check (rerank --hallucination). */
  hallucination?: boolean;
  rankBy?: RankBy;
}

/**
 * The signature of a reranking, shared by `todeval rerank` and the service so that the same
 * configuration signs its results identically wherever they were computed.
 */
export function rerankSignature(c: RerankConfig): Signature {
  return makeSignature({
    metric: 'sgsacc-rerank',
    model: c.model.modelId,
    revision: c.model.revision,
    dtype: c.model.dtype,
    rules: c.rulesHash,
    dataset: c.dataset,
    context: c.context,
    // Present when on: files written before the control existed ran without it.
    contextControl: contextControlSignature(contextControlOn(c.context, c.contextControl)),
    systems: c.systems?.join(',') ?? 'item-order',
    // Absent in the default mode, so files written before these options existed stay valid.
    hallucination: c.hallucination ? true : undefined,
    rankBy: c.rankBy === undefined || c.rankBy === 'fidelity' ? undefined : c.rankBy,
  });
}
