import type { NliScorer } from '../../nli/types.js';
import { addHallucinationPremises } from './hallucination.js';
import { selectReferences } from './references.js';
import { scoreTurns } from './scoring.js';
import type { RecordStore } from './store.js';
import type { SgsaccOptions, SgsaccTurn, TurnReferences, TurnScore } from './types.js';

export interface SgsaccRunOptions extends SgsaccOptions {
  scorer: NliScorer;
  /** Turns per chunk: all pairs of a chunk go to the scorer in one call (one pass each). */
  chunkTurns?: number;
  /** Stored references to reuse and extend (`--references FILE`). */
  references?: RecordStore<TurnReferences>;
  /** Finished turns of this system (`--out FILE`): skipped on resume, appended as chunks finish. */
  results?: RecordStore<TurnScore>;
  /** The system is the gold utterance itself: reuse the ground-truth scores of the references. */
  groundTruthSystem?: boolean;
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
  const refs = new Map<string, TurnReferences>();
  const done = new Map<string, TurnScore>();
  if (opts.results) for (const t of turns) if (opts.results.done.has(t.id)) done.set(t.id, opts.results.done.get(t.id)!);
  const todo = turns.filter((t) => !done.has(t.id));
  const resumed = turns.length - todo.length;
  let turnsDone = resumed;
  let computed = 0;
  opts.onChunk?.({ turnsDone, turnsTotal: turns.length });

  for (let start = 0; start < todo.length; start += chunk) {
    const slice = todo.slice(start, start + chunk);
    const missing = slice.filter((t) => !opts.references?.done.has(t.id));
    for (const t of slice) {
      const stored = opts.references?.done.get(t.id);
      if (stored) refs.set(t.id, stored);
    }
    if (missing.length > 0) {
      computed += missing.length;
      const fresh = await selectReferences(missing, opts.scorer, opts);
      for (const r of fresh) refs.set(r.id, r);
    }
    // Fresh references, and references stored by an older build, lack the ground-truth scores.
    const noGold = slice.filter((t) => !refs.get(t.id)!.groundTruth);
    await addGroundTruth(noGold, refs, opts);
    // The hallucination premises belong to the references too: computed once, then reused.
    const noPremise = opts.hallucination ? slice.filter((t) => !refs.get(t.id)!.hallucination) : [];
    await addHallucinationPremises(noPremise, refs, opts.scorer, opts);
    // A stored record that gained fields is appended again: the later line wins when loading.
    const changed = new Set([...missing, ...noGold, ...noPremise].map((t) => t.id));
    opts.references?.append(slice.filter((t) => changed.has(t.id)).map((t) => refs.get(t.id)!));
    // The ground truth as the system is already scored with its references.
    const scored = opts.groundTruthSystem
      ? slice.map((t) => groundTruthScore(refs.get(t.id)!, opts))
      : await scoreTurns(slice, refs, utterances, opts.scorer, opts);
    opts.results?.append(scored);
    for (const s of scored) done.set(s.id, s);
    turnsDone += slice.length;
    opts.onChunk?.({ turnsDone, turnsTotal: turns.length });
  }

  // Turns resumed from --turns whose references the store lacks (a --references file shorter than
  // the --turns file): complete the store first, so the ground truth and the reference counts cover
  // every turn of the report. Without a store they stay uncovered, and the report says so.
  const lacking = opts.references ? turns.filter((t) => !refs.has(t.id) && !opts.references!.done.has(t.id)) : [];
  for (let start = 0; start < lacking.length; start += chunk) {
    const slice = lacking.slice(start, start + chunk);
    const fresh = await selectReferences(slice, opts.scorer, opts);
    for (const r of fresh) refs.set(r.id, r);
    await addGroundTruth(slice, refs, opts);
    if (opts.hallucination) await addHallucinationPremises(slice, refs, opts.scorer, opts);
    opts.references!.append(slice.map((t) => refs.get(t.id)!));
    computed += slice.length;
  }
  const references = turns.map((t) => refs.get(t.id) ?? opts.references?.done.get(t.id));
  const reused = references.filter((r) => r !== undefined).length - computed;
  return {
    scores: turns.map((t) => done.get(t.id)!),
    references,
    counts: { resumed, referencesComputed: computed, referencesReused: reused, referencesMissing: references.filter((r) => r === undefined).length },
  };
}

async function addGroundTruth(turns: SgsaccTurn[], refs: Map<string, TurnReferences>, opts: SgsaccRunOptions): Promise<void> {
  if (turns.length === 0) return;
  const gold = new Map(turns.map((t) => [t.id, t.utterance]));
  // Its hallucination side is the premise validation itself (addHallucinationPremises).
  const scores = await scoreTurns(turns, refs, gold, opts.scorer, { ...opts, hallucination: false });
  turns.forEach((t, i) => (refs.get(t.id)!.groundTruth = scores[i]));
}

/** The stored ground-truth score, without the hallucination side when this run does not ask for it. */
function groundTruthScore(refs: TurnReferences, opts: SgsaccOptions): TurnScore {
  const gt = refs.groundTruth!;
  if (opts.hallucination) return gt;
  const { hallucination: _h, label: _l, ...omissionOnly } = gt;
  return omissionOnly;
}

export interface SgsaccRun {
  /** Per turn, in input order. */
  scores: TurnScore[];
  /** Per turn; undefined for turns resumed from --turns without a reference store. */
  references: (TurnReferences | undefined)[];
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
