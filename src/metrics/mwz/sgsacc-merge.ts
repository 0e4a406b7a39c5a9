import type { Turn } from '../../adapters/types.js';
import type { ReferenceSelection, SentenceShardTally, SentenceSummary, SgsaccData, SgsaccSummary, SgsaccTally } from '../sgsacc/index.js';
import type { NliModelSignature } from '../../nli/types.js';
import type { SentenceConfidence } from '../sgsacc/report.js';
import { shardPositions, type ShardSpec } from '../../util/shard-split.js';
import { dialogueKey } from './ground-truth.js';
import type { RunItems } from '../significance/items.js';
import type { MwzPredictions } from './input.js';
import { placeholderIn, tallyPlaceholders, type PlaceholderTally } from '../placeholders.js';

/** The lexicalized text of a turn: its `utterance`, or a `response` without placeholders (any delexicalization style). */
export function lexicalizedText(turn: { response: string; utterance?: string }): string | undefined {
  if (turn.utterance !== undefined) return turn.utterance;
  return placeholderIn(turn.response) === undefined ? turn.response : undefined;
}

/**
 * The input's turns that SGSAcc cannot score for their placeholders: the whole input's, so every
 * shard refuses (or skips) alike.
 */
export function delexicalizedTally(dialogues: MwzPredictions): PlaceholderTally {
  // A turn with an `utterance` is scored on it (lexicalizedText): only its response may be delexicalized.
  return tallyPlaceholders(Object.values(dialogues).flatMap((d) => d.map((t) => (t.utterance === undefined ? t.response : ''))));
}

export interface SgsaccMergeResult {
  /** SGSAcc percentages (validated and unvalidated), per service and act. */
  sgsacc: Omit<SgsaccSummary, 'counts'>;
  counts: SgsaccSummary['counts'] & { lexicalizedTurns: number; delexicalizedTurns: number };
  ser: { ser: number; errors: number; utterancesWithValues: number; perService: Record<string, unknown> };
  /** family and pairEncoding only where not RoBERTa's, kernels only for q8-row2 on the CPU, maxLength only where shortened (NliModelSignature; mergeResultModel). */
  model: { modelId: string; revision: string; dtype: string; family?: string; pairEncoding?: string; kernels?: string; maxLength?: number };
  referenceSelection: ReferenceSelection;
  /** Whether context-only rescues were withdrawn (their count is in `counts.contextOnly` either way). */
  contextControl: boolean;
  /** `--skip-delexicalized`: the turns holding placeholders were left out on request (else the input had none). */
  skipDelexicalized?: boolean;
  /** With granularity 'sentence': the sentence-level rate, as `score --granularity sentence` reports it. */
  sentences?: SentenceSummary & { confidence: SentenceConfidence };
  /** With `shard`: the counts behind the percentages, which `todeval merge` adds across shards. */
  tally?: SgsaccTally;
  /** With `shard` and granularity 'sentence': what `todeval merge` joins into the sentence section. */
  sentenceTally?: SentenceShardTally;
  /** With `items`: per-turn statistics of SGSAcc and SER (in memory only: not part of the report). */
  items?: RunItems;
  /**
   * What decides these numbers beyond the model and options (in memory only: evaluate moves it into
   * its signature): the rules' hash and the schema the references were written from, by content;
   * and validation and the context pass where a library call turned them off (the CLI has no flag
   * for either): each changes the numbers, so a run without it never compares equal to one with it.
   */
  signed?: { rules: string; schema: string; validation?: false; context?: false };
}

/**
 * The model as an `evaluate --sgsacc` report records it and its signature signs it: every field of
 * the runner's signature, so the signature names what `score`'s names (a q8-row2 run on the CPU its
 * float-kernel class: its scores differ across classes; a shortened truncation its maxLength). Other
 * fields the runner's object may carry are left out of the report.
 */
export function mergeResultModel(s: NliModelSignature): SgsaccMergeResult['model'] {
  return {
    modelId: s.modelId,
    revision: String(s.revision),
    dtype: String(s.dtype),
    ...(s.family !== undefined ? { family: s.family } : {}),
    ...(s.pairEncoding !== undefined ? { pairEncoding: s.pairEncoding } : {}),
    ...(s.kernels !== undefined ? { kernels: s.kernels } : {}),
    ...(s.maxLength !== undefined ? { maxLength: s.maxLength } : {}),
  };
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
 * The turns of an mwzeval-format input that SGSAcc scores: its lexicalized turns (`utterance`, or a
 * response without placeholders) matched to the system dialogue acts of the MultiWOZ test set
 * (ConvLab 2.1 annotations), with their texts; delexicalized or unmatched turns are counted. The
 * scoring itself is the SGSAcc pipeline's (src/pipeline/evaluate-sgsacc.ts): metrics never open a runner.
 */
export function mwzSgsaccTurns(dialogues: MwzPredictions, data: SgsaccData, shard?: ShardSpec): { turns: Turn[]; utterances: Map<string, string>; delexicalized: number } {
  // ConvLab turn ids are `<DIALOGUE>/<log index>`; system turn k of mwzeval's input is log index 2k+1
  const byKey = new Map<string, Turn>();
  for (const t of data.loaded.turns) byKey.set(`${dialogueKey(t.dialogueId)}/${(t.turnIndex - 1) / 2}`, t);
  const turns: Turn[] = [];
  const utterances = new Map<string, string>();
  let delexicalized = 0;
  const part = shard ? shardDialogues(dialogues, shard) : dialogues;
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
  return { turns, utterances, delexicalized };
}
