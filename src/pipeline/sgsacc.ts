import type { Turn } from '../adapters/types.js';
import { computeSer, type SerReport } from '../metrics/ser.js';
import {
  aggregateSgsacc,
  referencesSignature,
  runSgsacc,
  type SgsaccConfig,
  type SgsaccData,
  type ReferenceStore,
  type SgsaccRun,
  type SgsaccRunOptions,
  type TurnReferences,
  type SgsaccSummary,
  type SgsaccTurn,
} from '../metrics/sgsacc/index.js';
import type { NliModelSignature, NliScorer } from '../nli/types.js';
import type { Signature } from '../util/signature.js';

/**
 * The SGSAcc pipeline every product runs (score, evaluate --sgsacc, serve): a resolved config
 * (resolveSgsaccConfig, built once at the product's edge) -> a runner (the caller's) -> SER annotations -> the run -> the aggregate -> the signatures. Each
 * step is written once here; the products differ in what they add around it (stores, BLEU,
 * shards, positional ids), not in how SGSAcc is run.
 */

export { sgsaccResultSignature, type ScoredSystem } from '../metrics/sgsacc/index.js';

/** What stored references depend on (data, rules, model, options): shared by score and serve. */
export function sgsaccReferencesSignature(model: NliModelSignature, data: SgsaccData, dataset: string, config: SgsaccConfig): Signature {
  return referencesSignature({ model, rulesHash: data.rulesHash, dataset, source: data.loaded.source, schema: data.loaded.schemaLabel, ...config.referencesFields });
}

/** SER of the turns' utterances (the ground truth's without `predictions`), and each turn's slot error. */
export function serOfTurns(turns: Turn[], data: SgsaccData, predictions: Map<string, string> | undefined): { ser: SerReport; slotErrors: Map<string, boolean | null> } {
  const slotErrors = new Map<string, boolean | null>();
  const ser = computeSer(turns, { predictions, isCategorical: data.isCategorical, onTurn: (id, error) => slotErrors.set(id, error) });
  return { ser, slotErrors };
}

export interface SgsaccScoring {
  run: SgsaccRun;
  summary: SgsaccSummary;
  /** How the run was aggregated (for tallies and hallucination aggregates over the same turns). */
  aggregate: { validation: boolean; isUnseen: (service: string) => boolean };
}

/** The run and its aggregate: the expanded turns (`data.expand`) with `utterances` through `scorer`, as `config` says. */
export async function scoreSgsacc(
  turns: SgsaccTurn[],
  utterances: Map<string, string>,
  data: SgsaccData,
  scorer: NliScorer,
  config: SgsaccConfig,
  run: Omit<SgsaccRunOptions, keyof SgsaccConfig | 'scorer'> = {},
): Promise<SgsaccScoring> {
  const result = await runSgsacc(turns, utterances, { ...config, scorer, ...run });
  const aggregate = { validation: config.validation, isUnseen: data.isUnseen };
  return { run: result, summary: aggregateSgsacc(result.scores, aggregate), aggregate };
}

/**
 * Stored references seen under the ids turns are scored by: `scoredIds[i]`'s are those stored under
 * `storedAs[i]` (undefined: not stored, e.g. a serve item's inline actions). The service scores each
 * request item under its position, since two items may judge different utterances of one dataset
 * turn; what the run computes or completes goes back under the dataset turn's id, once per turn.
 */
export function referencesUnder(store: ReferenceStore | undefined, scoredIds: readonly string[], storedAs: readonly (string | undefined)[]): ReferenceStore {
  const keyOf = new Map(scoredIds.map((id, i) => [id, storedAs[i]]));
  const storedKeys = new Set(storedAs.filter((k): k is string => k !== undefined));
  const done = new Map<string, TurnReferences>();
  for (const [id, key] of keyOf) {
    const stored = key === undefined ? undefined : store?.done.get(key);
    if (stored) done.set(id, stored);
  }
  return {
    done,
    append(records) {
      const back = new Map<string, TurnReferences>();
      for (const r of records) {
        // A fresh record carries the scored id; a stored one that gained fields, its own.
        const key = keyOf.has(r.id) ? keyOf.get(r.id) : storedKeys.has(r.id) ? r.id : undefined;
        if (key === undefined || back.has(key)) continue;
        back.set(key, { ...r, id: key, ...(r.groundTruth ? { groundTruth: { ...r.groundTruth, id: key } } : {}) });
      }
      if (back.size > 0) store?.append([...back.values()]);
    },
  };
}
