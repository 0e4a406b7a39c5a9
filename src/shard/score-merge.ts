import { bleuFromStats } from '../metrics/text/bleu.js';
import { serPercent } from '../metrics/ser.js';
import { summarizeHallucination, type HallucinationTally } from '../metrics/sgsacc/aggregate-hallucination.js';
import { summarizeSgsacc, type SgsaccTally } from '../metrics/sgsacc/aggregate.js';
import { sentenceTurns, sentenceTurnsConfidence, summarizeSentences, type SentenceTally, type SentenceTurn } from '../metrics/sgsacc/aggregate-sentences.js';
import type { TurnScore } from '../metrics/sgsacc/types.js';
import { InputError } from '../util/errors.js';
import type { SgsaccReport } from '../metrics/sgsacc/report.js';
import { formatSignature } from '../util/signature.js';
import { byShardIndex, checkShardSet, runSignature, type LoadedShard } from './merge.js';
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
  /** With --granularity sentence (sentenceTallies). */
  sentences?: SentenceShardTally;
}

/**
 * A shard's sentence-level counts, and each of its turns' part in the sentence rate: the whole
 * run's bootstrap intervals resample all turns at once, so the merge needs the turns, not the
 * shard's intervals. Each turn is one JSON string `[position, id, services, acts, validated (0|1),
 * unsupported, checked]` (position: where the turn stands in the unsharded run), one line of the
 * report per turn rather than a dozen.
 */
export interface SentenceShardTally {
  tally: SentenceTally;
  turns: string[];
}

/** What a shard report of a sentence-granularity run carries (see SentenceShardTally). */
export function sentenceTallies(tally: SentenceTally, scores: readonly TurnScore[], opts: { validation: boolean; positionOf: ReadonlyMap<string, number> }): SentenceShardTally {
  return {
    tally,
    turns: sentenceTurns(scores, opts).map((t) => JSON.stringify([opts.positionOf.get(t.id), t.id, t.services, t.acts, t.validated ? 1 : 0, t.unsupported, t.checked])),
  };
}

function parseOr(text: unknown): unknown {
  try {
    return typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** The turns of every shard's SentenceShardTally, in the unsharded run's order. */
function sentenceTurnsOf(shards: readonly LoadedShard<ScoreShardReport>[]): SentenceTurn[] {
  const all: { at: number; turn: SentenceTurn }[] = [];
  for (const { file, report } of shards) {
    const part = report.shard.tallies.sentences;
    if (!part || !Array.isArray(part.turns)) {
      throw new InputError('this shard of a --granularity sentence run has no sentence tallies to merge (written by an older todeval): run the shard again', { file });
    }
    part.turns.forEach((line, i) => {
      const t = parseOr(line);
      const ok =
        Array.isArray(t) && t.length === 7 && Number.isInteger(t[0]) && typeof t[1] === 'string' && Array.isArray(t[2]) && Array.isArray(t[3]) && [0, 1].includes(t[4] as number) && Number.isInteger(t[5]) && Number.isInteger(t[6]);
      if (!ok) throw new InputError('damaged sentence tally: run the shard again', { file, where: `shard.tallies.sentences.turns[${i}]` });
      const [at, id, services, acts, validated, unsupported, checked] = t as [number, string, string[], string[], number, number, number];
      all.push({ at, turn: { id, services, acts, validated: validated === 1, unsupported, checked } });
    });
  }
  return all.sort((a, b) => a.at - b.at).map((x) => x.turn);
}

/**
 * The sentence section of the whole run: counts and rates from the shards' summed counts, the
 * intervals drawn again over all the shards' turns in the run's order, as one process draws them
 * (a shard refuses --confidence, so they use the default resampling, as its own did).
 */
function mergeSentences(shards: readonly LoadedShard<ScoreShardReport>[], validation: boolean): SgsaccReport['sentences'] {
  const turns = sentenceTurnsOf(shards);
  return {
    ...summarizeSentences(
      shards.map((s) => s.report.shard.tallies.sentences!.tally),
      validation,
    ),
    confidence: sentenceTurnsConfidence(turns, { validation }),
  };
}

/** `todeval score --shard K/N -o FILE` writes this: the report of its part, plus what merges. */
export interface ScoreShardReport extends SgsaccReport {
  shard: ShardBlock & {
    /** Where `ser.erroneousTurns` stand in the unsharded run's turns. */
    erroneousAt: number[];
    tallies: ScoreTallies;
  };
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
  const shards = byShardIndex(loaded).map((s) => s.report);
  const first = shards[0];
  const validation = first.signature.validation !== false;
  const sum = (f: (r: ScoreShardReport) => number) => shards.reduce((n, r) => n + f(r), 0);
  const present = <T>(xs: (T | null | undefined)[]): T[] => xs.filter((x): x is T => x !== null && x !== undefined);

  const { counts, ...sgsacc } = summarizeSgsacc(
    shards.map((r) => r.shard.tallies.sgsacc),
    validation,
  );
  const goldTallies = present(shards.map((r) => r.shard.tallies.groundTruth));
  const gold = goldTallies.length > 0 ? summarizeSgsacc(goldTallies, validation) : null;
  const hallTallies = present(shards.map((r) => r.shard.tallies.hallucination));
  const hallucination = hallTallies.length > 0 ? summarizeHallucination(hallTallies, validation) : undefined;
  const goldHallTallies = present(shards.map((r) => r.shard.tallies.groundTruthHallucination));
  const goldHallucination = goldHallTallies.length > 0 ? summarizeHallucination(goldHallTallies, validation) : undefined;
  const sentences = first.signature.granularity === 'sentence' ? mergeSentences(byShardIndex(loaded), validation) : undefined;
  const coverage = { turns: sum((r) => r.groundTruth?.coverage.turns ?? 0), of: sum((r) => r.groundTruth?.coverage.of ?? r.dataset.turns) };

  const serPerService: SgsaccReport['ser']['perService'] = {};
  const services = [...new Set(shards.flatMap((r) => Object.keys(r.ser.perService)))].sort();
  for (const svc of services) {
    const errors = sum((r) => r.ser.perService[svc]?.errors ?? 0);
    const total = sum((r) => r.ser.perService[svc]?.total ?? 0);
    serPerService[svc] = { ser: serPercent(errors, total), errors, total };
  }
  const serErrors = sum((r) => r.ser.errors);
  const withValues = sum((r) => r.ser.utterancesWithValues);

  const bleuParts = shards.filter((r) => r.shard.tallies.bleu !== null);
  let bleu: SgsaccReport['bleu'] = null;
  if (bleuParts.length > 0) {
    const stats = bleuParts.map((r) => r.shard.tallies.bleu!);
    const add = (k: 'counts' | 'totals') => stats[0][k].map((_, n) => stats.reduce((s, b) => s + b[k][n], 0));
    const b = bleuFromStats(add('counts'), add('totals'), stats.reduce((s, x) => s + x.sysLen, 0), stats.reduce((s, x) => s + x.refLen, 0));
    bleu = { score: b.score, signature: bleuParts[0].bleu!.signature, sysLen: b.sysLen, refLen: b.refLen, bp: b.bp };
  }

  // Lists back in the order of the unsharded run's turns, from each shard's positions.
  const inRunOrder = (lists: { ids: string[]; at: number[] }[]) =>
    lists
      .flatMap(({ ids, at }) => ids.map((id, i) => ({ id, at: at[i] })))
      .sort((a, b) => a.at - b.at)
      .map((x) => x.id);
  const missing = inRunOrder(shards.map((r) => ({ ids: r.predictions.missing, at: r.shard.positions })));
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
    groundTruth: gold
      ? {
          sgsacc: { validated: gold.validated, unvalidated: gold.unvalidated },
          counts: gold.counts,
          ...(goldHallucination ? { hallucination: goldHallucination } : {}),
          coverage: { ...coverage, complete: coverage.turns === coverage.of },
        }
      : null,
    ...(hallucination ? { hallucination } : {}),
    ...(sentences ? { sentences } : {}),
    ser: {
      ser: serPercent(serErrors, withValues),
      errors: serErrors,
      utterancesWithValues: withValues,
      perService: serPerService,
      turnsScored: sum((r) => r.ser.turnsScored),
      erroneousTurns: inRunOrder(shards.map((r) => ({ ids: r.ser.erroneousTurns ?? [], at: r.shard.erroneousAt }))),
    },
    bleu,
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
