import type { NliScorer } from '../../nli/types.js';
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
): Promise<TurnScore[]> {
  const chunk = Math.max(1, opts.chunkTurns ?? 128);
  const refs = new Map<string, TurnReferences>();
  const done = new Map<string, TurnScore>();
  if (opts.results) for (const t of turns) if (opts.results.done.has(t.id)) done.set(t.id, opts.results.done.get(t.id)!);
  const todo = turns.filter((t) => !done.has(t.id));
  let turnsDone = turns.length - todo.length;
  opts.onChunk?.({ turnsDone, turnsTotal: turns.length });

  for (let start = 0; start < todo.length; start += chunk) {
    const slice = todo.slice(start, start + chunk);
    const missing = slice.filter((t) => !opts.references?.done.has(t.id));
    for (const t of slice) {
      const stored = opts.references?.done.get(t.id);
      if (stored) refs.set(t.id, stored);
    }
    if (missing.length > 0) {
      const fresh = await selectReferences(missing, opts.scorer, opts);
      for (const r of fresh) refs.set(r.id, r);
      opts.references?.append(fresh);
    }
    const scored = await scoreTurns(slice, refs, utterances, opts.scorer, opts);
    opts.results?.append(scored);
    for (const s of scored) done.set(s.id, s);
    turnsDone += slice.length;
    opts.onChunk?.({ turnsDone, turnsTotal: turns.length });
  }
  return turns.map((t) => done.get(t.id)!);
}
