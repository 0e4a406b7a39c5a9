import type { NliScorer } from '../../nli/types.js';
import { stageClock } from '../../util/stage-clock.js';
import { applyContextControl, controlReferenceChoices, lacksControl } from './context-control.js';
import { CallOrder, type Lane } from './call-order.js';
import { addHallucinationPremises, entailmentJobPairs } from './hallucination.js';
import { contextPremise } from './premise.js';
import { selectionPairBound, selectReferences } from './references.js';
import { scoreTurns } from './scoring.js';
import { sentencePairBound, withSentences } from './sentence-check.js';
import type { RecordStore } from './store.js';
import type { SgsaccOptions, SgsaccTurn, TurnReferences, TurnScore } from './types.js';

/** What a run reads and extends of stored references: a RecordStore, or a view of one under other ids. */
export interface ReferenceStore {
  readonly done: ReadonlyMap<string, TurnReferences>;
  append(records: TurnReferences[]): void;
}

export interface SgsaccRunOptions extends SgsaccOptions {
  scorer: NliScorer;
  /** Turns per chunk: all pairs of a chunk go to the scorer in one call (one pass each). */
  chunkTurns?: number;
  /** Stored references to reuse and extend (`--references FILE`, or a view of one: ReferenceStore). */
  references?: ReferenceStore;
  /** Finished turns of this system (`--out FILE`): skipped on resume, appended as chunks finish. */
  results?: RecordStore<TurnScore>;
  /** The system is the gold utterance itself: reuse the ground-truth scores of the references. */
  groundTruthSystem?: boolean;
  /**
   * Adds what the caller knows of a freshly scored turn before it is stored (score: its SER verdict
   * and BLEU statistics, so that a paired test can resample them from the per-turn file).
   */
  annotate?: (score: TurnScore) => TurnScore;
  onChunk?: (progress: { turnsDone: number; turnsTotal: number }) => void;
}

/**
 * Scores one system over turns, chunk by chunk: references come from the store when present and
 * are computed (and stored) otherwise, so a second system costs only its own pairs.
 */
export async function runSgsacc(
  turns: SgsaccTurn[],
  utterances: Map<string, string>,
  opts: SgsaccRunOptions,
): Promise<SgsaccRun> {
  const chunk = Math.max(1, opts.chunkTurns ?? 128);
  // The sentences' facts are the hallucination premise's: the turn-level direction computes them.
  if (opts.granularity === 'sentence' && !opts.hallucination) throw new Error('granularity sentence needs the hallucination direction');
  const run: RunState = { turns, utterances, opts, refs: new Map(), done: resumedScores(turns, opts.results), computed: 0, turnsDone: 0 };
  const todo = turns.filter((t) => !run.done.has(t.id));
  const resumed = turns.length - todo.length;
  run.turnsDone = resumed;
  opts.onChunk?.({ turnsDone: run.turnsDone, turnsTotal: turns.length });
  await scoreChunks(run, todo, chunk);
  await completeResumedReferences(run, chunk);
  stageClock.enter('other');
  const references = turns.map((t) => run.refs.get(t.id) ?? opts.references?.done.get(t.id));
  const reused = references.filter((r) => r !== undefined).length - run.computed;
  return {
    scores: turns.map((t) => run.done.get(t.id)!),
    references,
    groundTruth: references.map((r) => (r?.groundTruth ? groundTruthView(r, opts) : undefined)),
    counts: { resumed, referencesComputed: run.computed, referencesReused: reused, referencesMissing: references.filter((r) => r === undefined).length },
  };
}

/**
 * The planner of a run: the most pairs `runSgsacc(turns, utterances, opts)` may send the scorer,
 * before the batches' de-duplication and the pair cache, step by step as the run takes them: the
 * references a turn lacks (selection, the ground truth's score, the facts => text premise, the
 * control's verdicts of an older record), the system's scoring, and its sentences. The service
 * reserves this many pairs before it runs (PairAdmission).
 */
export function runPairBound(turns: SgsaccTurn[], utterances: Map<string, string>, opts: Omit<SgsaccRunOptions, 'scorer'>): number {
  const job = entailmentJobPairs(opts.context);
  let pairs = 0;
  for (const t of turns) pairs += turnPairBound(t, utterances.get(t.id) ?? '', opts, job);
  return pairs;
}

/** runPairBound's count for one turn whose system utterance is `utterance`. */
function turnPairBound(t: SgsaccTurn, utterance: string, opts: Omit<SgsaccRunOptions, 'scorer'>, job: number): number {
  let pairs = 0;
  const stored = opts.references?.done.get(t.id);
  const lacking = stored ? lacksControl(stored) : undefined;
  if (!stored) pairs += selectionPairBound(t, opts);
  if (lacking?.choices) pairs += stored!.actions.length;
  const gold = !stored || !stored.groundTruth || lacking!.groundTruth || lacking!.choices;
  if (gold) pairs += t.actions.length * job;
  if (opts.hallucination && (gold || !stored!.hallucination || lacking!.premise)) pairs += job;
  if (!opts.groundTruthSystem) pairs += t.actions.length * job + (opts.hallucination ? job : 0);
  if (opts.granularity === 'sentence') pairs += sentencePairBound(t, utterance, opts);
  return pairs;
}

/**
 * The turns of a chunk that may send the model a pair, whose texts are worth encoding ahead. A
 * ground truth scored again over complete stored references (a second setting such as
 * --context-control) sends none: encoding its texts anyway cost ~1 CPU-s of 7 over the SGD test set.
 * Any other system's utterances are always scored (and a sentence run splits each one), so then
 * every turn is kept without asking.
 */
function turnsForTheModel(slice: SgsaccTurn[], opts: SgsaccRunOptions): SgsaccTurn[] {
  if (!opts.groundTruthSystem || opts.granularity === 'sentence') return slice;
  const job = entailmentJobPairs(opts.context);
  return slice.filter((t) => turnPairBound(t, '', opts, job) > 0);
}

/** What the chunks of one run share: the references so far, the finished scores and the counts. */
interface RunState {
  turns: SgsaccTurn[];
  utterances: Map<string, string>;
  opts: SgsaccRunOptions;
  refs: Map<string, TurnReferences>;
  /** Finished scores by turn id: resumed from --turns, then each chunk's. */
  done: Map<string, TurnScore>;
  /** Turns whose references this run computed. */
  computed: number;
  turnsDone: number;
}

/** The turns' scores already in the --turns store, in turn order. */
function resumedScores(turns: SgsaccTurn[], results: RecordStore<TurnScore> | undefined): Map<string, TurnScore> {
  const done = new Map<string, TurnScore>();
  if (results) for (const t of turns) if (results.done.has(t.id)) done.set(t.id, results.done.get(t.id)!);
  return done;
}

/**
 * Two chunks at a time: while the model works on one chunk's passes, this thread builds the next
 * chunk's pairs and encodes its texts. CallOrder hands the scorer their calls in the order of one
 * chunk after another, and each chunk writes after the one before it, so nothing observable changes.
 */
async function scoreChunks(run: RunState, todo: SgsaccTurn[], chunk: number): Promise<void> {
  const order = new CallOrder(run.opts.scorer);
  let written: Promise<void> = Promise.resolve();
  const running: Promise<void>[] = [];
  try {
    for (let start = 0; start < todo.length; start += chunk) {
      // At most two chunks in flight: the next starts once the one two back is done.
      if (running.length === 2) await running.shift();
      const chunkDone = scoreChunk(run, todo.slice(start, start + chunk), order.lane(), written);
      written = chunkDone;
      running.push(chunkDone);
    }
    await Promise.all(running);
  } catch (e) {
    order.abort(e);
    await Promise.allSettled(running);
    throw e;
  }
}

/** One chunk: its references, the system's scores, then (after the chunk `before` it) the writes. */
async function scoreChunk(run: RunState, slice: SgsaccTurn[], lane: Lane, before: Promise<void>): Promise<void> {
  const { opts, refs, utterances } = run;
  prefetchTexts(turnsForTheModel(slice, opts), utterances, lane);
  const changed = await chunkReferences(run, slice, lane);
  // The system's passes start now; their results are awaited after the earlier chunks are written.
  const scores = opts.groundTruthSystem ? undefined : scoreTurns(slice, refs, utterances, lane, opts);
  scores?.catch(() => undefined); // a failure surfaces at the await below
  await before;
  // A stored record that gained fields is appended again: the later line wins when loading.
  stageClock.enter('write');
  opts.references?.append(slice.filter((t) => changed.has(t.id)).map((t) => refs.get(t.id)!));
  stageClock.enter('decisions');
  // The ground truth as the system is already scored with its references.
  const turnLevel = scores ? await scores : slice.map((t) => groundTruthScore(refs.get(t.id)!, opts));
  const plain = opts.granularity === 'sentence' ? await withSentences(slice, turnLevel, refs, utterances, lane, opts) : turnLevel;
  lane.close();
  const scored = opts.annotate ? plain.map(opts.annotate) : plain;
  stageClock.enter('write');
  opts.results?.append(scored);
  for (const s of scored) run.done.set(s.id, s);
  run.turnsDone += slice.length;
  opts.onChunk?.({ turnsDone: run.turnsDone, turnsTotal: run.turns.length });
}

/**
 * A chunk's references: those in the store reused, the others selected (and counted), all
 * completed. Returns the ids whose record is new or gained fields, to be (re)written.
 */
async function chunkReferences(run: RunState, slice: SgsaccTurn[], lane: Lane): Promise<Set<string>> {
  const { opts, refs } = run;
  const missing = slice.filter((t) => !opts.references?.done.has(t.id));
  for (const t of slice) {
    const stored = opts.references?.done.get(t.id);
    if (stored) refs.set(t.id, stored);
  }
  if (missing.length > 0) {
    run.computed += missing.length;
    const fresh = await selectReferences(missing, lane, opts);
    for (const r of fresh) refs.set(r.id, r);
  }
  const changed = new Set(missing.map((t) => t.id));
  await completeReferences(slice, refs, lane, opts, changed);
  return changed;
}

/**
 * Turns resumed from --turns whose references the store lacks (a --references file shorter than
 * the --turns file): complete the store first, so the ground truth and the reference counts cover
 * every turn of the report. Without a store they stay uncovered, and the report says so.
 */
async function completeResumedReferences(run: RunState, chunk: number): Promise<void> {
  const { opts, refs } = run;
  const lacking = opts.references ? run.turns.filter((t) => !refs.has(t.id) && !opts.references!.done.has(t.id)) : [];
  for (let start = 0; start < lacking.length; start += chunk) {
    const slice = lacking.slice(start, start + chunk);
    const fresh = await selectReferences(slice, opts.scorer, opts);
    for (const r of fresh) refs.set(r.id, r);
    await completeReferences(slice, refs, opts.scorer, opts, new Set());
    stageClock.enter('write');
    opts.references!.append(slice.map((t) => refs.get(t.id)!));
    run.computed += slice.length;
  }
}

/**
 * Every text a chunk's passes may put into pairs that is known before any model call: utterances,
 * candidates, negatives and the context premises (the second pass needs only some of them; the
 * rest cost little, their sentences being memoized).
 */
function prefetchTexts(turns: SgsaccTurn[], utterances: Map<string, string>, scorer: NliScorer): void {
  if (!scorer.prefetch || turns.length === 0) return;
  const previous = stageClock.enter('tokenize');
  const texts: string[] = [];
  for (const t of turns) {
    texts.push(t.utterance);
    const system = utterances.get(t.id);
    if (system !== undefined && system !== t.utterance) texts.push(system);
    for (const a of t.actions) {
      texts.push(...a.candidates, ...a.negatives);
      if (a.candidates.length > 0) {
        texts.push(contextPremise(t.previousUserUtterance, a.slotDescription, t.utterance));
        if (system !== undefined && system !== t.utterance) texts.push(contextPremise(t.previousUserUtterance, a.slotDescription, system));
      }
    }
  }
  scorer.prefetch(texts);
  stageClock.enter(previous);
}

/**
 * What a turn's references record holds besides the choices: the ground truth's score, the
 * context-only control's verdicts and (with hallucination) the facts => text premise. Fresh
 * references lack them all; references stored by an older build may lack some, and gain them here
 * (their ids are added to `changed`, so the caller appends the record again).
 */
async function completeReferences(
  slice: SgsaccTurn[],
  refs: Map<string, TurnReferences>,
  scorer: NliScorer,
  opts: SgsaccRunOptions,
  changed: Set<string>,
): Promise<void> {
  const lacking = new Map(slice.map((t) => [t.id, lacksControl(refs.get(t.id)!)]));
  const noControl = slice.filter((t) => lacking.get(t.id)!.choices);
  await controlReferenceChoices(noControl.map((turn) => ({ turn, refs: refs.get(turn.id)! })), scorer);
  const noGold = slice.filter((t) => !refs.get(t.id)!.groundTruth || lacking.get(t.id)!.groundTruth || lacking.get(t.id)!.choices);
  await addGroundTruth(noGold, refs, scorer, opts);
  // The hallucination premises belong to the references too: computed once, then reused. A
  // recomputed ground truth lost its facts => text verdict, which comes with the premise.
  const regold = new Set(noGold.map((t) => t.id));
  const noPremise = opts.hallucination
    ? slice.filter((t) => !refs.get(t.id)!.hallucination || lacking.get(t.id)!.premise || (regold.has(t.id) && refs.get(t.id)!.hallucination))
    : [];
  await addHallucinationPremises(noPremise, refs, scorer, opts);
  for (const t of [...noControl, ...noGold, ...noPremise]) changed.add(t.id);
}

async function addGroundTruth(turns: SgsaccTurn[], refs: Map<string, TurnReferences>, scorer: NliScorer, opts: SgsaccRunOptions): Promise<void> {
  if (turns.length === 0) return;
  const gold = new Map(turns.map((t) => [t.id, t.utterance]));
  // Its hallucination side is the premise validation itself (addHallucinationPremises).
  // Stored as scored, the control's verdicts recorded but not applied: one record serves both settings.
  const scores = await scoreTurns(turns, refs, gold, scorer, { ...opts, hallucination: false, contextControl: false });
  turns.forEach((t, i) => (refs.get(t.id)!.groundTruth = scores[i]));
}

/** The stored ground-truth score as this run sees it: with the control applied when it is on. */
function groundTruthView(refs: TurnReferences, opts: SgsaccOptions): TurnScore {
  return opts.contextControl ? applyContextControl(refs.groundTruth!, refs) : refs.groundTruth!;
}

/**
 * The stored ground-truth score (stored without the control applied), without the hallucination
 * side when this run does not ask for it, and with the control when this run has it on.
 */
function groundTruthScore(refs: TurnReferences, opts: SgsaccOptions): TurnScore {
  const gt = groundTruthView(refs, opts);
  if (opts.hallucination) return gt;
  const { hallucination: _h, label: _l, ...omissionOnly } = gt;
  return omissionOnly;
}

export interface SgsaccRun {
  /** Per turn, in input order. */
  scores: TurnScore[];
  /** Per turn; undefined for turns resumed from --turns without a reference store. */
  references: (TurnReferences | undefined)[];
  /** The ground truth scored as a system, per turn, under this run's options (the control applied when on). */
  groundTruth: (TurnScore | undefined)[];
  /** What this run actually did: every count a report prints comes from here. */
  counts: {
    /** Turns whose scores came from the --turns file. */
    resumed: number;
    /** Turns whose references (and ground-truth scores) this run computed. */
    referencesComputed: number;
    /** Turns whose references came from the --references store. */
    referencesReused: number;
    /** Turns without references (resumed from --turns, no store): not in the ground-truth section. */
    referencesMissing: number;
  };
}
