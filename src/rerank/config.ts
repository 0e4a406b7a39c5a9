import { contextControlOn } from '../metrics/sgsacc/context-control.js';
import { contextControlSignature } from '../metrics/sgsacc/signature.js';
import type { RankBy } from './rank-by.js';

/**
 * The one place rerank settings become a reranking's configuration: `rerank()`, the rerank
 * pipeline (CLI and library) and the service each resolve what they were given here once, and the
 * passes and the signature read the RerankConfig it returns, so results are signed as they were made.
 */

// RANK_BY lives in rank-by.ts (which the flag parsing of every command imports); exported here as before.
export { RANK_BY, type RankBy } from './rank-by.js';

/** The omission rankings count what the hallucination check finds, so they turn it on whatever was asked. */
export function rankNeedsHallucination(rankBy: RankBy | undefined): boolean {
  return rankBy === 'omission-hallucination' || rankBy === 'omission-sentences';
}

/** Rerank settings as a caller gives them: anything left out takes RERANK_DEFAULTS. */
export interface RerankSettings {
  /** Retry non-entailed actions with context + slot description in the premise. */
  context?: boolean;
  /**
   * The context-only control: an action realised only through the context premise is not realised
   * when the context alone (without the candidate) entails its references, so a content-free
   * candidate cannot win through the context. Checked either way: `contextOnly` says which actions
   * it concerns.
   */
  contextControl?: boolean;
  /**
   * Also check facts => text per candidate: the references it realised, joined in action order
   * (plus the context when on), must entail it. Adds `hallucinated` and `label`.
   */
  hallucination?: boolean;
  /** Ranking order. */
  rankBy?: RankBy;
  /** Tie-break order of systems; default: the order of the item's candidates. */
  systemOrder?: readonly string[];
}

/** The control is on by default: a generator could otherwise learn to win through the context. */
export const RERANK_DEFAULTS: Readonly<Required<Omit<RerankSettings, 'systemOrder'>>> = {
  context: true,
  contextControl: true,
  hallucination: false,
  rankBy: 'fidelity',
};

/** A reranking's configuration: every option decided, and what its signature records of them. */
export interface RerankConfig {
  readonly context: boolean;
  /** On only with the context pass (without the context premise there is nothing for it to check). */
  readonly contextControl: boolean;
  /** Asked for, or implied by an omission ranking (rankNeedsHallucination). */
  readonly hallucination: boolean;
  readonly rankBy: RankBy;
  /** Ranked by unsupported sentences: each candidate's sentences are checked against its facts. */
  readonly bySentence: boolean;
  readonly systemOrder?: readonly string[];
  /** What the signature records: each option absent in the default mode, so older files stay valid. */
  readonly signatureFields: {
    readonly context: boolean;
    readonly contextControl?: true;
    readonly systems: string;
    readonly hallucination?: true;
    readonly rankBy?: Exclude<RankBy, 'fidelity'>;
  };
}

/** The configuration of `settings` under RERANK_DEFAULTS and the rankings' implications. */
export function resolveRerankConfig(settings: RerankSettings): RerankConfig {
  const context = settings.context ?? RERANK_DEFAULTS.context;
  const contextControl = contextControlOn(context, settings.contextControl ?? RERANK_DEFAULTS.contextControl);
  const rankBy = settings.rankBy ?? RERANK_DEFAULTS.rankBy;
  const hallucination = (settings.hallucination ?? RERANK_DEFAULTS.hallucination) || rankNeedsHallucination(rankBy);
  const systemOrder = settings.systemOrder ? Object.freeze([...settings.systemOrder]) : undefined;
  return Object.freeze({
    context,
    contextControl,
    hallucination,
    rankBy,
    bySentence: rankBy === 'omission-sentences',
    ...(systemOrder ? { systemOrder } : {}),
    signatureFields: Object.freeze({
      context,
      // Present when on: files written before the control existed ran without it.
      ...(contextControlSignature(contextControl) ? { contextControl: true as const } : {}),
      systems: systemOrder?.join(',') ?? 'item-order',
      ...(hallucination ? { hallucination: true as const } : {}),
      ...(rankBy !== 'fidelity' ? { rankBy } : {}),
    }),
  });
}
