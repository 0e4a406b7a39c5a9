import { RateTally, sumCounts, type AggregateOptions, type RateSummary, type RateTallyOf } from './aggregate.js';
import type { CourtesyKind } from './courtesy.js';
import { runConfidence, type ResampleUnit } from '../significance/confidence.js';
import { dialogueOfTurn, metricItems, ratioMetric } from '../significance/items.js';
import type { Seed } from '../significance/pcg64.js';
import { SGSACC_METRICS, sentenceRows } from './item-stats.js';
import type { SentenceConfidence } from './report.js';
import type { TurnScore } from './types.js';
import { InputError } from '../../util/errors.js';
import { inRunOrder } from '../../util/run-order.js';

export interface SentenceCounts {
  /** Turns in the slice. */
  turns: number;
  /** Checked turns (the turn-level check is 'checked'). */
  checkedTurns: number;
  /** Sentences of all turns, courtesy and unchecked ones included. */
  sentences: number;
  courtesy: number;
  /** Courtesy sentences per kind. */
  courtesyByKind: Partial<Record<CourtesyKind, number>>;
  /** Sentences of unscorable turns (an action without a reference), courtesy ones aside. */
  unchecked: number;
  /** Sentences checked against the facts: supported + unsupported + contradicted. */
  checked: number;
  supported: number;
  unsupported: number;
  contradicted: number;
  /** Supported only through the context fact (the user turn in front of the facts). */
  contextRescued: number;
  /** Context rescues the user turn alone entails (unsupported with the control on). */
  contextOnly: number;
  /** Turns (checked or content-free) with at least one unsupported or contradicted sentence. */
  turnsWithUnsupported: number;
}

/**
 * The sentence-level hallucination rate: percent of checked sentences no fact supports. `validated`
 * is among the sentences of turns validated in the turn-level hallucination direction; per service
 * and per act are of the sentence's turn (a sentence counts once for each).
 */
export type SentenceSummary = RateSummary<SentenceCounts>;

export type SentenceTally = RateTallyOf<SentenceCounts>;

/** The sentence-level summary of a run whose turns were scored with granularity 'sentence'. */
export function aggregateSentences(scores: TurnScore[], opts: AggregateOptions): SentenceSummary {
  return summarizeSentences([tallySentences(scores, opts)], opts.validation);
}

export function tallySentences(scores: TurnScore[], opts: AggregateOptions): SentenceTally {
  const rates = new RateTally();
  const counts: SentenceCounts = {
    turns: scores.length,
    checkedTurns: 0,
    sentences: 0,
    courtesy: 0,
    courtesyByKind: {},
    unchecked: 0,
    checked: 0,
    supported: 0,
    unsupported: 0,
    contradicted: 0,
    contextRescued: 0,
    contextOnly: 0,
    turnsWithUnsupported: 0,
  };
  for (const s of scores) {
    const t = s.sentences;
    if (!t) throw new Error(`turn ${s.id} was scored without sentence granularity`);
    if (t.check === 'checked') counts.checkedTurns++;
    if (t.unsupported.length > 0) counts.turnsWithUnsupported++;
    const inValidated = !opts.validation || s.hallucination?.validation === 'validated';
    const unseen = s.services.some(opts.isUnseen);
    const acts = new Set(s.actions.map((a) => a.act));
    for (const v of t.sentences) {
      counts.sentences++;
      if (v.verdict === 'courtesy') {
        counts.courtesy++;
        if (v.courtesy) counts.courtesyByKind[v.courtesy] = (counts.courtesyByKind[v.courtesy] ?? 0) + 1;
        continue;
      }
      if (v.verdict === 'unchecked') {
        counts.unchecked++;
        continue;
      }
      counts.checked++;
      counts[v.verdict]++;
      if (v.contextUsed && v.verdict === 'supported') counts.contextRescued++;
      if (v.contextUsed && v.contextOnly) counts.contextOnly++;
      const bad = v.verdict !== 'supported';
      rates.addTurn(bad, unseen, inValidated);
      for (const service of new Set(s.services)) rates.addService(service, bad, inValidated);
      for (const act of acts) rates.addAct(act, bad, inValidated);
    }
  }
  return { rates: rates.state(), counts };
}

export function summarizeSentences(tallies: readonly SentenceTally[], validation: boolean): SentenceSummary {
  return { ...RateTally.from(tallies.map((t) => t.rates)).summary(validation), counts: sumCounts(tallies.map((t) => t.counts)) };
}

/**
 * One turn's part in the sentence-level rate: all its bootstrap needs. A shard report carries these
 * (src/shard/score-merge.ts) so that todeval merge draws the whole run's intervals, which no sum of
 * shard-level intervals gives.
 */
export interface SentenceTurn {
  id: string;
  services: string[];
  /** The acts of the turn's actions, each once. */
  acts: string[];
  /** In the validated rate: the turn-level direction validated it, or the run has no validation. */
  validated: boolean;
  /** Checked sentences no fact supports (unsupported or contradicted). */
  unsupported: number;
  /** Sentences checked against the facts. */
  checked: number;
}

/** Each turn's part in the sentence-level rate, in the run's order. */
export function sentenceTurns(scores: readonly TurnScore[], opts: { validation: boolean }): SentenceTurn[] {
  const rows = sentenceRows(scores, () => true);
  return scores.map((s, i) => ({
    id: s.id,
    services: s.services,
    acts: [...new Set(s.actions.map((a) => a.act))],
    validated: !opts.validation || s.hallucination?.validation === 'validated',
    unsupported: rows[i][0],
    checked: rows[i][1],
  }));
}

/**
 * Bootstrap 95% intervals of the sentence-level rate (resampling dialogues by default, through the
 * significance room): overall, and per service and per act over all checked sentences, each group
 * resampling the dialogues of its own turns.
 */
export function sentenceConfidence(
  scores: readonly TurnScore[],
  opts: { validation: boolean; samples?: number; seed?: Seed; unit?: ResampleUnit },
): SentenceConfidence {
  return sentenceTurnsConfidence(sentenceTurns(scores, opts), opts);
}

/** sentenceConfidence from the turns' parts (sentenceTurns), in the run's order: the order resampling draws in. */
export function sentenceTurnsConfidence(
  turns: readonly SentenceTurn[],
  opts: { validation: boolean; samples?: number; seed?: Seed; unit?: ResampleUnit },
): SentenceConfidence {
  const rowsOf = (members: readonly SentenceTurn[], inRate: (t: SentenceTurn) => boolean) => members.map((t) => (inRate(t) ? [t.unsupported, t.checked] : [0, 0]));
  const items = (name: string, members: readonly SentenceTurn[], rows: number[][]) => {
    const ids = members.map((t) => t.id);
    return metricItems(ratioMetric(name), 'turn', ids, ids.map(dialogueOfTurn), rows);
  };
  // The rows score's per-turn file gives the paired tests (item-stats.ts turnItemStats), so the
  // intervals here and compare's resamples agree.
  const overall = runConfidence(
    {
      ...(opts.validation ? { 'hallucination-sentences': items(SGSACC_METRICS['hallucination-sentences'], turns, rowsOf(turns, (t) => t.validated)) } : {}),
      'hallucination-sentences-all': items(SGSACC_METRICS['hallucination-sentences-all'], turns, rowsOf(turns, () => true)),
    },
    opts,
  );
  // A group resamples only its own turns (grouped by their dialogues): the same rate as zeroing the
  // rest, at the cost of its size rather than the run's (57 groups of the SGD test took 35 s the other way).
  const group = (name: string, keep: (t: SentenceTurn) => boolean) => {
    const members = turns.filter(keep);
    const rows = rowsOf(members, () => true);
    if (!rows.some((r) => r[1] > 0)) return undefined;
    return runConfidence({ g: items(name, members, rows) }, opts).metrics.g;
  };
  const perService: SentenceConfidence['perService'] = {};
  for (const svc of [...new Set(turns.flatMap((t) => t.services))].sort()) {
    const c = group(`Hallucination (sentences, ${svc})`, (t) => t.services.includes(svc));
    if (c) perService[svc] = c;
  }
  const perAct: SentenceConfidence['perAct'] = {};
  for (const act of [...new Set(turns.flatMap((t) => t.acts))].sort()) {
    const c = group(`Hallucination (sentences, ${act})`, (t) => t.acts.includes(act));
    if (c) perAct[act] = c;
  }
  return { overall, perService, perAct };
}

/**
 * A shard's sentence-level counts, and each of its turns' part in the sentence rate: the whole
 * run's bootstrap intervals resample all turns at once, so a merge needs the turns, not the shard's
 * intervals. Each turn is one JSON string `[position, id, services, acts, validated (0|1),
 * unsupported, checked]` (position: where the turn stands in the unsharded run), one line of the
 * report per turn rather than a dozen. `score` and `evaluate --sgsacc` shards carry it.
 */
export interface SentenceShardTally {
  tally: SentenceTally;
  turns: string[];
}

/** What a shard report of a sentence-granularity run carries (see SentenceShardTally). */
export function sentenceShardTally(tally: SentenceTally, scores: readonly TurnScore[], opts: { validation: boolean; positionOf: ReadonlyMap<string, number> }): SentenceShardTally {
  return {
    tally,
    turns: sentenceTurns(scores, opts).map((t) => JSON.stringify([opts.positionOf.get(t.id), t.id, t.services, t.acts, t.validated ? 1 : 0, t.unsupported, t.checked])),
  };
}

function parseOrUndefined(text: unknown): unknown {
  try {
    return typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** The turns of every shard's SentenceShardTally, in the unsharded run's order. */
function sentenceTurnsOf(parts: readonly { file: string; part: SentenceShardTally | undefined }[]): SentenceTurn[] {
  const lists: { items: SentenceTurn[]; at: number[] }[] = [];
  for (const { file, part } of parts) {
    if (!part || !Array.isArray(part.turns)) {
      throw new InputError('this shard of a --granularity sentence run has no sentence tallies to merge (written by an older todeval): run the shard again', { file });
    }
    const items: SentenceTurn[] = [];
    const at: number[] = [];
    part.turns.forEach((line, i) => {
      const t = parseOrUndefined(line);
      const ok =
        Array.isArray(t) &&
        t.length === 7 &&
        Number.isInteger(t[0]) &&
        typeof t[1] === 'string' &&
        Array.isArray(t[2]) &&
        Array.isArray(t[3]) &&
        (t[4] === 0 || t[4] === 1) &&
        Number.isInteger(t[5]) &&
        Number.isInteger(t[6]);
      if (!ok) throw new InputError('damaged sentence tally: run the shard again', { file, where: `turn ${i + 1} of its sentence tally` });
      const [position, id, services, acts, validated, unsupported, checked] = t as [number, string, string[], string[], number, number, number];
      items.push({ id, services, acts, validated: validated === 1, unsupported, checked });
      at.push(position);
    });
    lists.push({ items, at });
  }
  return inRunOrder(lists);
}

/**
 * The sentence section of a whole run from its shards' SentenceShardTally, given in shard order:
 * counts and rates from the summed counts, the intervals drawn again over all the shards' turns in
 * the run's order, as one process draws them. Shards refuse --confidence, so the intervals use the
 * default resampling, as each shard's own did.
 */
export function mergeSentenceShards(parts: readonly { file: string; part: SentenceShardTally | undefined }[], validation: boolean): SentenceSummary & { confidence: SentenceConfidence } {
  const turns = sentenceTurnsOf(parts);
  return {
    ...summarizeSentences(
      parts.map((p) => p.part!.tally),
      validation,
    ),
    confidence: sentenceTurnsConfidence(turns, { validation }),
  };
}
