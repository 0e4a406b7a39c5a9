import { createHash } from 'node:crypto';
import type { DatasetName } from '../adapters/load.js';
import { BleuReferences, bleuFromSegmentStats, BLEU_STATS_WIDTH } from '../metrics/text/bleu.js';
import { runConfidence, type ResampleUnit } from '../metrics/significance/confidence.js';
import type { Seed } from '../metrics/significance/pcg64.js';
import { turnItemStats } from '../metrics/sgsacc/item-stats.js';
import { computeSer } from '../metrics/ser.js';
import {
  aggregateHallucination,
  aggregateSentences,
  aggregateSgsacc,
  sentenceConfidence,
  bleuSummary,
  contextControlSignature,
  RecordStore,
  referencesSignature,
  runSgsacc,
  tallyHallucination,
  tallySgsacc,
  type SgsaccData,
  type SgsaccOptions,
  type SgsaccReport,
  type TurnReferences,
  type TurnScore,
} from '../metrics/sgsacc/index.js';
import type { NliRunner } from '../nli/runner.js';
import { formatSignature, makeSignature, type Signature } from '../util/signature.js';
import type { ScoreTallies } from '../shard/score-merge.js';
import { shardLabel, type ShardSpec } from '../shard/spec.js';
import type { ScoreSelection } from './score-selection.js';

export interface ScorePipelineOptions extends SgsaccOptions {
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
  hooks?: ScorePipelineHooks;
  /** Bootstrap 95% intervals of the report's metrics (`--confidence`), resampling dialogues by default. */
  confidence?: { samples?: number; seed?: Seed; unit?: ResampleUnit };
}

export interface ScorePipelineHooks {
  /** The stores are open: `resumed` of `total` turns were read back; `saved()` counts them as the run goes. */
  started?(state: { resumed: number; total: number; saved: () => number }): void;
  /** A chunk finished: `done` of `total` turns scored (resumed ones included). */
  progress?(done: number, total: number): void;
  /** A warning worth a line on its own (the CLI prefixes `todeval: warning: `). */
  warn?(message: string): void;
  /** Something the user should know that is not wrong (the CLI prefixes `todeval: `). */
  notice?(message: string): void;
}

export interface ScorePipelineResult {
  report: SgsaccReport;
  /** What a shard report adds so that `todeval merge` gives the unsharded numbers exactly: counts, not percentages. */
  tallies: ScoreTallies;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/**
 * `todeval score` as a library call: SGSAcc (validated and unvalidated, seen/unseen) of a system or
 * the ground truth over the selected turns, with SER and BLEU beside it, references and per-turn
 * results kept in their stores so that a run resumes and a second system costs only its own pairs.
 */
export async function runScorePipeline(selection: ScoreSelection, o: ScorePipelineOptions): Promise<ScorePipelineResult> {
  const { data, runner } = o;
  const turns = selection.turns;
  const predictions = o.predictions?.byId;
  const sgsTurns = data.expand(turns);
  const utterances = new Map(turns.map((t) => [t.id, predictions ? predictions.get(t.id)! : t.utterance]));
  const shard = o.shard ? shardLabel(o.shard) : undefined;
  const options: SgsaccOptions = {
    validation: o.validation,
    context: o.context,
    referenceSelection: o.referenceSelection,
    // Sentence granularity checks the facts => text direction per sentence: it needs the direction.
    hallucination: o.hallucination === true || o.granularity === 'sentence',
    ...(o.granularity === 'sentence' ? { granularity: 'sentence' as const } : {}),
    // Without the context premise there is nothing for the control to check.
    contextControl: o.context && o.contextControl === true,
  };

  // The references are shared by both directions: referencesSignature leaves hallucination out.
  const refsSig: Signature = referencesSignature({
    model: runner.modelSignature,
    rulesHash: data.rulesHash,
    dataset: o.dataset,
    source: data.loaded.source,
    schema: data.loaded.schemaLabel,
    ...options,
  });
  const predictionsDigest = predictions ? digest(JSON.stringify([...predictions.entries()].sort())) : 'gold';
  // The references are shared by both modes (a record gains its hallucination premise when first
  // needed); per-turn results and reports are not, so the direction is part of their signatures.
  const hallucinationSig = options.hallucination ? true : undefined;
  // Absent unless asked for, so turn-level runs keep their signatures and digests.
  const granularitySig = options.granularity === 'sentence' ? 'sentence' : undefined;
  // A shard's records carry the shard, like its report; todeval merge writes them under the run's signature.
  const controlSig = contextControlSignature(options.contextControl);
  const turnsSig = makeSignature({
    ...refsSig,
    metric: 'sgsacc-turns',
    system: o.system,
    predictions: predictionsDigest,
    hallucination: hallucinationSig,
    granularity: granularitySig,
    contextControl: controlSig,
    shard,
  });
  // The per-turn file first: when it is refused, a kept references file is left as it was.
  const results = o.turnsFile ? RecordStore.open<TurnScore>(o.turnsFile, 'todeval-sgsacc-turns', turnsSig) : undefined;
  const references = o.referencesFile
    ? RecordStore.open<TurnReferences>(o.referencesFile, 'todeval-sgsacc-references', refsSig, { replaceOtherConfiguration: o.referencesKept })
    : undefined;
  if (references?.replaced) o.hooks?.notice?.(`${o.referencesFile} held references of another configuration (${references.replaced}): started afresh`);
  const saved = () => (results ? turns.filter((t) => results.done.has(t.id)).length : 0);
  o.hooks?.started?.({ resumed: saved(), total: turns.length, saved });

  // SER and BLEU need no model: computed first, so each turn's share of them is stored with its
  // SGSAcc result and a paired test can resample all three from the per-turn file.
  const slotErrors = new Map<string, boolean | null>();
  const ser = computeSer(turns, { predictions, isCategorical: data.isCategorical, onTurn: (id, error) => slotErrors.set(id, error) });
  const withGold = turns.filter((t) => t.utterance.trim() !== '');
  const bleuRefs = withGold.length > 0 ? new BleuReferences([withGold.map((t) => t.utterance)]) : undefined;
  const bleuStats = bleuRefs?.segmentStats(withGold.map((t) => utterances.get(t.id) ?? ''));
  const bleuOf = new Map(withGold.map((t, i) => [t.id, Array.from(bleuStats!.subarray(i * BLEU_STATS_WIDTH, (i + 1) * BLEU_STATS_WIDTH))]));
  const bleu = bleuRefs ? bleuFromSegmentStats(bleuStats!, {}, bleuRefs.signature) : undefined;
  const annotate = (s: TurnScore): TurnScore => ({ ...s, slotError: slotErrors.get(s.id) ?? null, bleu: bleuOf.get(s.id) ?? null });

  const run = await runSgsacc(sgsTurns, utterances, {
    ...options,
    scorer: runner,
    chunkTurns: o.chunkTurns,
    references,
    results,
    groundTruthSystem: !predictions,
    annotate,
    onChunk: ({ turnsDone }) => o.hooks?.progress?.(turnsDone, turns.length),
  });

  const aggregateOptions = { validation: options.validation, isUnseen: data.isUnseen };
  const summary = aggregateSgsacc(run.scores, aggregateOptions);
  // The ground truth as this run sees it (with the control applied when it is on).
  const gold = run.groundTruth.filter((x): x is TurnScore => x !== undefined);
  if (gold.length < turns.length) {
    // Only when resuming --turns without --references: those turns' references were never stored.
    o.hooks?.warn?.(
      `the ground-truth section covers ${gold.length} of ${turns.length} turns ` +
        `(${turns.length - gold.length} were resumed from ${o.turnsFile} without stored references; pass --references FILE to keep them)`,
    );
  }
  const goldSummary = gold.length > 0 ? aggregateSgsacc(gold, aggregateOptions) : null;
  const hallucination = options.hallucination ? aggregateHallucination(run.scores, aggregateOptions) : undefined;
  // Gold turns resumed from --turns without their references carry no premise check: left out, as above.
  const goldChecked = gold.filter((g) => g.hallucination !== undefined);
  const goldHallucination = options.hallucination && goldChecked.length > 0 ? aggregateHallucination(goldChecked, aggregateOptions) : undefined;


  const { counts, ...scores } = summary;
  const missing = selection.missing;
  // The references' configuration, then what makes this system's scores its own.
  const signature = makeSignature({
    ...refsSig,
    metric: 'sgsacc',
    limit: o.limit ?? null,
    system: o.system,
    predictions: predictionsDigest,
    hallucination: hallucinationSig,
    granularity: granularitySig,
    contextControl: controlSig,
    // --allow-missing scores a subset: not comparable with a full run, whatever the digest says.
    missingPredictions: missing.length > 0 ? missing.length : undefined,
    shard,
  });
  const stats = runner.stats();
  const report: SgsaccReport = {
    signature,
    signatureText: formatSignature(signature),
    system: o.system,
    dataset: { name: o.dataset, source: data.loaded.source, turns: turns.length, limit: o.limit ?? null },
    sgsacc: scores,
    counts: { ...counts, missingPredictions: missing.length },
    groundTruth: goldSummary
      ? {
          sgsacc: { validated: goldSummary.validated, unvalidated: goldSummary.unvalidated },
          counts: goldSummary.counts,
          ...(goldHallucination ? { hallucination: goldHallucination } : {}),
          coverage: { turns: gold.length, of: turns.length, complete: gold.length === turns.length },
        }
      : null,
    ...(hallucination ? { hallucination } : {}),
    ...(options.granularity === 'sentence'
      ? { sentences: { ...aggregateSentences(run.scores, aggregateOptions), confidence: sentenceConfidence(run.scores, { validation: options.validation, ...o.confidence }) } }
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
    predictions: { file: o.predictions?.file ?? null, missing, extra: selection.extra },
    references: {
      file: o.referencesFile ?? null,
      reused: run.counts.referencesReused,
      computed: run.counts.referencesComputed,
      missing: run.counts.referencesMissing,
    },
    resumed: run.counts.resumed,
    nli: { requested: stats.requested, issued: stats.issued, cacheHits: stats.cacheHits, batches: stats.batches },
  };
  if (o.confidence) {
    // Turns resumed from an older per-turn file lack their SER and BLEU shares: added here.
    report.confidence = runConfidence(turnItemStats(run.scores.map(annotate), { validation: options.validation }), o.confidence);
  }
  const tallies: ScoreTallies = {
    sgsacc: tallySgsacc(run.scores, aggregateOptions),
    groundTruth: gold.length > 0 ? tallySgsacc(gold, aggregateOptions) : null,
    ...(options.hallucination ? { hallucination: tallyHallucination(run.scores, aggregateOptions) } : {}),
    ...(options.hallucination && goldChecked.length > 0 ? { groundTruthHallucination: tallyHallucination(goldChecked, aggregateOptions) } : {}),
    bleu: bleu ? { counts: bleu.counts, totals: bleu.totals, sysLen: bleu.sysLen, refLen: bleu.refLen } : null,
  };
  return { report, tallies };
}
