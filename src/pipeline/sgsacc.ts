import type { Turn } from '../adapters/types.js';
import { computeSer, type SerReport } from '../metrics/ser.js';
import {
  aggregateSgsacc,
  contextControlOn,
  contextControlSignature,
  referencesSignature,
  runSgsacc,
  type Granularity,
  type ReferenceSelection,
  type SgsaccData,
  type SgsaccOptions,
  type SgsaccRun,
  type SgsaccRunOptions,
  type SgsaccSummary,
  type SgsaccTurn,
} from '../metrics/sgsacc/index.js';
import type { NliModelSignature, NliScorer } from '../nli/types.js';
import { makeSignature, type Signature } from '../util/signature.js';

/**
 * The SGSAcc pipeline every product runs (score, evaluate --sgsacc, serve): normalised options ->
 * a runner (the caller's) -> SER annotations -> the run -> the aggregate -> the signatures. Each
 * step is written once here; the products differ in what they add around it (stores, BLEU,
 * shards, positional ids), not in how SGSAcc is run.
 */

/** SGSAcc settings as a caller gives them: anything left out takes the product default. */
export interface SgsaccSettings {
  validation?: boolean;
  context?: boolean;
  referenceSelection?: ReferenceSelection;
  hallucination?: boolean;
  contextControl?: boolean;
  /** 'sentence': each sentence is also checked against the facts (needs, so turns on, the hallucination direction). */
  granularity?: Granularity;
}

/** The options of a run: defaults filled in (validation, context, entailed references) and the context rule applied. */
export function sgsaccOptions(s: SgsaccSettings): Required<Omit<SgsaccOptions, 'granularity'>> & Pick<SgsaccOptions, 'granularity'> {
  const context = s.context ?? true;
  return {
    validation: s.validation ?? true,
    context,
    referenceSelection: s.referenceSelection ?? 'entailed',
    // Sentence granularity checks the facts => text direction per sentence: it needs the direction.
    hallucination: s.hallucination === true || s.granularity === 'sentence',
    ...(s.granularity === 'sentence' ? { granularity: 'sentence' as const } : {}),
    contextControl: contextControlOn(context, s.contextControl),
  };
}

/** What stored references depend on (data, rules, model, options): shared by score and serve. */
export function sgsaccReferencesSignature(model: NliModelSignature, data: SgsaccData, dataset: string, options: SgsaccOptions): Signature {
  return referencesSignature({ model, rulesHash: data.rulesHash, dataset, source: data.loaded.source, schema: data.loaded.schemaLabel, ...options });
}

/** Who was scored, as a signature records it (score: the system and its predictions' digest). */
export interface ScoredSystem {
  system?: string;
  predictions?: string;
}

/**
 * A result's signature on top of its references' signature: the metric, the system, and the options
 * that make scores differ over the same references (the direction, the control), then `extra`.
 */
export function sgsaccResultSignature(references: Signature, metric: 'sgsacc' | 'sgsacc-turns', options: SgsaccOptions, who: ScoredSystem & { limit?: number | null } = {}, extra: { missingPredictions?: number; shard?: string } = {}): Signature {
  return makeSignature({
    ...references,
    metric,
    ...('limit' in who ? { limit: who.limit } : {}),
    ...('system' in who ? { system: who.system } : {}),
    ...('predictions' in who ? { predictions: who.predictions } : {}),
    // The references are shared by both directions; per-turn results and reports are not.
    hallucination: options.hallucination ? true : undefined,
    // Absent unless asked for, so turn-level runs keep their signatures and digests.
    granularity: options.granularity === 'sentence' ? 'sentence' : undefined,
    contextControl: contextControlSignature(options.contextControl),
    ...('missingPredictions' in extra ? { missingPredictions: extra.missingPredictions } : {}),
    ...('shard' in extra ? { shard: extra.shard } : {}),
  });
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

/** The run and its aggregate: the expanded turns (`data.expand`) with `utterances` through `scorer`, as `options` say. */
export async function scoreSgsacc(
  turns: SgsaccTurn[],
  utterances: Map<string, string>,
  data: SgsaccData,
  scorer: NliScorer,
  options: SgsaccOptions,
  run: Omit<SgsaccRunOptions, keyof SgsaccOptions | 'scorer'> = {},
): Promise<SgsaccScoring> {
  const result = await runSgsacc(turns, utterances, { ...options, scorer, ...run });
  const aggregate = { validation: options.validation, isUnseen: data.isUnseen };
  return { run: result, summary: aggregateSgsacc(result.scores, aggregate), aggregate };
}
