import type { MwzDatabase } from './database.js';
import type { MwzGoal } from './ground-truth.js';
import type { BeliefState } from './normalize-state.js';

/** Placeholders that deliver requested information; REFERENCE only counts once booked. */
export const REQUESTABLE_SLOTS = ['PHONE', 'ADDRESS', 'POST', 'REFERENCE', 'TRAINID'] as const;
const NO_DATABASE_DOMAINS = new Set(['taxi', 'police', 'hospital']);
const NAMED_VENUE_DOMAINS = new Set(['restaurant', 'hotel', 'attraction']);

export interface SuccessVariant {
  /** Offered and goal venues match when they intersect (optimistic) instead of subset. */
  intersection: boolean;
  /** Database search by name / train id only when one is present (optimistic). */
  reducedSearch: boolean;
}
export const STANDARD: SuccessVariant = { intersection: false, reducedSearch: false };
export const OPTIMISTIC: SuccessVariant = { intersection: true, reducedSearch: true };

export interface DialogueInput {
  /** Normalized responses (uppercase placeholders, lower-cased text). */
  responses: string[];
  states: BeliefState[];
  activeDomains: string[][];
  /** Per system turn, domains booked so far (mwzeval's booked_domains.json). */
  bookedDomains: string[][];
}

export interface DialogueOutcome {
  /** domain -> matched; plus `total`. */
  match: Record<string, boolean>;
  /** Only when every domain matched: domain -> all requested info given; plus `total`. */
  success: Record<string, boolean>;
  /** Offered venue ids per domain at the end, or 'MATCHED' when no venue has to be offered. */
  offered: Record<string, string[] | 'MATCHED'>;
  provided: Record<string, string[]>;
}

/**
 * Inform and Success of one dialogue (mwzeval's get_dialog_success). The offered venues of a
 * domain are the database rows matching the current state, re-read whenever a response carries
 * NAME (TRAINID for trains) and the earlier offer is no longer a subset of the current matches.
 */
export function dialogueSuccess(
  goal: MwzGoal,
  input: DialogueInput,
  db: MwzDatabase,
  variant: SuccessVariant = STANDARD,
): DialogueOutcome {
  const domains = Object.keys(goal);
  const offered: Record<string, string[] | 'MATCHED'> = {};
  const provided: Record<string, Set<string>> = {};
  for (const d of domains) {
    offered[d] = [];
    provided[d] = new Set();
  }
  const queryOpts = { reducedSearch: variant.reducedSearch };

  input.responses.forEach((utterance, t) => {
    const state = input.states[t] ?? {};
    const active = input.activeDomains[t] ?? [];
    const booked = input.bookedDomains[t] ?? [];
    for (const domain of domains) {
      if (!active.includes(domain)) continue;
      const mentionsVenue =
        (utterance.includes('NAME') && NAMED_VENUE_DOMAINS.has(domain)) ||
        (utterance.includes('TRAINID') && domain === 'train');
      if (mentionsVenue) {
        const matching = domain in state ? db.query(domain, state[domain], queryOpts) : [];
        const prev = offered[domain] as string[];
        if (prev.length === 0 || prev.some((v) => !matching.includes(v))) offered[domain] = matching;
      }
      for (const slot of REQUESTABLE_SLOTS) {
        if (!utterance.includes(slot)) continue;
        // a reference is only credible where the corpus says a booking had been made
        if (slot === 'REFERENCE') {
          if (booked.includes(domain)) provided[domain].add(slot);
        } else {
          provided[domain].add(slot);
        }
      }
    }
  });

  for (const domain of domains) {
    if ('name' in goal[domain].informable) offered[domain] = 'MATCHED';
    if (NO_DATABASE_DOMAINS.has(domain)) offered[domain] = 'MATCHED';
    // a train that was never offered is fine unless its id was asked for
    if (
      domain === 'train' &&
      Array.isArray(offered.train) &&
      offered.train.length === 0 &&
      !goal.train.requestable.includes('TRAINID')
    ) {
      offered[domain] = 'MATCHED';
    }
  }

  const match: Record<string, boolean> = {};
  for (const domain of domains) {
    const o = offered[domain];
    let ok = false;
    if (o === 'MATCHED') ok = true;
    else if (o.length > 0 && (NAMED_VENUE_DOMAINS.has(domain) || domain === 'train')) {
      const goalVenues = new Set(db.query(domain, goal[domain].informable, queryOpts));
      ok = variant.intersection ? o.some((v) => goalVenues.has(v)) : o.every((v) => goalVenues.has(v));
    }
    match[domain] = ok;
  }
  match.total = domains.every((d) => match[d]);

  const success: Record<string, boolean> = {};
  if (match.total) {
    for (const domain of domains) {
      const wanted = goal[domain].requestable;
      success[domain] = wanted.every((s) => provided[domain].has(s));
    }
    success.total = domains.every((d) => success[d]);
  }
  return {
    match,
    success,
    offered,
    provided: Object.fromEntries(domains.map((d) => [d, [...provided[d]].sort()])),
  };
}

/**
 * Python's round(x, 1): the exact binary value rounded to nearest, exact halves to even. An exact
 * half at one decimal is only representable as a quarter (x.25, x.75); toFixed handles the rest
 * exactly but would round those halves up.
 */
export function round1(x: number): number {
  if (Number.isInteger(x * 4) && !Number.isInteger(x * 2)) {
    const down = Math.floor(x * 10) / 10;
    const up = Math.ceil(x * 10) / 10;
    return Math.round(down * 10) % 2 === 0 ? down : up;
  }
  return Number(x.toFixed(1));
}

export interface SuccessRates {
  inform: Record<string, number>;
  success: Record<string, number>;
}

/**
 * Percentages per domain and `total`, mwzeval's aggregation: a domain's denominator is the number
 * of dialogues whose goal has it, for both rates (a non-matching dialogue counts as unsuccessful).
 */
export function aggregateSuccess(outcomes: DialogueOutcome[]): SuccessRates {
  const total = new Map<string, number>();
  const inform = new Map<string, number>();
  const success = new Map<string, number>();
  for (const o of outcomes) {
    for (const d of new Set([...Object.keys(o.match), ...Object.keys(o.success)])) {
      total.set(d, (total.get(d) ?? 0) + 1);
      inform.set(d, (inform.get(d) ?? 0) + (o.match[d] ? 1 : 0));
      success.set(d, (success.get(d) ?? 0) + (o.success[d] ? 1 : 0));
    }
  }
  const rate = (m: Map<string, number>): Record<string, number> =>
    Object.fromEntries([...m.keys()].sort().map((d) => [d, round1((100 * m.get(d)!) / total.get(d)!)]));
  return { inform: rate(inform), success: rate(success) };
}
