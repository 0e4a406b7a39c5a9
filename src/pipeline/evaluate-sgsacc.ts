import { mwzSgsaccTurns, type SgsaccMergeResult } from '../metrics/mwz/sgsacc-merge.js';
import type { MwzPredictions } from '../metrics/mwz/input.js';
import { loadSgsaccData, sentenceConfidence, sentenceShardTally, summarizeSentences, tallySentences, tallySgsacc, type Granularity, type ReferenceSelection } from '../metrics/sgsacc/index.js';
import type { ResampleUnit } from '../metrics/significance/confidence.js';
import type { Seed } from '../metrics/significance/pcg64.js';
import { turnItemStats } from '../metrics/sgsacc/item-stats.js';
import { createNliRunner, type NliRunnerOptions } from '../nli/runner.js';
import type { ShardSpec } from '../util/shard-split.js';
import { scoreSgsacc, serOfTurns, sgsaccOptions } from './sgsacc.js';

export interface EvaluateSgsaccOptions {
  dataDir: string;
  nli: NliRunnerOptions;
  validation?: boolean;
  context?: boolean;
  referenceSelection?: ReferenceSelection;
  /** The context-only control (SgsaccOptions.contextControl); off by default. */
  contextControl?: boolean;
  /** 'sentence': also check each sentence against the facts (turns on the facts => text direction it needs). */
  granularity?: Granularity;
  /** The resampling of the sentence section's intervals (`--confidence`'s); the defaults without. */
  confidence?: { samples?: number; seed?: Seed; unit?: ResampleUnit };
  chunkTurns?: number;
  /** Score only the dialogues of this part (`evaluate --sgsacc --shard K/N`), and return the tally that merges. */
  shard?: ShardSpec;
  /** Also return each turn's sufficient statistics (SGSAcc, SER) for intervals and paired tests. */
  items?: boolean;
  onProgress?: (p: { turnsDone: number; turnsTotal: number }) => void;
}

/**
 * `evaluate --sgsacc`: SGSAcc and SER of the lexicalized turns of an mwzeval-format input, scored
 * against the system dialogue acts of the MultiWOZ test set with the MultiWOZ 2.2 schema
 * descriptions, by the SGSAcc pipeline `todeval score --dataset multiwoz` runs. Null when no turn
 * is lexicalized. Opens its own NLI runner and closes it, whatever happens.
 */
export async function evaluateSgsacc(dialogues: MwzPredictions, opts: EvaluateSgsaccOptions): Promise<SgsaccMergeResult | null> {
  const data = loadSgsaccData({ dataset: 'multiwoz', dataDir: opts.dataDir, split: 'test' });
  const { turns, utterances, delexicalized } = mwzSgsaccTurns(dialogues, data, opts.shard);
  if (turns.length === 0) return null;
  const runner = await createNliRunner(opts.nli);
  try {
    const options = sgsaccOptions({
      validation: opts.validation,
      context: opts.context,
      referenceSelection: opts.referenceSelection,
      contextControl: opts.contextControl,
      ...(opts.granularity === 'sentence' ? { granularity: opts.granularity } : {}),
    });
    const { run, summary, aggregate } = await scoreSgsacc(data.expand(turns), utterances, data, runner, options, { chunkTurns: opts.chunkTurns, onChunk: opts.onProgress });
    const { counts, ...scores } = summary;
    const { ser, slotErrors } = serOfTurns(turns, data, utterances);
    const model = runner.modelSignature;
    const sentences = options.granularity === 'sentence' ? tallySentences(run.scores, aggregate) : undefined;
    return {
      sgsacc: scores,
      counts: { ...counts, lexicalizedTurns: turns.length, delexicalizedTurns: delexicalized },
      ser: { ser: ser.ser, errors: ser.errors, utterancesWithValues: ser.utterancesWithValues, perService: ser.perService },
      referenceSelection: options.referenceSelection,
      contextControl: options.contextControl,
      model: { modelId: model.modelId, revision: String(model.revision), dtype: String(model.dtype) },
      ...(sentences
        ? { sentences: { ...summarizeSentences([sentences], options.validation), confidence: sentenceConfidence(run.scores, { validation: options.validation, ...opts.confidence }) } }
        : {}),
      ...(opts.shard ? { tally: tallySgsacc(run.scores, aggregate) } : {}),
      // Where each turn stands among the whole input's scored turns: the merge redraws the intervals in that order.
      ...(opts.shard && sentences ? { sentenceTally: sentenceShardTally(sentences, run.scores, { validation: options.validation, positionOf: wholeRunPositions(dialogues, data) }) } : {}),
      ...(opts.items ? { items: turnItemStats(run.scores.map((s) => ({ ...s, slotError: slotErrors.get(s.id) ?? null })), { validation: options.validation }) } : {}),
    };
  } finally {
    await runner.close();
  }
}

/** Position of each turn among the turns an unsharded run scores (no NLI: which turns are lexicalized). */
function wholeRunPositions(dialogues: MwzPredictions, data: ReturnType<typeof loadSgsaccData>): Map<string, number> {
  return new Map(mwzSgsaccTurns(dialogues, data).turns.map((t, i) => [t.id, i]));
}
