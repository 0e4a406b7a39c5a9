import type { DatasetName } from '../adapters/load.js';
import type { Turn } from '../adapters/types.js';
import { runPairBound, type RecordStore, type SgsaccData, type TurnReferences, type TurnScore } from '../metrics/sgsacc/index.js';
import type { NliRunner } from '../nli/runner.js';
import { nliSignature } from '../nli/signature.js';
import { argmaxLabel, type NliLabel, type NliPair, type NliProbs } from '../nli/types.js';
import type { Signature } from '../util/signature.js';
import { referencesUnder, scoreSgsacc, sgsaccReferencesSignature, sgsaccResultSignature } from '../pipeline/sgsacc.js';
import { invalidTurnReasons, itemWhere, refuseUncoveredActs, rerankPairBound, rerankSignature, rerankWith, resolveRerankItem, turnFromRawItem, type RawRerankItem, type RerankResolver, type RerankResult } from '../rerank/index.js';
import { InputError } from '../util/errors.js';
import { OverloadedError, PairAdmission } from './admission.js';
import { requestRerankConfig, type ServeConfig } from './config.js';
import type { ServeLimits } from './limits.js';

/** A /v1/score item: the utterance to judge, with inline actions or a dataset turn id. */
export interface RawScoreItem extends Omit<RawRerankItem, 'candidates'> {
  utterance: string;
  /** Gold utterance of inline actions, used to select and validate their references. */
  ground_truth?: string;
}

export interface ServiceConfig {
  runner: NliRunner;
  data: SgsaccData;
  dataset: DatasetName;
  /** What the routes run with (resolveServeConfig): /v1/score's SGSAcc config, /v1/rerank's settings. */
  routes: ServeConfig;
  /** Stored references (`--references`) for dataset turns; extended with the turns computed here. */
  references?: RecordStore<TurnReferences>;
  limits: ServeLimits;
  /** Pairs the model answers per second of work lately (undefined before measured), for Retry-After. */
  pairsPerSecond: () => number | undefined;
}

// Error messages name where in the body an item is, so `file` is left empty.
const BODY = '';

/**
 * What the HTTP routes call: the library's rerank and SGSAcc scoring over one shared NLI runner,
 * so pairs of concurrent requests share batches and the pair cache. Every operation first reserves
 * the pairs it may need (PairAdmission) and is answered within the per-request timeout.
 */
export class FaithfulnessService {
  readonly admission: PairAdmission;
  private readonly resolver: RerankResolver;

  constructor(readonly config: ServiceConfig) {
    this.admission = new PairAdmission(config.limits.maxPendingPairs, config.pairsPerSecond);
    const { data } = config;
    this.resolver = {
      schema: data.schema,
      dataset: config.dataset,
      expand: (turn: Turn) => data.expand([turn])[0].actions,
      turnsById: new Map(data.loaded.turns.map((t) => [t.id, t])),
      // The data is loaded skipping invalid turns (cli/commands/serve.ts): a request naming one gets its reason.
      invalidTurns: invalidTurnReasons(data.loaded.invalid),
    };
  }

  get runner(): NliRunner {
    return this.config.runner;
  }

  async rerank(raws: RawRerankItem[], systems?: string[]): Promise<{ signature: Signature; items: RerankResult[] }> {
    refuseDuplicateIds(raws);
    const items = raws.map((raw, i) => resolveRerankItem(raw, this.resolver, BODY, `body/items/${i}`));
    if (systems) {
      const seen = new Set(items.flatMap((it) => it.candidates.map((c) => c.system)));
      const unknown = systems.filter((s) => !seen.has(s));
      if (unknown.length > 0) throw new InputError(`body/systems names ${unknown.map((s) => `"${s}"`).join(', ')}, not a system of any candidate`);
    }
    // A request is an edge: the service's settings with its own tie-break order.
    const config = requestRerankConfig(this.config.routes, systems);
    const results = await this.admitted(rerankPairBound(items, config), () => rerankWith(items, this.runner, config));
    const signature = rerankSignature(config, { model: this.runner.modelSignature, rulesHash: this.config.data.rulesHash, dataset: this.config.dataset, schema: this.config.data.loaded.schemaLabel });
    return { signature, items: results };
  }

  /**
   * Each item's utterance scored by the SGSAcc pipeline score and evaluate run (scoreSgsacc), under
   * the item's position: dataset turns take their references from the store (computed and stored
   * when missing), inline actions have them selected on their ground_truth (without one, against
   * the first candidate, unvalidated), as score does for a turn of a dialogues file.
   */
  async score(raws: RawScoreItem[]): Promise<{ signature: Signature; items: TurnScore[] }> {
    refuseDuplicateIds(raws);
    const config = this.config.routes.sgsacc;
    const resolved = raws.map((raw, i) => {
      const at = `body/items/${i}`;
      const turn = turnFromRawItem(raw, this.resolver, BODY, at, raw.ground_truth ?? '');
      const [sgs] = this.config.data.expand([turn]);
      if (raw.actions) refuseUncoveredActs(sgs.actions, this.config.dataset, BODY, itemWhere(raw, at));
      return { raw, sgs };
    });
    // Scored under positional ids: two items may judge different utterances for one dataset turn.
    const turns = resolved.map((r, i) => ({ ...r.sgs, id: `#${i}` }));
    const utterances = new Map(resolved.map((r, i) => [`#${i}`, r.raw.utterance]));
    // The store holds a dataset turn's references as `score` selects them, under the turn's own
    // previous user turn (the context pass reads it). An item that gives another context has them
    // selected under that one: it neither reads the store nor extends it (was: stored as the turn's,
    // and every later request and `score --references` run took them).
    const ownContext = (r: { sgs: { id: string; previousUserUtterance: string } }) => r.sgs.previousUserUtterance === this.resolver.turnsById?.get(r.sgs.id)?.previousUserUtterance;
    const storedAs = resolved.map((r) => (r.raw.actions === undefined && ownContext(r) ? r.sgs.id : undefined));
    const run = {
      references: referencesUnder(this.config.references, turns.map((t) => t.id), storedAs),
      chunkTurns: turns.length,
    };
    const items = await this.admitted(runPairBound(turns, utterances, { ...config, ...run }), async () => {
      const { run: result } = await scoreSgsacc(turns, utterances, this.config.data, this.runner, config, run);
      return result.scores.map((s, i) => ({ ...s, id: raws[i].id }));
    });
    const refsSig = sgsaccReferencesSignature(this.runner.modelSignature, this.config.data, this.config.dataset, config);
    return { signature: sgsaccResultSignature(refsSig, 'sgsacc-turns', config), items };
  }

  async nli(pairs: NliPair[]): Promise<{ signature: Signature; results: (NliProbs & { label: NliLabel })[] }> {
    const probs = await this.admitted(pairs.length, () => this.runner.score(pairs));
    return { signature: this.nliSignature(), results: probs.map((p) => ({ ...p, label: argmaxLabel(p) })) };
  }

  nliSignature(): Signature {
    return nliSignature(this.runner);
  }

  /**
   * Runs `work` once its pairs are admitted. After the timeout the caller gets a 503, but the pairs
   * stay reserved until the work settles: they are still in the runner's queue, and their results
   * land in the cache for the retry.
   */
  private async admitted<T>(pairs: number, work: () => Promise<T>): Promise<T> {
    const release = this.admission.reserve(pairs);
    const running = work();
    running.then(release, release);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Its pairs are still computed and cached: retry once the backlog has cleared.
        const seconds = this.admission.retryAfterSeconds();
        reject(new OverloadedError(`not answered within --timeout-ms ${this.config.limits.timeoutMs}; the pairs are still computed and cached, retry in ${seconds} s`, seconds));
      }, this.config.limits.timeoutMs);
    });
    try {
      return await Promise.race([running, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function refuseDuplicateIds(raws: { id: string }[]): void {
  const seen = new Map<string, number>();
  raws.forEach((r, i) => {
    const first = seen.get(r.id);
    if (first !== undefined) throw new InputError(`body/items/${i}/id: duplicate item id "${r.id}" (also body/items/${first}/id)`);
    seen.set(r.id, i);
  });
}
