import type { DatasetName } from '../adapters/load.js';
import type { Turn } from '../adapters/types.js';
import { runSgsacc, type Granularity, type ReferenceSelection, scoreTurns, selectReferences, type RecordStore, type SgsaccData, type SgsaccTurn, type TurnReferences, type TurnScore, withSentences } from '../metrics/sgsacc/index.js';
import type { NliRunner } from '../nli/runner.js';
import { argmaxLabel, type NliLabel, type NliPair, type NliProbs } from '../nli/types.js';
import { makeSignature, type Signature } from '../util/signature.js';
import { sgsaccOptions, sgsaccReferencesSignature, sgsaccResultSignature } from '../pipeline/sgsacc.js';
import { addHallucinationPremises } from '../metrics/sgsacc/hallucination.js';
import { itemWhere, refuseUncoveredActs, rerank, rerankSignature, resolveRerankItem, turnFromRawItem, type RankBy, type RawRerankItem, type RerankResolver, type RerankResult } from '../rerank/index.js';
import { splitSentences } from '../metrics/text/sentences.js';
import { InputError } from '../util/errors.js';
import { OverloadedError, PairAdmission } from './admission.js';
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
  /** Retry non-entailed actions with context + slot description (rerank and score). */
  context: boolean;
  /** The context-only control (rerank and score; SgsaccOptions.contextControl): on in the service by default. */
  contextControl: boolean;
  /** Validate references against the ground truth (score). */
  validation: boolean;
  /** How score picks each action's entailment reference (score --reference-selection). */
  referenceSelection: ReferenceSelection;
  /** Also check facts => text: the references must entail the utterance (score --hallucination, rerank). */
  hallucination: boolean;
  /** 'sentence': /v1/score also checks each sentence against each fact (score --granularity sentence; needs hallucination). */
  granularity?: Granularity;
  /** Rerank order (rerank --rank-by); default fidelity. */
  rankBy?: RankBy;
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
  private readonly factor: number;

  constructor(readonly config: ServiceConfig) {
    this.admission = new PairAdmission(config.limits.maxPendingPairs, config.pairsPerSecond);
    const { data } = config;
    this.resolver = {
      schema: data.schema,
      dataset: config.dataset,
      expand: (turn: Turn) => data.expand([turn])[0].actions,
      turnsById: new Map(data.loaded.turns.map((t) => [t.id, t])),
    };
    // The context pass may re-ask every pair of the first with another premise, and the control
    // pass each of those once more without the utterance.
    this.factor = config.context ? 3 : 1;
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
    // With the hallucination direction each candidate adds one pair (its facts => text check).
    const perCandidate = (it: (typeof items)[number]) => it.actions.reduce((m, a) => m + a.candidates.length, 0) + (this.config.hallucination ? 1 : 0);
    const pairs = items.reduce((n, it) => n + it.candidates.length * perCandidate(it), 0) * this.factor;
    const { hallucination, rankBy, context, contextControl } = this.config;
    const results = await this.admitted(pairs, () => rerank(items, { scorer: this.runner, context, contextControl, systemOrder: systems, hallucination, rankBy }));
    const signature = rerankSignature({ model: this.runner.modelSignature, rulesHash: this.config.data.rulesHash, dataset: this.config.dataset, context, contextControl, systems, hallucination, rankBy });
    return { signature, items: results };
  }

  async score(raws: RawScoreItem[]): Promise<{ signature: Signature; items: TurnScore[] }> {
    refuseDuplicateIds(raws);
    // Sentence granularity is the service's own step below (checkSentences), not a run option here.
    const { validation, context, referenceSelection, hallucination, contextControl } = this.config;
    const options = sgsaccOptions({ validation, context, referenceSelection, hallucination, contextControl });
    const resolved = raws.map((raw, i) => {
      const at = `body/items/${i}`;
      const turn = turnFromRawItem(raw, this.resolver, BODY, at, raw.ground_truth ?? '');
      const [sgs] = this.config.data.expand([turn]);
      if (raw.actions) refuseUncoveredActs(sgs.actions, this.config.dataset, BODY, itemWhere(raw, at));
      return { raw, sgs };
    });
    const stored = this.config.references?.done;
    const sentences = this.config.granularity === 'sentence' && options.hallucination;
    let pairs = 0;
    for (const { raw, sgs } of resolved) {
      const scoring = sgs.actions.length;
      const selection = stored?.has(sgs.id) && !raw.actions ? 0 : sgs.actions.reduce((n, a) => n + a.candidates.length + (options.validation ? a.negatives.length : 0), 0) + scoring;
      // The hallucination direction: the premise checked on the gold utterance, then on the item's.
      pairs += (selection + scoring + (options.hallucination ? 2 : 0)) * this.factor;
      // Sentence granularity: each sentence against each action's reference and the joined facts.
      if (sentences) pairs += splitSentences(raw.utterance).length * (sgs.actions.length + 1) * this.factor;
    }
    const items = await this.admitted(pairs, async () => {
      // Dataset turns: references from the store, else selected on the gold utterance (and stored).
      const datasetTurns = uniqueById(resolved.filter((r) => !r.raw.actions).map((r) => r.sgs));
      const missing = datasetTurns.filter((t) => !stored?.has(t.id));
      const datasetRefs = new Map<string, TurnReferences>();
      for (const t of datasetTurns) if (stored?.has(t.id)) datasetRefs.set(t.id, stored.get(t.id)!);
      // Inline actions have no stored references: they are selected on ground_truth, as score does
      // for a turn of a dialogues file (without one, against the first candidate, unvalidated).
      const inline = resolved.map((r, i) => ({ ...r.sgs, id: `#${i}` })).filter((_, i) => resolved[i].raw.actions);
      const [fresh, inlineRefs] = await Promise.all([
        missing.length > 0
          ? runSgsacc(missing, new Map(missing.map((t) => [t.id, t.utterance])), { ...options, scorer: this.runner, references: this.config.references, groundTruthSystem: true })
          : undefined,
        inline.length > 0 ? selectReferences(inline, this.runner, options) : [],
      ]);
      fresh?.references.forEach((r, i) => datasetRefs.set(missing[i].id, r!));
      const refs = new Map<string, TurnReferences>(inlineRefs.map((r) => [r.id, r]));
      // Scored under positional ids: two items may judge different utterances for one dataset turn.
      const turns: SgsaccTurn[] = resolved.map((r, i) => ({ ...r.sgs, id: `#${i}` }));
      resolved.forEach((r, i) => {
        if (!r.raw.actions) refs.set(`#${i}`, datasetRefs.get(r.sgs.id)!);
      });
      if (options.hallucination) {
        // Premises of the facts => text direction, validated on each turn's gold utterance as score
        // does; stored references computed without the flag lack them.
        const need = turns.filter((t) => !refs.get(t.id)!.hallucination);
        if (need.length > 0) await addHallucinationPremises(need, refs, this.runner, options);
      }
      const utterances = new Map(resolved.map((r, i) => [`#${i}`, r.raw.utterance]));
      const scores = await scoreTurns(turns, refs, utterances, this.runner, options);
      const scored = sentences ? await withSentences(turns, scores, refs, utterances, this.runner, options) : scores;
      return scored.map((s, i) => ({ ...s, id: raws[i].id }));
    });
    const refsSig = sgsaccReferencesSignature(this.runner.modelSignature, this.config.data, this.config.dataset, options);
    const signature = sgsaccResultSignature(refsSig, 'sgsacc-turns', { ...options, granularity: sentences ? 'sentence' : undefined });
    return { signature, items };
  }

  async nli(pairs: NliPair[]): Promise<{ signature: Signature; results: (NliProbs & { label: NliLabel })[] }> {
    const probs = await this.admitted(pairs.length, () => this.runner.score(pairs));
    return { signature: this.nliSignature(), results: probs.map((p) => ({ ...p, label: argmaxLabel(p) })) };
  }

  nliSignature(): Signature {
    const s = this.runner.modelSignature;
    return makeSignature({ model: s.modelId, revision: s.revision, dtype: s.dtype, maxLength: this.runner.maxLength, device: this.runner.device });
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

function uniqueById<T extends { id: string }>(xs: T[]): T[] {
  return [...new Map(xs.map((x) => [x.id, x])).values()];
}
