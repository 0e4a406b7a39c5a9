import { turnOutcome, type TurnOutcome } from './outcome.js';
import type { ExclusionReason, TurnScore } from './types.js';

export interface SplitScores {
  /** Percentages; null when the split has no evaluated turn. */
  all: number | null;
  seen: number | null;
  unseen: number | null;
}

export interface GroupScore {
  /** Percent of faithful turns (per service) or entailed actions (per act) among validated ones. */
  validated: number | null;
  unvalidated: number | null;
  /** Denominators behind the two percentages. */
  validatedN: number;
  unvalidatedN: number;
}

export interface SgsaccCounts {
  /** System turns in the evaluated slice. */
  turns: number;
  /** Turns behind validated SGSAcc (all scorable turns when validation is off). */
  evaluated: number;
  /** turns - evaluated: failed validation or not scorable. */
  excluded: number;
  /** Actions of this system credited through the context-augmented premise (the plain premise failed). */
  contextRescued: number;
  /**
   * Context rescues the context alone entails (the context-only control): withdrawn when the run
   * has the control on, else still among contextRescued, which is how many the control would withdraw.
   */
  contextOnly: number;
  /** Actions whose entailment reference was only entailed by the gold utterance with context. */
  referenceContextRescued: number;
  /** Of those, references the context alone entails (the control excludes their turns when on). */
  referenceContextOnly: number;
  /** Turns that cannot be scored at all (an action without any reference). */
  unscorable: number;
  /** Turns behind unvalidated SGSAcc. */
  evaluatedUnvalidated: number;
  actions: number;
  /** Actions that passed validation / failed it (each failing action excludes its turn). */
  actionsValidated: number;
  actionsExcluded: number;
  /** Turns excluded by validation, per reason (a turn counts once per distinct reason). */
  excludedByReason: Partial<Record<ExclusionReason, number>>;
  /** One outcome per turn (turnOutcome): these add up to `turns`. */
  outcomes: OutcomeCounts;
}

/** Turns per outcome; `excluded` is keyed by the turn's sorted reasons joined with '+'. */
export interface OutcomeCounts {
  faithful: number;
  unfaithful: number;
  contextOnly: number;
  unscorable: number;
  excluded: Record<string, number>;
}

/** How an aggregation splits a run's turns: by validation, and seen/unseen by the turn's services. */
export interface AggregateOptions {
  validation: boolean;
  isUnseen: (service: string) => boolean;
}

/**
 * A rate over a run's turns as each SGSAcc summary reports it (SGSAcc, the hallucination rate, the
 * sentence rate): with validation (null when it is off) and without, split by seen and unseen
 * services, per service and per act, with the counts behind it (each kind's own). What is counted
 * in each slot is the kind's: see aggregateSgsacc, aggregateHallucination, aggregateSentences.
 */
export interface RateSummary<Counts> {
  validated: SplitScores | null;
  unvalidated: SplitScores;
  perService: Record<string, GroupScore>;
  perAct: Record<string, GroupScore>;
  counts: Counts;
}

/**
 * The integer counts behind a RateSummary. Summaries of parts cannot be combined exactly (a mean of
 * percentages is not the percentage of the whole); tallies can: the summarize functions add them
 * and give the numbers one run over all their turns gives. Shard reports carry them for `todeval merge`.
 */
export interface RateTallyOf<Counts> {
  rates: RateTallyState;
  counts: Counts;
}

export type SgsaccSummary = RateSummary<SgsaccCounts>;

/** A percentage with its denominator. */
export class Ratio {
  num = 0;
  den = 0;
  add(ok: boolean): void {
    this.den++;
    if (ok) this.num++;
  }
  pct(): number | null {
    return this.den === 0 ? null : (100 * this.num) / this.den;
  }
  pair(): RatioPair {
    return [this.num, this.den];
  }
  addPair([num, den]: RatioPair): void {
    this.num += num;
    this.den += den;
  }
}

/**
 * SGSAcc = faithful / evaluated turns, with validation (only turns whose every action passed) and
 * without (every scorable turn). Seen/unseen and per-service are turn-level (a turn is unseen when
 * any of its services is); per-act is action-level, since a turn's verdict does not split by act.
 */
export function aggregateSgsacc(scores: TurnScore[], opts: AggregateOptions): SgsaccSummary {
  return summarizeSgsacc([tallySgsacc(scores, opts)], opts.validation);
}

/** The integer counts behind an SgsaccSummary (see RateTallyOf), added up by summarizeSgsacc. */
export type SgsaccTally = RateTallyOf<SgsaccCounts>;

export function tallySgsacc(scores: TurnScore[], opts: AggregateOptions): SgsaccTally {
  const rates = new RateTally();
  const counts: SgsaccCounts = {
    turns: scores.length,
    evaluated: 0,
    excluded: 0,
    contextRescued: 0,
    contextOnly: 0,
    referenceContextRescued: 0,
    referenceContextOnly: 0,
    unscorable: 0,
    evaluatedUnvalidated: 0,
    actions: 0,
    actionsValidated: 0,
    actionsExcluded: 0,
    excludedByReason: {},
    outcomes: { faithful: 0, unfaithful: 0, contextOnly: 0, unscorable: 0, excluded: {} },
  };

  for (const s of scores) {
    counts.actions += s.actions.length;
    countOutcome(counts.outcomes, turnOutcome(s));
    for (const a of s.actions) {
      if (a.contextUsed && a.entailed) counts.contextRescued++;
      if (a.contextUsed && a.contextOnly) counts.contextOnly++;
      if (a.referenceViaContext) counts.referenceContextRescued++;
      if (a.referenceViaContext && a.referenceContextOnly) counts.referenceContextOnly++;
      if (a.status === 'validated') counts.actionsValidated++;
      if (a.status === 'excluded') counts.actionsExcluded++;
    }
    for (const r of s.exclusionReasons ?? []) counts.excludedByReason[r] = (counts.excludedByReason[r] ?? 0) + 1;
    if (s.faithful === null) {
      counts.unscorable++;
      continue;
    }
    const unseen = s.services.some(opts.isUnseen);
    const inValidated = !opts.validation || s.validation === 'validated';
    counts.evaluatedUnvalidated++;
    if (inValidated) counts.evaluated++;
    rates.addTurn(s.faithful, unseen, inValidated);
    for (const service of new Set(s.services)) rates.addService(service, s.faithful, inValidated);
    for (const a of s.actions) rates.addAct(a.act, a.entailed, inValidated);
  }
  counts.excluded = counts.turns - counts.evaluated;
  return { rates: rates.state(), counts };
}

function countOutcome(into: OutcomeCounts, o: TurnOutcome): void {
  if (o.kind === 'excluded') {
    const key = o.reasons.join('+') || 'excluded';
    into.excluded[key] = (into.excluded[key] ?? 0) + 1;
  } else if (o.kind === 'context-only') into.contextOnly++;
  else into[o.kind]++;
}

/** The summary of the turns behind `tallies` (one tally: aggregateSgsacc; a shard's each: the merged run). */
export function summarizeSgsacc(tallies: readonly SgsaccTally[], validation: boolean): SgsaccSummary {
  return { ...RateTally.from(tallies.map((t) => t.rates)).summary(validation), counts: sumCounts(tallies.map((t) => t.counts)) };
}

/**
 * Field-wise sums of count records (numbers, and nested records of numbers such as
 * excludedByReason). Keys keep their order of first appearance, as one pass over all turns gives.
 */
export function sumCounts<T extends object>(parts: readonly T[]): T {
  const out: Record<string, unknown> = {};
  for (const part of parts) {
    for (const [k, v] of Object.entries(part)) {
      if (typeof v === 'number') out[k] = ((out[k] as number | undefined) ?? 0) + v;
      else if (typeof v === 'object' && v !== null) out[k] = sumCounts([(out[k] ?? {}) as object, v as object]);
      else throw new Error(`sumCounts: ${k} is not a count`);
    }
  }
  return out as T;
}

type RatioPair = [num: number, den: number];

/** A RateTally as JSON: each ratio as [numerator, denominator]. */
export interface RateTallyState {
  validated: { all: RatioPair; seen: RatioPair; unseen: RatioPair };
  unvalidated: { all: RatioPair; seen: RatioPair; unseen: RatioPair };
  perService: Record<string, { v: RatioPair; u: RatioPair }>;
  perAct: Record<string, { v: RatioPair; u: RatioPair }>;
}

/**
 * The rates both directions report: with validation and without, overall and seen/unseen, and
 * per-service and per-act tables. Callers decide what a verdict is and which groups it counts in.
 */
export class RateTally {
  private readonly v = { all: new Ratio(), seen: new Ratio(), unseen: new Ratio() };
  private readonly u = { all: new Ratio(), seen: new Ratio(), unseen: new Ratio() };
  private readonly perService = new Map<string, { v: Ratio; u: Ratio }>();
  private readonly perAct = new Map<string, { v: Ratio; u: Ratio }>();

  /** A turn's verdict, overall and in its seen/unseen half; into the validated rates only when `inValidated`. */
  addTurn(ok: boolean, unseen: boolean, inValidated: boolean): void {
    this.u.all.add(ok);
    (unseen ? this.u.unseen : this.u.seen).add(ok);
    if (!inValidated) return;
    this.v.all.add(ok);
    (unseen ? this.v.unseen : this.v.seen).add(ok);
  }

  addService(service: string, ok: boolean, inValidated: boolean): void {
    RateTally.addToGroup(this.perService, service, ok, inValidated);
  }

  addAct(act: string, ok: boolean, inValidated: boolean): void {
    RateTally.addToGroup(this.perAct, act, ok, inValidated);
  }

  summary(validation: boolean): Pick<SgsaccSummary, 'validated' | 'unvalidated' | 'perService' | 'perAct'> {
    const split = (r: typeof this.v): SplitScores => ({ all: r.all.pct(), seen: r.seen.pct(), unseen: r.unseen.pct() });
    return {
      validated: validation ? split(this.v) : null,
      unvalidated: split(this.u),
      perService: groupTable(this.perService),
      perAct: groupTable(this.perAct),
    };
  }

  /** The counts behind every rate, as JSON (what a shard report carries). */
  state(): RateTallyState {
    const split = (r: typeof this.v) => ({ all: r.all.pair(), seen: r.seen.pair(), unseen: r.unseen.pair() });
    const groups = (m: Map<string, { v: Ratio; u: Ratio }>) => Object.fromEntries([...m].map(([k, g]) => [k, { v: g.v.pair(), u: g.u.pair() }]));
    return { validated: split(this.v), unvalidated: split(this.u), perService: groups(this.perService), perAct: groups(this.perAct) };
  }

  /** The tally of all the turns behind `states`: their counts added. */
  static from(states: readonly RateTallyState[]): RateTally {
    const t = new RateTally();
    const addGroups = (m: Map<string, { v: Ratio; u: Ratio }>, g: RateTallyState['perService']) => {
      for (const [k, x] of Object.entries(g)) {
        let r = m.get(k);
        if (!r) m.set(k, (r = { v: new Ratio(), u: new Ratio() }));
        r.v.addPair(x.v);
        r.u.addPair(x.u);
      }
    };
    for (const s of states) {
      for (const k of ['all', 'seen', 'unseen'] as const) {
        t.v[k].addPair(s.validated[k]);
        t.u[k].addPair(s.unvalidated[k]);
      }
      addGroups(t.perService, s.perService);
      addGroups(t.perAct, s.perAct);
    }
    return t;
  }

  private static addToGroup(m: Map<string, { v: Ratio; u: Ratio }>, k: string, ok: boolean, inValidated: boolean): void {
    let g = m.get(k);
    if (!g) m.set(k, (g = { v: new Ratio(), u: new Ratio() }));
    g.u.add(ok);
    if (inValidated) g.v.add(ok);
  }
}

/** Per-group validated/unvalidated percentages, sorted by group name. */
export function groupTable(m: Map<string, { v: Ratio; u: Ratio }>): Record<string, GroupScore> {
  return Object.fromEntries(
    [...m.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, g]) => [k, { validated: g.v.pct(), unvalidated: g.u.pct(), validatedN: g.v.den, unvalidatedN: g.u.den }]),
  );
}
