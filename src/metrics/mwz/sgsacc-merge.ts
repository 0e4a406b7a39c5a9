import type { Turn } from '../../adapters/types.js';
import { createNliRunner, type NliRunnerOptions } from '../../nli/runner.js';
import { computeSer } from '../ser.js';
import { aggregateSgsacc, loadSgsaccData, runSgsacc, tallySgsacc, type ReferenceSelection, type SgsaccSummary, type SgsaccTally } from '../sgsacc/index.js';
import { shardPositions, type ShardSpec } from '../../util/shard-split.js';
import { dialogueKey } from './ground-truth.js';
import { turnItemStats } from '../sgsacc/item-stats.js';
import type { RunItems } from '../significance/items.js';
import type { MwzPredictions } from './input.js';

// Any bracketed placeholder, in any delexicalization style: such a response is not lexicalized.
const PLACEHOLDER = /\[[^\]\n]+\]/;

/** The lexicalized text of a turn: its `utterance`, or a `response` without placeholders. */
export function lexicalizedText(turn: { response: string; utterance?: string }): string | undefined {
  if (turn.utterance !== undefined) return turn.utterance;
  return PLACEHOLDER.test(turn.response) ? undefined : turn.response;
}

export interface SgsaccMergeOptions {
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

export interface SgsaccMergeResult {
  /** SGSAcc percentages (validated and unvalidated), per service and act. */
  sgsacc: Omit<SgsaccSummary, 'counts'>;
  counts: SgsaccSummary['counts'] & { lexicalizedTurns: number; delexicalizedTurns: number };
  ser: { ser: number; errors: number; utterancesWithValues: number; perService: Record<string, unknown> };
  model: { modelId: string; revision: string; dtype: string };
  referenceSelection: ReferenceSelection;
  /** Whether context-only rescues were withdrawn (their count is in `counts.contextOnly` either way). */
  contextControl: boolean;
  /** With `shard`: the counts behind the percentages, which `todeval merge` adds across shards. */
  tally?: SgsaccTally;
  /** With `items`: per-turn statistics of SGSAcc and SER (in memory only: not part of the report). */
  items?: RunItems;
}

/**
 * The dialogues of one shard: all the input's turns, grouped by dialogue and cut as `--shard`
 * cuts a score run, so a dialogue's turns (lexicalized or not) are counted in one shard only.
 */
export function shardDialogues(dialogues: MwzPredictions, shard: ShardSpec): MwzPredictions {
  const units = Object.entries(dialogues).flatMap(([id, dial]) => dial.map(() => id));
  const ids = new Set(shardPositions(units, (id) => id, shard).map((i) => units[i]));
  return Object.fromEntries(Object.entries(dialogues).filter(([id]) => ids.has(id)));
}

/**
 * SGSAcc and SER of the lexicalized turns of an mwzeval-format input, scored against the system
 * dialogue acts of the MultiWOZ test set (ConvLab 2.1 annotations) with the MultiWOZ 2.2 schema
 * descriptions, by the same code as `todeval score --dataset multiwoz`. Delexicalized turns are
 * left out and counted.
 */
export async function mergeSgsacc(dialogues: MwzPredictions, opts: SgsaccMergeOptions): Promise<SgsaccMergeResult | null> {
  const data = loadSgsaccData({ dataset: 'multiwoz', dataDir: opts.dataDir, split: 'test' });
  // ConvLab turn ids are `<DIALOGUE>/<log index>`; system turn k of mwzeval's input is log index 2k+1
  const byKey = new Map<string, Turn>();
  for (const t of data.loaded.turns) byKey.set(`${dialogueKey(t.dialogueId)}/${(t.turnIndex - 1) / 2}`, t);

  const turns: Turn[] = [];
  const utterances = new Map<string, string>();
  let delexicalized = 0;
  const part = opts.shard ? shardDialogues(dialogues, opts.shard) : dialogues;
  for (const [id, dial] of Object.entries(part)) {
    dial.forEach((t, k) => {
      const text = lexicalizedText(t);
      const turn = byKey.get(`${id}/${k}`);
      if (text === undefined || !turn) {
        delexicalized++;
        return;
      }
      turns.push(turn);
      utterances.set(turn.id, text);
    });
  }
  if (turns.length === 0) return null;

  const runner = await createNliRunner(opts.nli);
  try {
    const context = opts.context ?? true;
    const options = { validation: opts.validation ?? true, context, referenceSelection: opts.referenceSelection ?? 'entailed', contextControl: context && opts.contextControl === true };
    const run = await runSgsacc(data.expand(turns), utterances, {
      ...options,
      scorer: runner,
      chunkTurns: opts.chunkTurns,
      onChunk: opts.onProgress,
    });
    const aggregateOptions = { validation: options.validation, isUnseen: data.isUnseen };
    const { counts, ...scores } = aggregateSgsacc(run.scores, aggregateOptions);
    const slotErrors = new Map<string, boolean | null>();
    const ser = computeSer(turns, { predictions: utterances, isCategorical: data.isCategorical, onTurn: (id, error) => slotErrors.set(id, error) });
    return {
      sgsacc: scores,
      counts: { ...counts, lexicalizedTurns: turns.length, delexicalizedTurns: delexicalized },
      ser: { ser: ser.ser, errors: ser.errors, utterancesWithValues: ser.utterancesWithValues, perService: ser.perService },
      referenceSelection: options.referenceSelection,
      contextControl: options.contextControl,
      model: {
        modelId: runner.modelSignature.modelId,
        revision: String(runner.modelSignature.revision),
        dtype: String(runner.modelSignature.dtype),
      },
      ...(opts.shard ? { tally: tallySgsacc(run.scores, aggregateOptions) } : {}),
      ...(opts.items ? { items: turnItemStats(run.scores.map((s) => ({ ...s, slotError: slotErrors.get(s.id) ?? null })), { validation: options.validation }) } : {}),
    };
  } finally {
    await runner.close();
  }
}
