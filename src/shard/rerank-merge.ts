import type { RerankResult } from '../rerank/rerank.js';
import { summarizeRerank, type RerankSummary } from '../rerank/summary.js';
import { inRunOrder } from '../util/run-order.js';
import { formatSignature, type Signature } from '../util/signature.js';
import { byShardIndex, checkShardSet, runSignature, type LoadedShard } from './merge.js';
import type { ShardBlock } from './spec.js';

/** The JSON report of `todeval rerank -o FILE`. */
export interface RerankReport {
  signature: Signature;
  signatureText: string;
  summary: RerankSummary;
  /** Invalid items skipped (--skip-invalid), one line each. */
  invalid: string[];
  nli: Record<string, number>;
  items: RerankResult[];
}

/** `todeval rerank --shard K/N -o FILE`: its items, where they stand in the input, and the rest. */
export interface RerankShardReport extends RerankReport {
  shard: ShardBlock;
}

/**
 * The report of one rerank run over all the shards' items: items back in input order, the summary
 * recomputed from them as the unsharded run computes it (its mean rates are sums of fractions, so
 * they are summed in the same order rather than combined from the shards' means). Every shard
 * validated the whole input, so the invalid list is any shard's. `nli` counts work and is summed.
 */
export function mergeRerankReports(loaded: readonly LoadedShard<RerankShardReport>[]): RerankReport {
  checkShardSet(loaded);
  const shards = byShardIndex(loaded).map((s) => s.report);
  const items = inRunOrder(shards.map((r) => ({ items: r.items, at: r.shard.positions })));
  const signature = runSignature(shards[0].signature);
  const nli: Record<string, number> = {};
  for (const r of shards) for (const [k, v] of Object.entries(r.nli)) nli[k] = (nli[k] ?? 0) + v;
  return {
    signature,
    signatureText: formatSignature(signature),
    summary: summarizeRerank(items, shards[0].signature.hallucination === true),
    invalid: shards[0].invalid,
    nli,
    items,
  };
}
