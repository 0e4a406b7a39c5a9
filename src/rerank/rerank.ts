import { InputError } from '../util/errors.js';
import { argmaxLabel, type NliScorer } from '../nli/types.js';
import { PairBatch } from '../metrics/sgsacc/batch.js';
import { checkEntailment, entailmentJobPairs, fourWayLabel, hallucinationJob, planPremise, type EntailmentJob, type EntailmentVerdict } from '../metrics/sgsacc/hallucination.js';
import { contextPremise, controlPremise } from '../metrics/sgsacc/premise.js';
import { checkSentences, sentencePairBound, type TurnSentences } from '../metrics/sgsacc/sentence-check.js';
import type { FourWayLabel, SgsaccAction, SgsaccTurn, TurnReferences } from '../metrics/sgsacc/types.js';
import { resolveRerankConfig, type RankBy, type RerankConfig, type RerankSettings } from './config.js';

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

export interface RerankOptions extends RerankSettings {
  scorer: NliScorer;
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
  /**
   * Per action: only the context premise entailed a reference, and the context alone entails it too
   * (withdrawn from `realised` with the control on; with it off, realised only through the context).
   * Absent in per-item files written before the control existed.
   */
  contextOnly?: boolean[];
  /** With hallucination: the references do not entail the text (null: not checked, content-free). */
  hallucinated?: boolean | null;
  /** With hallucination: ok / omission / hallucination / both. */
  label?: FourWayLabel | null;
  /** With rankBy 'omission-sentences': each sentence's verdict against the facts it realised, and the unsupported ones. */
  sentences?: TurnSentences;
}

export interface RerankResult {
  id: string;
  chosen: { system: string; text: string; fidelity: number; likelihood?: number; label?: FourWayLabel | null };
  actions: number;
  candidates: CandidateFidelity[];
}

/**
 * A system is one of an item's competitors: given twice, it would be chosen or counted twice in the
 * per-system statistics. Refused with the item and the system.
 */
export function refuseDuplicateSystems(raw: { id: string; candidates: readonly { system: string }[] }, file: string, where: string): void {
  const seen = new Set<string>();
  for (const c of raw.candidates) {
    if (seen.has(c.system)) throw new InputError(`item "${raw.id}" has two candidates of system "${c.system}"; give each system one candidate per item`, { file, where });
    seen.add(c.system);
  }
}

/**
 * The SGSAcc fidelity reranker (paper Sec. 3): each candidate gets one point per dialogue action
 * it realises, judged against *any* candidate reference so no ground truth is needed; the highest
 * fidelity wins, ties go to the higher likelihood, then to the earlier system. Usable inside a
 * generation loop: pairs of many items go to the scorer in one call per pass.
 */
export async function rerank(items: RerankItem[], options: RerankOptions): Promise<RerankResult[]> {
  return rerankWith(items, options.scorer, resolveRerankConfig(options), options.chunkItems);
}

/**
 * `rerank` with a config already resolved (resolveRerankConfig): what the rerank pipeline and the
 * service call, so the configuration they sign is the one the passes run with.
 */
export async function rerankWith(items: RerankItem[], scorer: NliScorer, config: RerankConfig, chunkItems = 64): Promise<RerankResult[]> {
  // The library's callers pass items directly: the same rule as for an input file (one candidate per system).
  for (const item of items) refuseDuplicateSystems(item, '', '');
  const chunk = Math.max(1, chunkItems);
  const out: RerankResult[] = [];
  for (let i = 0; i < items.length; i += chunk) out.push(...(await rerankChunk(items.slice(i, i + chunk), scorer, config)));
  return out;
}

/**
 * The planner of a reranking: the most pairs `rerankWith(items, scorer, config)` may send the
 * scorer, pass by pass: each candidate against each action's references, with context their retry
 * and its control, the facts => text job, and each candidate's sentences when ranked by them.
 */
export function rerankPairBound(items: RerankItem[], config: RerankConfig): number {
  let pairs = 0;
  for (const item of items) {
    const references = item.actions.reduce((n, a) => n + a.candidates.length, 0);
    for (const cand of item.candidates) {
      pairs += references * (config.context ? 3 : 1);
      if (config.hallucination) pairs += entailmentJobPairs(config.context);
      if (config.bySentence) pairs += sentencePairBound(item, cand.text, config);
    }
  }
  return pairs;
}

/** What the passes found, indexed [item][candidate][action]. */
interface ActionVerdicts {
  realised: boolean[][][];
  /**
   * The reference each action is judged by, per candidate: the most entailed one of the pass that
   * decided (the context pass when only it realised the action). It builds the hallucination premise.
   */
  judgedBy: (string | null)[][][];
  /** Realised through the context premise only, and the context alone entails it too. */
  contextOnly: boolean[][][];
}

/**
 * One chunk of items, each pass one scorer call for all of them: candidate => references, the
 * context retry and its control, facts => candidate, and the sentences when ranked by them.
 */
async function rerankChunk(items: RerankItem[], scorer: NliScorer, config: RerankConfig): Promise<RerankResult[]> {
  const verdicts = await candidatePass(items, scorer);
  if (config.context) await contextPass(items, verdicts, scorer, config.contextControl);
  // Each candidate's facts premise, planned once for the hallucination pass and the sentences.
  const plans = config.hallucination || config.bySentence ? premisePlans(items, verdicts.judgedBy, config.context) : undefined;
  const hallucinated = await hallucinationPass(items, plans, scorer, config);
  const sentences = config.bySentence ? await candidateSentences(items, verdicts.judgedBy, plans!, scorer, config.context, config.contextControl) : undefined;
  return items.map((item, i) => {
    const candidates: CandidateFidelity[] = item.candidates.map((cand, c) => ({
      system: cand.system,
      text: cand.text,
      ...(cand.likelihood !== undefined ? { likelihood: cand.likelihood } : {}),
      fidelity: verdicts.realised[i][c].filter(Boolean).length,
      realised: verdicts.realised[i][c],
      contextOnly: verdicts.contextOnly[i][c],
      ...(config.hallucination ? halluc(verdicts.realised[i][c], hallucinated[i][c]) : {}),
      ...(sentences ? { sentences: sentences.get(`${i}/${c}`)! } : {}),
    }));
    return itemResult(item, candidates, pickBest(candidates, config.systemOrder, config.rankBy));
  });
}

/** The first pass: each candidate as the premise of each action's references. */
async function candidatePass(items: RerankItem[], scorer: NliScorer): Promise<ActionVerdicts> {
  const first = new PairBatch();
  // handles[item][candidate][action] = pair handles for each candidate reference
  const handles = items.map((item) =>
    item.candidates.map((cand) => item.actions.map((a) => a.candidates.map((ref) => first.add(cand.text, ref)))),
  );
  await first.run(scorer);
  return {
    realised: items.map((item, i) => item.candidates.map((_, c) => item.actions.map((_, a) => handles[i][c][a].some((h) => entails(first, h))))),
    judgedBy: items.map((item, i) =>
      item.candidates.map((_, c) => item.actions.map((action, a) => mostEntailed(action.candidates, handles[i][c][a], first))),
    ),
    contextOnly: items.map((item) => item.candidates.map(() => item.actions.map(() => false))),
  };
}

/**
 * Actions the first pass left unrealised, retried with the context and slot description in the
 * premise; then the control, which withdraws the credit (with it on) where the context alone
 * entails every reference the retry entailed. Updates `v` in place.
 */
async function contextPass(items: RerankItem[], v: ActionVerdicts, scorer: NliScorer, controlOn: boolean): Promise<void> {
  const second = new PairBatch();
  const retry: Array<{ i: number; c: number; a: number; hs: number[] }> = [];
  items.forEach((item, i) =>
    item.candidates.forEach((cand, c) =>
      item.actions.forEach((action, a) => {
        if (v.realised[i][c][a]) return;
        const premise = contextPremise(item.context ?? '', action.slotDescription, cand.text);
        retry.push({ i, c, a, hs: action.candidates.map((ref) => second.add(premise, ref)) });
      }),
    ),
  );
  await second.run(scorer);
  // The control: the context alone against each reference the context premise entailed. Its
  // pairs do not depend on the candidate, so the candidates of an item share them.
  const third = new PairBatch();
  const rescued = retry
    .map((r) => {
      const { context = '', actions } = items[r.i];
      const control = controlPremise(context, actions[r.a].slotDescription);
      const entailed = r.hs.flatMap((h, k) => (entails(second, h) ? [{ h, ref: actions[r.a].candidates[k] }] : []));
      return { ...r, entailed: entailed.map((e) => ({ ...e, alone: control === '' ? null : third.add(control, e.ref) })) };
    })
    .filter((r) => r.entailed.length > 0);
  await third.run(scorer);
  for (const r of rescued) {
    // Credit comes from the references the candidate adds something to: those the context alone does not entail.
    const earned = r.entailed.filter((e) => e.alone === null || !entails(third, e.alone));
    v.contextOnly[r.i][r.c][r.a] = earned.length === 0;
    const credited = earned.length > 0 ? earned : controlOn ? [] : r.entailed;
    if (credited.length === 0) continue;
    v.realised[r.i][r.c][r.a] = true;
    v.judgedBy[r.i][r.c][r.a] = mostEntailed(credited.map((e) => e.ref), credited.map((e) => e.h), second);
  }
}

type PremisePlan = ReturnType<typeof planPremise>;

/** Per [item][candidate], the facts premise of its hallucination check: the references it was judged by. */
function premisePlans(items: RerankItem[], judgedBy: (string | null)[][][], context: boolean): PremisePlan[][] {
  return items.map((item, i) =>
    item.candidates.map((_, c) => planPremise({ previousUserUtterance: item.context ?? '' }, item.actions.map((action, a) => ({ act: action.act, reference: judgedBy[i][c][a] })), { context })),
  );
}

/**
 * Facts => text, one job per candidate with something to check (none unless the ranking or the
 * caller asks for it): per [item][candidate], whether the candidate is hallucinated, null where not checked.
 */
async function hallucinationPass(
  items: RerankItem[],
  plans: PremisePlan[][] | undefined,
  scorer: NliScorer,
  config: RerankConfig,
): Promise<(boolean | null)[][]> {
  const jobs: EntailmentJob[] = [];
  const jobOf = items.map((item, i) =>
    item.candidates.map((cand, c) => {
      if (!config.hallucination || !plans) return null;
      const plan = plans[i][c];
      if (plan.check !== 'checked') return null;
      jobs.push(hallucinationJob(plan, item.context ?? '', cand.text));
      return jobs.length - 1;
    }),
  );
  const verdicts = await checkEntailment(jobs, scorer);
  return jobOf.map((row) => row.map((job) => (job === null ? null : hallucinated(verdicts[job], config.contextControl))));
}

/** An item's result: the chosen candidate's summary and every candidate's verdicts. */
function itemResult(item: RerankItem, candidates: CandidateFidelity[], best: CandidateFidelity): RerankResult {
  return {
    id: item.id,
    chosen: {
      system: best.system,
      text: best.text,
      fidelity: best.fidelity,
      ...(best.likelihood !== undefined ? { likelihood: best.likelihood } : {}),
      ...(best.label !== undefined ? { label: best.label } : {}),
    },
    actions: item.actions.length,
    candidates,
  };
}

/**
 * Each candidate's sentences against its facts: the references it was judged by (as its
 * hallucination premise), the item's context as the user turn. One set of passes for the chunk.
 */
async function candidateSentences(
  items: RerankItem[],
  judgedBy: (string | null)[][][],
  plans: PremisePlan[][],
  scorer: NliScorer,
  context: boolean,
  contextControl: boolean,
): Promise<Map<string, TurnSentences>> {
  const turns: SgsaccTurn[] = [];
  const refs = new Map<string, TurnReferences>();
  const texts = new Map<string, string>();
  items.forEach((item, i) =>
    item.candidates.forEach((cand, c) => {
      const id = `${i}/${c}`;
      const actions = item.actions.map((a) => ({ ...a, negatives: [] }));
      const services = [...new Set(item.actions.map((a) => a.service))];
      turns.push({ id, services, utterance: cand.text, previousUserUtterance: item.context ?? '', actions });
      const plan = plans[i][c];
      refs.set(id, {
        id,
        services,
        actions: item.actions.map((a, k) => ({ actionId: a.id, service: a.service, act: a.act, slot: a.slot, reference: judgedBy[i][c][k], referenceEntailment: null, contextUsed: false, status: 'unchecked' })),
        hallucination: { ...plan, status: 'unchecked', goldEntailed: null, goldEntailment: null, goldContextUsed: false },
      });
      texts.set(id, cand.text);
    }),
  );
  return checkSentences(turns, refs, texts, scorer, { context, contextControl });
}

/** Sentences no fact supports (unsupported or contradicted); 0 when not checked. */
function unsupportedCount(c: CandidateFidelity): number {
  return c.sentences?.unsupported.length ?? 0;
}

function entails(batch: PairBatch, handle: number): boolean {
  return argmaxLabel(batch.get(handle)) === 'entailment';
}

function mostEntailed(references: string[], handles: number[], batch: PairBatch): string | null {
  let best = -1;
  for (let k = 0; k < handles.length; k++) {
    if (best < 0 || batch.get(handles[k]).entailment > batch.get(handles[best]).entailment) best = k;
  }
  return best < 0 ? null : references[best];
}

/** Not entailed by the facts; with the control on, an entailment the user turn alone gives does not count. */
function hallucinated(v: EntailmentVerdict, controlOn: boolean): boolean {
  return !v.entailed || (controlOn && v.contextUsed && v.contextOnly === true);
}

function halluc(realised: boolean[], hallucinated: boolean | null): Pick<CandidateFidelity, 'hallucinated' | 'label'> {
  return { hallucinated, label: fourWayLabel(realised.every(Boolean), hallucinated) };
}

/**
 * 'fidelity': highest fidelity, then highest likelihood (absent counts as lowest), then earliest
 * system. 'omission-hallucination': no omission, then no hallucination, then likelihood, then
 * earliest system (fidelity below "every action" does not count: an omission is an omission).
 * 'omission-sentences': no omission, then fewest unsupported sentences, then likelihood, then system.
 */
export function pickBest(candidates: CandidateFidelity[], systemOrder?: readonly string[], rankBy: RankBy = 'fidelity'): CandidateFidelity {
  if (candidates.length === 0) throw new Error('rerank: item without candidates');
  const rank = (c: CandidateFidelity, pos: number) => {
    const k = systemOrder?.indexOf(c.system) ?? -1;
    return k >= 0 ? k : (systemOrder?.length ?? 0) + pos;
  };
  const indexed = candidates.map((c, pos) => ({ c, r: rank(c, pos) }));
  const noOmission = (c: CandidateFidelity) => (c.fidelity === c.realised.length ? 1 : 0);
  const noHallucination = (c: CandidateFidelity) => (c.hallucinated === true ? 0 : 1);
  const first =
    rankBy === 'fidelity'
      ? (x: CandidateFidelity, y: CandidateFidelity) => y.fidelity - x.fidelity
      : rankBy === 'omission-sentences'
        ? (x: CandidateFidelity, y: CandidateFidelity) => noOmission(y) - noOmission(x) || unsupportedCount(x) - unsupportedCount(y)
        : (x: CandidateFidelity, y: CandidateFidelity) => noOmission(y) - noOmission(x) || noHallucination(y) - noHallucination(x);
  indexed.sort(
    (x, y) =>
      first(x.c, y.c) ||
      (y.c.likelihood ?? -Infinity) - (x.c.likelihood ?? -Infinity) ||
      x.r - y.r,
  );
  return indexed[0].c;
}
