import { bleuFromStats } from '../metrics/text/bleu.js';
import { summarizeHallucination, type HallucinationTally } from '../metrics/sgsacc/aggregate-hallucination.js';
import { summarizeSgsacc, type SgsaccTally } from '../metrics/sgsacc/aggregate.js';
import { mergeSentenceShards, type SentenceShardTally } from '../metrics/sgsacc/aggregate-sentences.js';
import type { SgsaccReport } from '../metrics/sgsacc/report.js';
import { inRunOrder } from '../util/run-order.js';
import { formatSignature } from '../util/signature.js';
import { byShardIndex, checkShardSet, mergeSerCounts, runSignature, type LoadedShard } from './merge.js';
import type { ShardBlock } from './spec.js';

/** BLEU's corpus statistics: sums over segments, so shards add up to the whole corpus exactly. */
export interface BleuStats {
  counts: number[];
  totals: number[];
  sysLen: number;
  refLen: number;
}

/** The counts behind a score report's percentages, which shards add up to the whole run's. */
export interface ScoreTallies {
  sgsacc: SgsaccTally;
  /** The ground-truth section's; null when this shard has no gold turn. */
  groundTruth: SgsaccTally | null;
  /** With --hallucination. */
  hallucination?: HallucinationTally;
  groundTruthHallucination?: HallucinationTally;
  bleu: BleuStats | null;
  /** With --granularity sentence (sentenceShardTally). */
  sentences?: SentenceShardTally;
}

/** `todeval score --shard K/N -o FILE` writes this: the report of its part, plus what merges. */
export interface ScoreShardReport extends SgsaccReport {
  shard: ShardBlock & {
    /** Where `ser.erroneousTurns` stand in the unsharded run's turns. */
    erroneousAt: number[];
    tallies: ScoreTallies;
  };
}

/** The sentence section of the whole run (mergeSentenceShards), from the shards in run order. */
function mergeSentences(shards: readonly LoadedShard<ScoreShardReport>[], validation: boolean): SgsaccReport['sentences'] {
  return mergeSentenceShards(
    shards.map((s) => ({ file: s.file, part: s.report.shard.tallies.sentences })),
    validation,
  );
}

/**
 * The report `todeval score` gives for all the shards' turns, from the shards' reports: every
 * count and percentage is recomputed from summed counts with the code the unsharded run uses, so
 * it equals that run's report exactly. `nli` counts the work done (pairs issued, cache hits, batches),
 * which depends on how the turns were batched, and is summed; so are `resumed` and `references`'
 * reused/computed. `referencesFile` is the merged references file, when the caller wrote one.
 */
export function mergeScoreReports(loaded: readonly LoadedShard<ScoreShardReport>[], opts: { referencesFile?: string } = {}): SgsaccReport {
  // Each shard counts only its own missing predictions: the run's total is their sum.
  checkShardSet(loaded, ['missingPredictions']);
  const ordered = byShardIndex(loaded);
  const shards = ordered.map((s) => s.report);
  const first = shards[0];
  const validation = first.signature.validation !== false;
  const sum = (f: (r: ScoreShardReport) => number) => sumOver(shards, f);
  const { counts, ...sgsacc } = summarizeSgsacc(
    shards.map((r) => r.shard.tallies.sgsacc),
    validation,
  );
  const hallTallies = present(shards.map((r) => r.shard.tallies.hallucination));
  const hallucination = hallTallies.length > 0 ? summarizeHallucination(hallTallies, validation) : undefined;
  const sentences = first.signature.granularity === 'sentence' ? mergeSentences(ordered, validation) : undefined;
  const missing = inRunOrder(shards.map((r) => ({ items: r.predictions.missing, at: r.shard.positions })));
  const signature = runSignature(first.signature, { missingPredictions: missing.length > 0 ? missing.length : undefined });
  const nli: Record<string, number> = {};
  for (const r of shards) for (const [k, v] of Object.entries(r.nli)) nli[k] = (nli[k] ?? 0) + v;

  return {
    signature,
    signatureText: formatSignature(signature),
    system: first.system,
    dataset: { ...first.dataset, turns: sum((r) => r.dataset.turns) },
    sgsacc,
    counts: { ...counts, missingPredictions: sum((r) => r.counts.missingPredictions) },
    groundTruth: mergeGroundTruth(shards, validation),
    ...(hallucination ? { hallucination } : {}),
    ...(sentences ? { sentences } : {}),
    ser: mergeSer(shards),
    bleu: mergeBleu(shards),
    predictions: { file: first.predictions.file, missing, extra: first.predictions.extra },
    references: {
      file: opts.referencesFile ?? null,
      reused: sum((r) => r.references.reused),
      computed: sum((r) => r.references.computed),
      missing: sum((r) => r.references.missing),
    },
    resumed: sum((r) => r.resumed),
    nli,
  };
}

function sumOver(shards: readonly ScoreShardReport[], f: (r: ScoreShardReport) => number): number {
  return shards.reduce((n, r) => n + f(r), 0);
}

function present<T>(xs: (T | null | undefined)[]): T[] {
  return xs.filter((x): x is T => x !== null && x !== undefined);
}

/** The ground-truth section: null when no shard has a gold turn. */
function mergeGroundTruth(shards: readonly ScoreShardReport[], validation: boolean): SgsaccReport['groundTruth'] {
  const goldTallies = present(shards.map((r) => r.shard.tallies.groundTruth));
  if (goldTallies.length === 0) return null;
  const gold = summarizeSgsacc(goldTallies, validation);
  const goldHallTallies = present(shards.map((r) => r.shard.tallies.groundTruthHallucination));
  const goldHallucination = goldHallTallies.length > 0 ? summarizeHallucination(goldHallTallies, validation) : undefined;
  const coverage = {
    turns: sumOver(shards, (r) => r.groundTruth?.coverage.turns ?? 0),
    of: sumOver(shards, (r) => r.groundTruth?.coverage.of ?? r.dataset.turns),
  };
  return {
    sgsacc: { validated: gold.validated, unvalidated: gold.unvalidated },
    counts: gold.counts,
    ...(goldHallucination ? { hallucination: goldHallucination } : {}),
    coverage: { ...coverage, complete: coverage.turns === coverage.of },
  };
}

/** SER from the summed errors and utterances, overall and per service; erroneous turns in run order. */
function mergeSer(shards: readonly ScoreShardReport[]): SgsaccReport['ser'] {
  return {
    ...mergeSerCounts(shards.map((r) => r.ser)),
    turnsScored: sumOver(shards, (r) => r.ser.turnsScored),
    erroneousTurns: inRunOrder(shards.map((r) => ({ items: r.ser.erroneousTurns ?? [], at: r.shard.erroneousAt }))),
  };
}

/** Corpus BLEU from the summed statistics of the shards that have any; null when none has. */
function mergeBleu(shards: readonly ScoreShardReport[]): SgsaccReport['bleu'] {
  const bleuParts = shards.filter((r) => r.shard.tallies.bleu !== null);
  if (bleuParts.length === 0) return null;
  const stats = bleuParts.map((r) => r.shard.tallies.bleu!);
  const add = (k: 'counts' | 'totals') => stats[0][k].map((_, n) => stats.reduce((s, b) => s + b[k][n], 0));
  const b = bleuFromStats(add('counts'), add('totals'), stats.reduce((s, x) => s + x.sysLen, 0), stats.reduce((s, x) => s + x.refLen, 0));
  return { score: b.score, signature: bleuParts[0].bleu!.signature, sysLen: b.sysLen, refLen: b.refLen, bp: b.bp };
}
