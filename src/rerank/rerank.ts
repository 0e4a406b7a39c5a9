import { argmaxLabel, type NliScorer } from '../nli/types.js';
import { PairBatch } from '../metrics/sgsacc/batch.js';
import { contextPremise } from '../metrics/sgsacc/premise.js';
import type { SgsaccAction } from '../metrics/sgsacc/types.js';

export interface RerankCandidate {
  system: string;
  text: string;
  /** Model score of the text (e.g. sequence log-likelihood); higher is better. */
  likelihood?: number;
}

export type RerankAction = Pick<SgsaccAction, 'id' | 'service' | 'act' | 'slot' | 'values' | 'candidates' | 'slotDescription'>;

export interface RerankItem {
  id: string;
  actions: RerankAction[];
  /** Previous user turn, used by the context-augmented premise. */
  context?: string;
  candidates: RerankCandidate[];
}

export interface RerankOptions {
  scorer: NliScorer;
  /** Retry non-entailed actions with context + slot description in the premise (default true). */
  context?: boolean;
  /** Tie-break order of systems; default: the order of the item's candidates. */
  systemOrder?: string[];
  /** Items per scorer call (default 64). */
  chunkItems?: number;
}

export interface CandidateFidelity {
  system: string;
  text: string;
  likelihood?: number;
  /** Number of actions realised (entails any candidate reference of the action). */
  fidelity: number;
  /** Per action, in item order: whether it was realised. */
  realised: boolean[];
}

export interface RerankResult {
  id: string;
  chosen: { system: string; text: string; fidelity: number; likelihood?: number };
  actions: number;
  candidates: CandidateFidelity[];
}

/**
 * The SGSAcc fidelity reranker (paper Sec. 3): each candidate gets one point per dialogue action
 * it realises, judged against *any* candidate reference so no ground truth is needed; the highest
 * fidelity wins, ties go to the higher likelihood, then to the earlier system. Usable inside a
 * generation loop: pairs of many items go to the scorer in one call per pass.
 */
export async function rerank(items: RerankItem[], options: RerankOptions): Promise<RerankResult[]> {
  const chunk = Math.max(1, options.chunkItems ?? 64);
  const out: RerankResult[] = [];
  for (let i = 0; i < items.length; i += chunk) out.push(...(await rerankChunk(items.slice(i, i + chunk), options)));
  return out;
}

async function rerankChunk(items: RerankItem[], options: RerankOptions): Promise<RerankResult[]> {
  const useContext = options.context ?? true;
  const first = new PairBatch();
  // handles[item][candidate][action] = pair handles for each candidate reference
  const handles = items.map((item) =>
    item.candidates.map((cand) => item.actions.map((a) => a.candidates.map((ref) => first.add(cand.text, ref)))),
  );
  await first.run(options.scorer);
  const realised = items.map((item, i) =>
    item.candidates.map((_, c) => item.actions.map((_, a) => handles[i][c][a].some((h) => entails(first, h)))),
  );

  if (useContext) {
    const second = new PairBatch();
    const retry: Array<{ i: number; c: number; a: number; hs: number[] }> = [];
    items.forEach((item, i) =>
      item.candidates.forEach((cand, c) =>
        item.actions.forEach((action, a) => {
          if (realised[i][c][a]) return;
          const premise = contextPremise(item.context ?? '', action.slotDescription, cand.text);
          retry.push({ i, c, a, hs: action.candidates.map((ref) => second.add(premise, ref)) });
        }),
      ),
    );
    await second.run(options.scorer);
    for (const r of retry) if (r.hs.some((h) => entails(second, h))) realised[r.i][r.c][r.a] = true;
  }

  return items.map((item, i) => {
    const candidates: CandidateFidelity[] = item.candidates.map((cand, c) => ({
      system: cand.system,
      text: cand.text,
      ...(cand.likelihood !== undefined ? { likelihood: cand.likelihood } : {}),
      fidelity: realised[i][c].filter(Boolean).length,
      realised: realised[i][c],
    }));
    const best = pickBest(candidates, options.systemOrder);
    return {
      id: item.id,
      chosen: {
        system: best.system,
        text: best.text,
        fidelity: best.fidelity,
        ...(best.likelihood !== undefined ? { likelihood: best.likelihood } : {}),
      },
      actions: item.actions.length,
      candidates,
    };
  });
}

function entails(batch: PairBatch, handle: number): boolean {
  return argmaxLabel(batch.get(handle)) === 'entailment';
}

/** Highest fidelity, then highest likelihood (absent counts as lowest), then earliest system. */
export function pickBest(candidates: CandidateFidelity[], systemOrder?: string[]): CandidateFidelity {
  if (candidates.length === 0) throw new Error('rerank: item without candidates');
  const rank = (c: CandidateFidelity, pos: number) => {
    const k = systemOrder?.indexOf(c.system) ?? -1;
    return k >= 0 ? k : (systemOrder?.length ?? 0) + pos;
  };
  const indexed = candidates.map((c, pos) => ({ c, r: rank(c, pos) }));
  indexed.sort(
    (x, y) =>
      y.c.fidelity - x.c.fidelity ||
      (y.c.likelihood ?? -Infinity) - (x.c.likelihood ?? -Infinity) ||
      x.r - y.r,
  );
  return indexed[0].c;
}
