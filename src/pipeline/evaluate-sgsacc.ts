import { mwzSgsaccTurns, type SgsaccMergeResult } from '../metrics/mwz/sgsacc-merge.js';
import type { MwzPredictions } from '../metrics/mwz/input.js';
import { loadSgsaccData, tallySgsacc, type ReferenceSelection } from '../metrics/sgsacc/index.js';
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
    const options = sgsaccOptions({ validation: opts.validation, context: opts.context, referenceSelection: opts.referenceSelection, contextControl: opts.contextControl });
    const { run, summary, aggregate } = await scoreSgsacc(data.expand(turns), utterances, data, runner, options, { chunkTurns: opts.chunkTurns, onChunk: opts.onProgress });
    const { counts, ...scores } = summary;
    const { ser, slotErrors } = serOfTurns(turns, data, utterances);
    const model = runner.modelSignature;
    return {
      sgsacc: scores,
      counts: { ...counts, lexicalizedTurns: turns.length, delexicalizedTurns: delexicalized },
      ser: { ser: ser.ser, errors: ser.errors, utterancesWithValues: ser.utterancesWithValues, perService: ser.perService },
      referenceSelection: options.referenceSelection,
      contextControl: options.contextControl,
      model: { modelId: model.modelId, revision: String(model.revision), dtype: String(model.dtype) },
      ...(opts.shard ? { tally: tallySgsacc(run.scores, aggregate) } : {}),
      ...(opts.items ? { items: turnItemStats(run.scores.map((s) => ({ ...s, slotError: slotErrors.get(s.id) ?? null })), { validation: options.validation }) } : {}),
    };
  } finally {
    await runner.close();
  }
}
