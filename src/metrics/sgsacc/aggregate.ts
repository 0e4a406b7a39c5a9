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
  /** Actions of this system entailed only with the context-augmented premise. */
  contextRescued: number;
  /** Actions whose entailment reference was only entailed by the gold utterance with context. */
  referenceContextRescued: number;
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
}

export interface SgsaccSummary {
  validated: SplitScores | null;
  unvalidated: SplitScores;
  perService: Record<string, GroupScore>;
  perAct: Record<string, GroupScore>;
  counts: SgsaccCounts;
}

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
}

/**
 * SGSAcc = faithful / evaluated turns, with validation (only turns whose every action passed) and
 * without (every scorable turn). Seen/unseen and per-service are turn-level (a turn is unseen when
 * any of its services is); per-act is action-level, since a turn's verdict does not split by act.
 */
export function aggregateSgsacc(
  scores: TurnScore[],
  opts: { validation: boolean; isUnseen: (service: string) => boolean },
): SgsaccSummary {
  const rates = new RateTally();
  const counts: SgsaccCounts = {
    turns: scores.length,
    evaluated: 0,
    excluded: 0,
    contextRescued: 0,
    referenceContextRescued: 0,
    unscorable: 0,
    evaluatedUnvalidated: 0,
    actions: 0,
    actionsValidated: 0,
    actionsExcluded: 0,
    excludedByReason: {},
  };

  for (const s of scores) {
    counts.actions += s.actions.length;
    for (const a of s.actions) {
      if (a.contextUsed) counts.contextRescued++;
      if (a.referenceViaContext) counts.referenceContextRescued++;
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
  return { ...rates.summary(opts.validation), counts };
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
