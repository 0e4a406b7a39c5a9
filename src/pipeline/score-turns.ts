import { createHash } from 'node:crypto';
import type { DatasetName } from '../adapters/load.js';
import type { Turn } from '../adapters/types.js';
import { BleuReferences, bleuFromSegmentStats, BLEU_STATS_WIDTH, type BleuResult } from '../metrics/text/bleu.js';
import { runConfidence, type ResampleUnit } from '../metrics/significance/confidence.js';
import type { Seed } from '../metrics/significance/pcg64.js';
import { turnItemStats } from '../metrics/sgsacc/item-stats.js';
import type { SerReport } from '../metrics/ser.js';
import {
  aggregateHallucination,
  aggregateSgsacc,
  sentenceConfidence,
  sentenceShardTally,
  summarizeSentences,
  tallySentences,
  bleuSummary,
  RecordStore,
  tallyHallucination,
  tallySgsacc,
  type SentenceTally,
  resolveSgsaccConfig,
  type SgsaccData,
  type SgsaccReport,
  type SgsaccSettings,
  type TurnReferences,
  type TurnScore,
} from '../metrics/sgsacc/index.js';
import type { NliRunner } from '../nli/runner.js';
import { formatSignature, type Signature } from '../util/signature.js';
import type { ScoreTallies } from '../shard/score-merge.js';
import { shardLabel, type ShardSpec } from '../shard/spec.js';
import { InputError } from '../util/errors.js';
import type { ScoreSelection } from './score-selection.js';
import { scoreSgsacc, serOfTurns, sgsaccReferencesSignature, sgsaccResultSignature, type SgsaccScoring } from './sgsacc.js';

/** SGSAcc settings as given (the score product's defaults fill in the rest, once, here). */
export interface ScoreTurnsOptions extends SgsaccSettings {
  data: SgsaccData;
  dataset: DatasetName;
  /** The NLI runner (the caller creates and closes it: flags are checked before a model loads). */
  runner: NliRunner;
  /** The system's utterances by turn id; the ground truth is the system without them. */
  predictions?: { file: string; byId: Map<string, string> };
  /** Name of the system in the report (default: the predictions file's name, or `ground-truth`). */
  system: string;
  /** --limit, as the signature and report record it. */
  limit?: number;
  shard?: ShardSpec;
  /** Turns per NLI call. */
  chunkTurns: number;
  /** Stored references (JSONL): reused when present, extended with the turns computed. */
  referencesFile?: string;
  /**
   * The references file is the one kept beside --turns/-o (keptReferencesFile), not one the user
   * named: a file of another configuration there is started afresh (with a notice) instead of refused.
   */
  referencesKept?: boolean;
  /** Per-turn results (JSONL): turns already there are resumed, the rest appended as chunks finish. */
  turnsFile?: string;
  /** Progress and notices for whoever runs the pipeline (a CLI draws a bar, prints lines). */
  hooks?: ScoreTurnsHooks;
  /** Bootstrap 95% intervals of the report's metrics (`--confidence`), resampling dialogues by default. */
  confidence?: { samples?: number; seed?: Seed; unit?: ResampleUnit };
}

export interface ScoreTurnsHooks {
  /** The stores are open: `resumed` of `total` turns were read back; `saved()` counts them as the run goes. */
  started?(state: { resumed: number; total: number; saved: () => number }): void;
  /** A chunk finished: `done` of `total` turns scored (resumed ones included). */
  progress?(done: number, total: number): void;
  /** A warning worth a line on its own (the CLI prefixes `todeval: warning: `). */
  warn?(message: string): void;
  /** Something the user should know that is not wrong (the CLI prefixes `todeval: `). */
  notice?(message: string): void;
}

export interface ScoreTurnsResult {
  report: SgsaccReport;
  /** What a shard report adds so that `todeval merge` gives the unsharded numbers exactly: counts, not percentages. */
  tallies: ScoreTallies;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/**
 * An interval over one shard's turns is not the run's: `confidence` needs the whole run in one
 * process. Refused here, so a library call is refused as the CLI is (`--shard` with `--confidence`).
 */
export function refuseConfidenceOfShard(o: { shard?: ShardSpec; confidence?: unknown }): void {
  if (o.shard && o.confidence) throw new InputError('--confidence needs the whole run in one process: drop --shard');
}

/** The per-turn and references stores of a run, opened (and checked) before any scoring. */
function openStores(o: ScoreTurnsOptions, refsSig: Signature, turnsSig: Signature) {
  // The per-turn file first: when it is refused, a kept references file is left as it was.
  const results = o.turnsFile ? RecordStore.open<TurnScore>(o.turnsFile, 'todeval-sgsacc-turns', turnsSig) : undefined;
  const references = o.referencesFile
    ? RecordStore.open<TurnReferences>(o.referencesFile, 'todeval-sgsacc-references', refsSig, { replaceOtherConfiguration: o.referencesKept })
    : undefined;
  if (references?.replaced) o.hooks?.notice?.(`${o.referencesFile} held references of another configuration (${references.replaced}): started afresh`);
  return { results, references };
}

/**
 * SER and BLEU need no model: computed first, so each turn's share of them is stored with its
 * SGSAcc result (`annotate`) and a paired test can resample all three from the per-turn file.
 */
function serAndBleu(turns: Turn[], data: SgsaccData, predictions: Map<string, string> | undefined, utterances: Map<string, string>) {
  const { ser, slotErrors } = serOfTurns(turns, data, predictions);
  const withGold = turns.filter((t) => t.utterance.trim() !== '');
  const bleuRefs = withGold.length > 0 ? new BleuReferences([withGold.map((t) => t.utterance)]) : undefined;
  const bleuStats = bleuRefs?.segmentStats(withGold.map((t) => utterances.get(t.id) ?? ''));
  const bleuOf = new Map(withGold.map((t, i) => [t.id, Array.from(bleuStats!.subarray(i * BLEU_STATS_WIDTH, (i + 1) * BLEU_STATS_WIDTH))]));
  const bleu = bleuRefs ? bleuFromSegmentStats(bleuStats!, {}, bleuRefs.signature) : undefined;
  const annotate = (s: TurnScore): TurnScore => ({ ...s, slotError: slotErrors.get(s.id) ?? null, bleu: bleuOf.get(s.id) ?? null });
  return { ser, bleu, annotate };
}

/**
 * `todeval score` as a library call: SGSAcc (validated and unvalidated, seen/unseen) of a system or
 * the ground truth over the selected turns, with SER and BLEU beside it, references and per-turn
 * results kept in their stores so that a run resumes and a second system costs only its own pairs.
 */
export async function scoreSelectedTurns(selection: ScoreSelection, o: ScoreTurnsOptions): Promise<ScoreTurnsResult> {
  refuseConfidenceOfShard(o);
  const { data, runner } = o;
  const turns = selection.turns;
  const predictions = o.predictions?.byId;
  const sgsTurns = data.expand(turns);
  const utterances = new Map(turns.map((t) => [t.id, predictions ? predictions.get(t.id)! : t.utterance]));
  const shard = o.shard ? shardLabel(o.shard) : undefined;
  // The library edge of score: the one place its SGSAcc settings become a config.
  const config = resolveSgsaccConfig(o, 'score');
  // The references are shared by both directions: their signature leaves hallucination out.
  const refsSig = sgsaccReferencesSignature(runner.modelSignature, data, o.dataset, config);
  const who = { system: o.system, predictions: predictions ? digest(JSON.stringify([...predictions.entries()].sort())) : 'gold' };
  // A shard's records carry the shard, like its report; todeval merge writes them under the run's signature.
  const { results, references } = openStores(o, refsSig, sgsaccResultSignature(refsSig, 'sgsacc-turns', config, who, { shard }));
  const saved = () => (results ? turns.filter((t) => results.done.has(t.id)).length : 0);
  o.hooks?.started?.({ resumed: saved(), total: turns.length, saved });

  const { ser, bleu, annotate } = serAndBleu(turns, data, predictions, utterances);
  const scoring = await scoreSgsacc(sgsTurns, utterances, data, runner, config, {
    chunkTurns: o.chunkTurns,
    references,
    results,
    groundTruthSystem: !predictions,
    annotate,
    onChunk: ({ turnsDone }) => o.hooks?.progress?.(turnsDone, turns.length),
  });
  const gold = groundTruthOf(scoring, turns.length, o);
  // The references' configuration, then what makes this system's scores its own; --allow-missing
  // scores a subset: not comparable with a full run, whatever the digest says.
  const missing = selection.missing;
  const signature = sgsaccResultSignature(refsSig, 'sgsacc', config, { limit: o.limit ?? null, ...who }, { missingPredictions: missing.length > 0 ? missing.length : undefined, shard });
  // The sentence counts once: the report's section and a shard's tallies (todeval merge) come from them.
  const sentences = config.granularity === 'sentence' ? tallySentences(scoring.run.scores, scoring.aggregate) : undefined;
  const report = scoreReport(o, selection, signature, scoring, gold, { ser, bleu }, config.hallucination, sentences);
  if (o.confidence) {
    // Turns resumed from an older per-turn file lack their SER and BLEU shares: added here.
    report.confidence = runConfidence(turnItemStats(scoring.run.scores.map(annotate), { validation: config.validation }), o.confidence);
  }
  const tallies = scoreTallies(scoring, gold, config.hallucination, bleu);
  // Only a shard report carries it (one line per turn); a whole run's report has its own section.
  if (sentences && o.shard) tallies.sentences = sentenceShardTally(sentences, scoring.run.scores, { validation: scoring.aggregate.validation, positionOf: selection.positionOf });
  return { report, tallies };
}

/** The ground truth as this run sees it (with the control applied when it is on), and its premise-checked turns. */
function groundTruthOf(scoring: SgsaccScoring, total: number, o: ScoreTurnsOptions) {
  const gold = scoring.run.groundTruth.filter((x): x is TurnScore => x !== undefined);
  if (gold.length < total) {
    // Only when resuming --turns without --references: those turns' references were never stored.
    o.hooks?.warn?.(
      `the ground-truth section covers ${gold.length} of ${total} turns ` +
        `(${total - gold.length} were resumed from ${o.turnsFile} without stored references; pass --references FILE to keep them)`,
    );
  }
  // Gold turns resumed from --turns without their references carry no premise check: left out, as above.
  return { turns: gold, checked: gold.filter((g) => g.hallucination !== undefined) };
}

type GroundTruth = ReturnType<typeof groundTruthOf>;

function scoreReport(
  o: ScoreTurnsOptions,
  selection: ScoreSelection,
  signature: Signature,
  { run, summary, aggregate }: SgsaccScoring,
  gold: GroundTruth,
  text: { ser: SerReport; bleu: BleuResult | undefined },
  hallucinationOn: boolean,
  sentences: SentenceTally | undefined,
): SgsaccReport {
  const turns = selection.turns;
  const goldSummary = gold.turns.length > 0 ? aggregateSgsacc(gold.turns, aggregate) : null;
  const hallucination = hallucinationOn ? aggregateHallucination(run.scores, aggregate) : undefined;
  const goldHallucination = hallucinationOn && gold.checked.length > 0 ? aggregateHallucination(gold.checked, aggregate) : undefined;
  const { counts, ...scores } = summary;
  const { ser, bleu } = text;
  const stats = o.runner.stats();
  return {
    signature,
    signatureText: formatSignature(signature),
    system: o.system,
    dataset: { name: o.dataset, source: o.data.loaded.source, turns: turns.length, limit: o.limit ?? null },
    sgsacc: scores,
    counts: { ...counts, missingPredictions: selection.missing.length },
    groundTruth: goldSummary
      ? {
          sgsacc: { validated: goldSummary.validated, unvalidated: goldSummary.unvalidated },
          counts: goldSummary.counts,
          ...(goldHallucination ? { hallucination: goldHallucination } : {}),
          coverage: { turns: gold.turns.length, of: turns.length, complete: gold.turns.length === turns.length },
        }
      : null,
    ...(hallucination ? { hallucination } : {}),
    ...(sentences
      ? {
          sentences: {
            ...summarizeSentences([sentences], aggregate.validation),
            confidence: sentenceConfidence(run.scores, { validation: aggregate.validation, ...o.confidence }),
          },
        }
      : {}),
    ser: {
      ser: ser.ser,
      errors: ser.errors,
      utterancesWithValues: ser.utterancesWithValues,
      perService: ser.perService,
      turnsScored: ser.turnsScored,
      // Which turns SER flags, so `todeval report` can set them against the turns SGSAcc flags.
      erroneousTurns: [...new Set(ser.erroneous.map((e) => e.id))],
    },
    bleu: bleu ? bleuSummary(bleu) : null,
    predictions: { file: o.predictions?.file ?? null, missing: selection.missing, extra: selection.extra },
    references: {
      file: o.referencesFile ?? null,
      reused: run.counts.referencesReused,
      computed: run.counts.referencesComputed,
      missing: run.counts.referencesMissing,
    },
    resumed: run.counts.resumed,
    nli: { requested: stats.requested, issued: stats.issued, cacheHits: stats.cacheHits, batches: stats.batches },
  };
}

/** What a shard report adds so that `todeval merge` gives the unsharded numbers exactly: counts, not percentages. */
function scoreTallies({ run, aggregate }: SgsaccScoring, gold: GroundTruth, hallucination: boolean, bleu: BleuResult | undefined): ScoreTallies {
  return {
    sgsacc: tallySgsacc(run.scores, aggregate),
    groundTruth: gold.turns.length > 0 ? tallySgsacc(gold.turns, aggregate) : null,
    ...(hallucination ? { hallucination: tallyHallucination(run.scores, aggregate) } : {}),
    ...(hallucination && gold.checked.length > 0 ? { groundTruthHallucination: tallyHallucination(gold.checked, aggregate) } : {}),
    bleu: bleu ? { counts: bleu.counts, totals: bleu.totals, sysLen: bleu.sysLen, refLen: bleu.refLen } : null,
  };
}
