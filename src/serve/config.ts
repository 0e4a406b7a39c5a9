import { resolveSgsaccConfig, type SgsaccConfig, type SgsaccSettings } from '../metrics/sgsacc/index.js';
import { resolveRerankConfig, type RankBy, type RerankConfig, type RerankSettings } from '../rerank/index.js';

/** The service's settings as `todeval serve`'s flags or `serveFaithfulness` give them. */
export interface ServeSettings extends SgsaccSettings {
  /** /v1/rerank's order (rerank --rank-by). */
  rankBy?: RankBy;
}

/** What the routes run with: /v1/score's SGSAcc config, and /v1/rerank's settings (a request adds its tie-break order). */
export interface ServeConfig {
  sgsacc: SgsaccConfig;
  rerank: Omit<RerankSettings, 'systemOrder'>;
}

/**
 * The service's configuration, built once when it starts: the serve product's SGSAcc defaults (the
 * context-only control on), and one facts => text setting for both routes, on when asked for or
 * implied by either route (sentence granularity for /v1/score, an omission ranking for /v1/rerank).
 */
export function resolveServeConfig(s: ServeSettings): ServeConfig {
  const score = resolveSgsaccConfig(s, 'serve');
  const rerank = { context: score.context, contextControl: score.contextControl, hallucination: score.hallucination, rankBy: s.rankBy };
  const facts = resolveRerankConfig(rerank).hallucination;
  return {
    sgsacc: facts === score.hallucination ? score : resolveSgsaccConfig({ ...s, hallucination: facts }, 'serve'),
    rerank: { ...rerank, hallucination: facts },
  };
}

/** /v1/rerank's config for one request: the service's settings with the request's tie-break order. */
export function requestRerankConfig(config: ServeConfig, systems: readonly string[] | undefined): RerankConfig {
  return resolveRerankConfig({ ...config.rerank, ...(systems ? { systemOrder: systems } : {}) });
}
