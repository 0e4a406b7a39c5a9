import { delexicalizedTally, mergeResultModel, mwzSgsaccTurns, type SgsaccMergeResult } from '../metrics/mwz/sgsacc-merge.js';
import { InputError } from '../util/errors.js';
import type { MwzPredictions } from '../metrics/mwz/input.js';
import { loadSgsaccData, resolveSgsaccConfig, sentenceConfidence, sentenceShardTally, summarizeSentences, tallySentences, tallySgsacc, type SgsaccSettings } from '../metrics/sgsacc/index.js';
import type { ResampleUnit } from '../metrics/significance/confidence.js';
import type { Seed } from '../metrics/significance/pcg64.js';
import { turnItemStats } from '../metrics/sgsacc/item-stats.js';
import { createNliRunner, type NliRunnerOptions } from '../nli/runner.js';
import { inputLabel } from '../util/input-label.js';
import type { ShardSpec } from '../util/shard-split.js';
import { scoreSgsacc, serOfTurns } from './sgsacc.js';

/**
 * The SGSAcc settings evaluate takes (the evaluate product's defaults fill in the rest): all but the
 * hallucination direction, which its report has no section for ('sentence' granularity turns it on
 * for the sentences' facts).
 */
export type EvaluateSgsaccSettings = Omit<SgsaccSettings, 'hallucination'>;

export interface EvaluateSgsaccOptions extends EvaluateSgsaccSettings {
  dataDir: string;
  nli: NliRunnerOptions;
  /** The resampling of the sentence section's intervals (`--confidence`'s); the defaults without. */
  confidence?: { samples?: number; seed?: Seed; unit?: ResampleUnit };
  chunkTurns?: number;
  /** Score only the dialogues of this part (`evaluate --sgsacc --shard K/N`), and return the tally that merges. */
  shard?: ShardSpec;
  /** Also return each turn's sufficient statistics (SGSAcc, SER) for intervals and paired tests. */
  items?: boolean;
  onProgress?: (p: { turnsDone: number; turnsTotal: number }) => void;
  /**
   * Score the placeholder-free turns of an input whose other turns hold delexicalization
   * placeholders (`--skip-delexicalized`). Without it such an input is refused: its placeholder-free
   * turns are the ones that happened to name no value, and their SGSAcc and SER say nothing of the system.
   */
  skipDelexicalized?: boolean;
  /** The input's name in the refusal (the file). */
  source?: string;
}

/**
 * Refuses, in one line, an input whose turns hold delexicalization placeholders and no lexicalized
 * `utterance`, unless `skipDelexicalized`; returns how many turns hold them. Called before any work.
 */
export function checkDelexicalized(dialogues: MwzPredictions, opts: Pick<EvaluateSgsaccOptions, 'skipDelexicalized' | 'source'>): number {
  const t = delexicalizedTally(dialogues);
  if (t.withPlaceholders === 0 || opts.skipDelexicalized) return t.withPlaceholders;
  const n = (x: number) => x.toLocaleString('en-US');
  throw new InputError(
    `${opts.source ?? 'the input'}: --sgsacc: ${n(t.withPlaceholders)} of ${n(t.total)} turns hold delexicalization placeholders (${t.examples.join(', ')}) and no "utterance": ` +
      `SGSAcc and SER score lexicalized text. Give each turn its lexicalized text as "utterance" (a lexicalized file), ` +
      `or pass --skip-delexicalized to score only the ${n(t.total - t.withPlaceholders)} turns without placeholders`,
  );
}

/**
 * `evaluate --sgsacc`: SGSAcc and SER of the lexicalized turns of an mwzeval-format input, scored
 * against the system dialogue acts of the MultiWOZ test set with the MultiWOZ 2.2 schema
 * descriptions, by the SGSAcc pipeline `todeval score --dataset multiwoz` runs. Null when no turn
 * is lexicalized. Opens its own NLI runner and closes it, whatever happens.
 */
export async function evaluateSgsacc(dialogues: MwzPredictions, opts: EvaluateSgsaccOptions): Promise<SgsaccMergeResult | null> {
  checkDelexicalized(dialogues, opts);
  // The library edge of evaluate --sgsacc: the one place its settings become a config.
  const { validation, context, referenceSelection, contextControl, granularity } = opts;
  const config = resolveSgsaccConfig({ validation, context, referenceSelection, contextControl, granularity }, 'evaluate');
  const data = loadSgsaccData({ dataset: 'multiwoz', dataDir: opts.dataDir, split: 'test' });
  const { turns, utterances, delexicalized } = mwzSgsaccTurns(dialogues, data, opts.shard);
  if (turns.length === 0) return null;
  const runner = await createNliRunner(opts.nli);
  try {
    const { run, summary, aggregate } = await scoreSgsacc(data.expand(turns), utterances, data, runner, config, { chunkTurns: opts.chunkTurns, onChunk: opts.onProgress });
    const { counts, ...scores } = summary;
    const { ser, slotErrors } = serOfTurns(turns, data, utterances);
    const model = runner.modelSignature;
    const sentences = config.granularity === 'sentence' ? tallySentences(run.scores, aggregate) : undefined;
    return {
      sgsacc: scores,
      counts: { ...counts, lexicalizedTurns: turns.length, delexicalizedTurns: delexicalized },
      ser: { ser: ser.ser, errors: ser.errors, utterancesWithValues: ser.utterancesWithValues, perService: ser.perService },
      referenceSelection: config.referenceSelection,
      contextControl: config.contextControl,
      ...(opts.skipDelexicalized ? { skipDelexicalized: true } : {}),
      model: mergeResultModel(model),
      signed: {
        rules: data.rulesHash,
        schema: inputLabel(data.loaded.schemaFile, opts.dataDir),
        // Signed only when off (a library call; the CLI has neither flag), so the default run keeps its signature.
        ...(config.validation ? {} : { validation: false as const }),
        ...(config.context ? {} : { context: false as const }),
      },
      ...(sentences
        ? { sentences: { ...summarizeSentences([sentences], config.validation), confidence: sentenceConfidence(run.scores, { validation: config.validation, ...opts.confidence }) } }
        : {}),
      ...(opts.shard ? { tally: tallySgsacc(run.scores, aggregate) } : {}),
      // Where each turn stands among the whole input's scored turns: the merge redraws the intervals in that order.
      ...(opts.shard && sentences ? { sentenceTally: sentenceShardTally(sentences, run.scores, { validation: config.validation, positionOf: wholeRunPositions(dialogues, data) }) } : {}),
      ...(opts.items ? { items: turnItemStats(run.scores.map((s) => ({ ...s, slotError: slotErrors.get(s.id) ?? null })), { validation: config.validation }) } : {}),
    };
  } finally {
    await runner.close();
  }
}

/** Position of each turn among the turns an unsharded run scores (no NLI: which turns are lexicalized). */
function wholeRunPositions(dialogues: MwzPredictions, data: ReturnType<typeof loadSgsaccData>): Map<string, number> {
  return new Map(mwzSgsaccTurns(dialogues, data).turns.map((t, i) => [t.id, i]));
}
