/**
 * The sufficient statistics of a reranking per item (docs/significance.md): the chosen candidate's
 * realised actions over the item's actions, and, with the hallucination check, whether the chosen
 * candidate hallucinated among items whose choice was checked.
 */
import { metricItems, ratioMetric, type RunItems } from '../metrics/significance/items.js';
import type { RerankResult } from './rerank.js';

export const RERANK_METRICS = { realised: 'Actions realised', hallucination: 'Hallucination' } as const;

export function rerankItemStats(results: readonly RerankResult[]): RunItems {
  const ids = results.map((r) => r.id);
  const out: RunItems = {
    realised: metricItems(ratioMetric(RERANK_METRICS.realised), 'item', ids, null, results.map((r) => [r.chosen.fidelity, r.actions])),
  };
  const chosen = (r: RerankResult) => r.candidates.find((c) => c.system === r.chosen.system && c.text === r.chosen.text);
  if (results.length > 0 && results.every((r) => chosen(r)?.hallucinated !== undefined)) {
    out.hallucination = metricItems(
      ratioMetric(RERANK_METRICS.hallucination),
      'item',
      ids,
      null,
      results.map((r) => {
        const h = chosen(r)!.hallucinated;
        return h === null || h === undefined ? [0, 0] : [h ? 1 : 0, 1];
      }),
    );
  }
  return out;
}
