import { RateTally, sumCounts, type AggregateOptions, type RateSummary, type RateTallyOf } from './aggregate.js';
import type { FourWayLabel, HallucinationExclusionReason, TurnScore } from './types.js';

export type LabelCounts = Record<FourWayLabel, number>;

export interface HallucinationCounts {
  /** Turns in the slice. */
  turns: number;
  /** Turns checked in the facts => text direction (their premise has content). */
  checked: number;
  /** Turns whose every act is content-free (GOODBYE, REQ_MORE, greetings): not checked, by rule. */
  contentFree: number;
  /** Turns with an action without reference: no premise. */
  unscorable: number;
  /** Checked turns behind the validated rate (both directions passed on the gold utterance). */
  evaluated: number;
  /** Checked turns left out of the validated rate. */
  excluded: number;
  /** Excluded checked turns per reason (a turn counts once per distinct reason). */
  excludedByReason: Partial<Record<HallucinationExclusionReason, number>>;
  /** Checked turns credited through the premise with the previous user turn (the plain premise failed). */
  contextRescued: number;
  /** User-turn rescues the user turn alone entails (withdrawn with the control on, else among contextRescued). */
  contextOnly: number;
}

/**
 * The percent of checked turns whose utterance the references do not entail, among validated turns
 * (`validated`) and among all checked turns (`unvalidated`). Per service it is turn-level (a
 * multi-service turn counts for each), per act too: a turn counts once for each distinct act it has
 * (the verdict does not split by act).
 */
export interface HallucinationSummary extends RateSummary<HallucinationCounts> {
  /** Four-way labels of the labelled turns: validated ones (both directions), and all. */
  labels: { validated: LabelCounts | null; all: LabelCounts };
}

const noLabels = (): LabelCounts => ({ ok: 0, omission: 0, hallucination: 0, both: 0 });

/** Hallucination rates (overall, seen/unseen, per service and act) and the four-way label counts. */
export function aggregateHallucination(scores: TurnScore[], opts: AggregateOptions): HallucinationSummary {
  return summarizeHallucination([tallyHallucination(scores, opts)], opts.validation);
}

/** The counts behind a HallucinationSummary, which add up across shards (see SgsaccTally). */
export interface HallucinationTally extends RateTallyOf<HallucinationCounts> {
  labels: { validated: LabelCounts; all: LabelCounts };
}

export function tallyHallucination(scores: TurnScore[], opts: AggregateOptions): HallucinationTally {
  const rates = new RateTally();
  const labels = { validated: noLabels(), all: noLabels() };
  const counts: HallucinationCounts = {
    turns: scores.length,
    checked: 0,
    contentFree: 0,
    unscorable: 0,
    evaluated: 0,
    excluded: 0,
    excludedByReason: {},
    contextRescued: 0,
    contextOnly: 0,
  };

  for (const s of scores) {
    const h = s.hallucination;
    if (!h) throw new Error(`turn ${s.id} was scored without the hallucination direction`);
    const inValidated = !opts.validation || h.validation === 'validated';
    if (s.label) {
      labels.all[s.label]++;
      if (inValidated) labels.validated[s.label]++;
    }
    if (h.check === 'content-free') counts.contentFree++;
    if (h.check === 'unscorable') counts.unscorable++;
    if (h.check !== 'checked' || h.hallucinated === null) continue;
    counts.checked++;
    if (h.contextUsed && !h.hallucinated) counts.contextRescued++;
    if (h.contextUsed && h.contextOnly) counts.contextOnly++;
    const bad = h.hallucinated;
    rates.addTurn(bad, s.services.some(opts.isUnseen), inValidated);
    if (inValidated) counts.evaluated++;
    else for (const r of h.exclusionReasons ?? []) counts.excludedByReason[r] = (counts.excludedByReason[r] ?? 0) + 1;
    for (const service of new Set(s.services)) rates.addService(service, bad, inValidated);
    for (const act of new Set(s.actions.map((a) => a.act))) rates.addAct(act, bad, inValidated);
  }
  counts.excluded = counts.checked - counts.evaluated;
  return { rates: rates.state(), labels, counts };
}

/** The summary of the turns behind `tallies` (one: aggregateHallucination; a shard's each: the merged run). */
export function summarizeHallucination(tallies: readonly HallucinationTally[], validation: boolean): HallucinationSummary {
  const labels = { validated: sumCounts(tallies.map((t) => t.labels.validated)), all: sumCounts(tallies.map((t) => t.labels.all)) };
  return {
    ...RateTally.from(tallies.map((t) => t.rates)).summary(validation),
    labels: { validated: validation ? labels.validated : null, all: labels.all },
    counts: sumCounts(tallies.map((t) => t.counts)),
  };
}
