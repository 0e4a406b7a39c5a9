/**
 * I-GCDF1: F1 of the constraints the user informs against the constraints of its goal, where
 * repetitions and constraints outside the goal count as false positives unless the context explains
 * them (a system question, offer, recommendation, booking failure, empty result, NLU failure, ...),
 * and constraints the system pre-empted or that a failed search made moot are not held against the user.
 */
import { ENTITY_SLOTS_BY_SERVICE, INFORM_ACTS, SLOT_VALUE_ACTS, splitConstraint } from './acts.js';
import {
  behaviouralRepetition,
  notifiesVoidResult,
  systemElicitedNewConstraint,
  systemElicitedRepetition,
  systemOfferedChoice,
  taxiActiveIntent,
} from './behaviours.js';
import type { Gcdf1Config } from './config.js';
import { countOdd, pairwise, previousSystemTurns, SPECIAL_BEHAVIOURS } from './context.js';
import { goalConstraints } from './goal.js';
import { parametersByService, systemNluParams, type MatchContext } from './normalization.js';
import { computeF1, type DialogueRecord } from './record.js';
import type { Dialogue, Goal, ParamsByService } from './types.js';

type IgcdConfig = Gcdf1Config['igcd_f1'];
type AutoMatching = IgcdConfig['constraints_not_in_goal']['auto_matching'];

const M = 'igcd_f1';

/** Constraints outside the goal accepted without looking at the context (dontcare; taxi places). */
export function autoMatched(domain: string, constraint: string, config: AutoMatching): string[] {
  const [slot, value] = splitConstraint(constraint);
  if (config.vals.includes(value)) return ['auto_matched_value'];
  // only the taxi domain accepts whole slots: its goals never name departure and destination
  if (domain === 'taxi' && (config.slots[domain] ?? []).includes(slot)) return ['auto_matched_slot'];
  if ((config.slot_value_pairs[domain]?.[slot] ?? []).includes(value)) return ['auto_matched_slot_value_pair'];
  return [];
}

type Status = [string, unknown];

/**
 * Why goal constraints are missing: informed with another value, simply missed, or moot because the
 * system found nothing after the user's last constraint of the domain (`failed_dialogue`).
 */
function emptyDbResponse(
  domain: string,
  hyp: ParamsByService,
  domainTruePos: string[],
  missing: Set<string>,
  dialogue: Dialogue,
): Status[] {
  let behaviours: Status[] = [];
  if (!missing.size) return behaviours;
  const provided = hyp.get(domain) ?? new Map<string, number[]>();
  for (const constraint of missing) {
    const [missingSlot] = splitConstraint(constraint);
    let found = false;
    for (const prov of provided.keys()) {
      // substring test, as in the reference (a day can hide in leaveat===thursday)
      if (!prov.includes(missingSlot)) continue;
      if (domainTruePos.includes(prov)) continue;
      behaviours.push(['informed_wrong_value', { provided: prov, expected: constraint }]);
      found = true;
      break;
    }
    if (!found) behaviours.push(['missed_constraints', constraint]);
  }
  if (!provided.size) return behaviours;
  const last = Math.max(...[...provided.values()].flat());
  const sysTurn = dialogue.turns[last + 1];
  if (sysTurn && notifiesVoidResult(domain, sysTurn) && !systemOfferedChoice(domain, sysTurn)) {
    behaviours = [...missing].map((c) => ['failed_dialogue', c] as Status);
  }
  return behaviours;
}

function repeat<T>(x: T, n: number): T[] {
  return new Array<T>(n).fill(x);
}

/** What scoring one dialogue reads throughout: the dialogue, the caller's goal, the config and the record. */
interface Scoring {
  dialogue: Dialogue;
  goal: Goal;
  config: IgcdConfig;
  ctx: MatchContext;
  record: DialogueRecord;
}

/** One goal domain's tally: the constraints the user should have informed (truePos) and those it did (pos). */
interface DomainTally {
  domain: string;
  truePos: string[];
  pos: string[];
}

/**
 * Score one dialogue. `goal` is the caller's copy: when a domain failed for lack of database results
 * its requests are dropped from it (compensate_request), which R-GCDF1 computed afterwards relies on.
 */
export function computeIgcdf1(
  dialogue: Dialogue,
  goal: Goal,
  config: IgcdConfig,
  match: Omit<MatchContext, 'field' | 'config'>,
  record: DialogueRecord,
): void {
  const ctx: MatchContext = { ...match, config, record, field: 'preprocessed_user_constraints' };
  const s: Scoring = { dialogue, goal, config, ctx, record };
  const hyp = parametersByService(dialogue, goal, ctx, { user: true, system: false, acts: INFORM_ACTS });
  const goalConstr = goalConstraints(goal);
  // the system's constraints matter only once a goal constraint is missing: read them then, and once
  let sysPairs: ParamsByService | undefined;
  const systemConstraints = (): ParamsByService =>
    (sysPairs ??= parametersByService(
      dialogue,
      goal,
      { ...ctx, field: 'preprocessed_sys_constraints' },
      { user: false, system: true, acts: SLOT_VALUE_ACTS },
    ));

  const truePos: string[] = [];
  const pos: string[] = [];
  for (const domain of Object.keys(goal)) {
    const tally = tallyInformedConstraints(s, domain, goalConstr.get(domain) ?? [], hyp.get(domain));
    settleMissingConstraints(s, tally, hyp, systemConstraints);
    truePos.push(...tally.truePos);
    pos.push(...tally.pos);
    if (!tally.pos.length && !tally.truePos.length) continue; // e.g. police, hospital goals
    record.score(M, domain, computeF1(tally.truePos, tally.pos));
  }
  pos.push(...scoreDomainsOutsideGoal(s, hyp));
  if (truePos.length || pos.length) record.score(M, 'combined', computeF1(truePos, pos));
}

/** What the user informed in one goal domain, each constraint judged against the goal and the context. */
function tallyInformedConstraints(
  s: Scoring,
  domain: string,
  goalList: string[],
  informed: Map<string, number[]> | undefined,
): DomainTally {
  const goalSlots = new Set(goalList.map((c) => splitConstraint(c)[0]));
  // fail_info repeats info: duplicates removed, repetitions explained by failures are added below
  const tally: DomainTally = { domain, truePos: [...new Set(goalList)], pos: [] };
  if (informed) {
    for (const [constraint, turns] of informed) judgeInformedConstraint(s, tally, goalSlots, constraint, turns);
  }
  return tally;
}

/**
 * One constraint the user informed in `turns`: each inform counts as a positive (once unless
 * count_fp); it is a true positive when the goal has it, or when the context explains a constraint
 * outside the goal or a repetition.
 */
function judgeInformedConstraint(
  s: Scoring,
  tally: DomainTally,
  goalSlots: Set<string>,
  constraint: string,
  turns: number[],
): void {
  const { config, record } = s;
  const { domain } = tally;
  const countFp = config.repetitions.count_fp;
  let n = turns.length;
  if (n > 1) record.note(M, 'repeated_inform', domain, { [constraint]: n });
  if (n > config.repetitions_warning) record.note(M, 'repetitions_warning', domain, constraint);
  if (!countFp) n = 1;
  tally.pos.push(...repeat(constraint, n));
  const [slot] = splitConstraint(constraint);
  if (!goalSlots.has(slot)) {
    judgeConstraintOutsideGoal(s, tally, constraint, turns, n);
  } else if (countFp && n > 1) {
    judgeRepeatedInforms(s, tally, constraint, turns);
  } else if (n === 1 && !tally.truePos.includes(constraint)) {
    // a goal slot informed once with another value: usually a noisy conversation
    record.note(M, 'single_repetitions_nog', domain, { [constraint]: turns[0] });
  }
}

/** A constraint on a slot the goal does not name: auto-matched, or explained turn by turn by the system. */
function judgeConstraintOutsideGoal(
  s: Scoring,
  tally: DomainTally,
  constraint: string,
  turns: number[],
  n: number,
): void {
  const { config, record } = s;
  const { domain } = tally;
  const outside = config.constraints_not_in_goal;
  const auto = autoMatched(domain, constraint, outside.auto_matching);
  if (auto.length) {
    tally.truePos.push(...repeat(constraint, Math.min(n, outside.auto_matching.max_repetions_matched)));
    record.note(M, `constraints_not_in_goal.${auto[0]}`, domain, { [constraint]: n });
    return;
  }
  let repetition = 0;
  for (const turnIdx of turns) {
    repetition++;
    const elicited = systemElicitation(s, domain, constraint, turnIdx);
    if (!elicited) continue;
    if (repetition <= outside.max_repetitions) tally.truePos.push(constraint);
    const info = { [constraint]: turnIdx };
    for (const b of elicited) record.note(M, `constraints_not_in_goal.${b}`, domain, info);
    if (!config.repetitions.count_fp) break;
  }
}

/**
 * The system behaviours that made the user inform a constraint outside the goal at `turnIdx`, or
 * undefined (with the reason noted) when none did or the inform does not count for this domain.
 */
function systemElicitation(s: Scoring, domain: string, constraint: string, turnIdx: number): string[] | undefined {
  const { dialogue, record } = s;
  const info = { [constraint]: turnIdx };
  if (turnIdx === 0) {
    record.note(M, 'constraints_not_in_goal.first_turn', domain, info);
    return undefined;
  }
  const sysTurns = previousSystemTurns(dialogue, turnIdx);
  const elicited = systemElicitedNewConstraint(domain, constraint, sysTurns, s.config.constraints_not_in_goal.sys_checks);
  if (!elicited.length) {
    record.note(M, 'constraints_not_in_goal.unmatched', domain, info);
    return undefined;
  }
  const [slot] = splitConstraint(constraint);
  if ((ENTITY_SLOTS_BY_SERVICE[domain] ?? []).includes(slot)) {
    const turn = dialogue.turns[turnIdx];
    // a name informed while a taxi is being arranged belongs to the taxi, not this domain
    if (taxiActiveIntent(turn) || (turn.utterance ?? '').includes('taxi')) {
      record.note(M, 'wrong_taxi_annotations', '*', info);
      return undefined;
    }
  }
  return elicited;
}

/** A goal constraint informed more than once (count_fp): each repetition is explained or a false positive. */
function judgeRepeatedInforms(s: Scoring, tally: DomainTally, constraint: string, turns: number[]): void {
  const { record } = s;
  const { domain } = tally;
  let repetition = 0;
  for (const [turnIdx, repTurnIdx] of pairwise(turns)) {
    repetition++;
    const info = { [constraint]: [turnIdx, repTurnIdx] };
    const explained = repetitionExplanation(s, domain, constraint, turnIdx, repTurnIdx, info);
    if (!explained) continue;
    if (repetition <= s.config.repetitions.max_repetitions) tally.truePos.push(constraint);
    for (const b of explained) record.note(M, `multiple_constraint_informs.${b}`, domain, info);
  }
}

/**
 * What explains the user repeating `constraint` at `repTurnIdx`: the system's turns since `turnIdx`
 * first, else the user's own behaviour; undefined (with the reason noted) when nothing does. The
 * special system behaviours are noted but explain nothing by themselves.
 */
function repetitionExplanation(
  s: Scoring,
  domain: string,
  constraint: string,
  turnIdx: number,
  repTurnIdx: number,
  info: Record<string, number[]>,
): string[] | undefined {
  const { dialogue, goal, ctx, record } = s;
  const reps = s.config.repetitions;
  const sysTurns = previousSystemTurns(dialogue, repTurnIdx, countOdd(turnIdx, repTurnIdx));
  const sysNlu: ParamsByService = reps.sys_behaviours.nlu ? systemNluParams(sysTurns, goal, ctx) : new Map();
  const sysBehaviours = systemElicitedRepetition(domain, constraint, sysTurns, reps.sys_behaviours, sysNlu);
  const explained = sysBehaviours.filter((b) => !SPECIAL_BEHAVIOURS.has(b));
  for (const b of sysBehaviours) {
    if (SPECIAL_BEHAVIOURS.has(b)) record.note(M, `multiple_constraint_informs.${b}`, domain, info);
  }
  if (explained.length) return explained;
  const usrTurn = dialogue.turns[repTurnIdx];
  const userBehaviours = behaviouralRepetition(domain, constraint, usrTurn, sysTurns, reps.user_behaviours);
  if (userBehaviours.includes('wrong_taxi_annotations')) {
    record.note(M, 'multiple_constraint_informs.wrong_taxi_annotations', domain, info);
    return undefined;
  }
  if (userBehaviours.length) return userBehaviours;
  record.note(M, 'multiple_constraint_informs.unmatched', domain, info);
  return undefined;
}

/**
 * Goal constraints the user never informed: those the system stated itself are not held against the
 * user, and those a failed search made moot are dropped (with the domain's requests) where configured.
 */
function settleMissingConstraints(
  s: Scoring,
  tally: DomainTally,
  hyp: ParamsByService,
  systemConstraints: () => ParamsByService,
): void {
  const { config, record } = s;
  const { domain } = tally;
  if (!tally.pos.length && tally.truePos.length) record.note(M, 'missed_domain', '*', domain);
  const missing = new Set(tally.truePos.filter((c) => !tally.pos.includes(c)));
  if (missing.size) {
    const sysPairs = systemConstraints();
    for (const constraint of [...missing]) {
      const turns = sysPairs.get(domain)?.get(constraint) ?? sysPairs.get('booking')?.get(constraint);
      if (!turns) continue;
      missing.delete(constraint);
      record.note(M, 'sys_preempted_constraint', domain, { [constraint]: turns });
      if (config.compensate_preemption) tally.pos.push(constraint);
    }
  }
  for (const [key, constraint] of emptyDbResponse(domain, hyp, tally.truePos, missing, s.dialogue)) {
    record.note(M, key, domain, constraint);
    if (!SPECIAL_BEHAVIOURS.has(key)) continue;
    if (config.empty_db_result.compensate_request) delete s.goal[domain].reqt;
    if (config.empty_db_result.compensate_missed_constraints) {
      const i = tally.truePos.indexOf(constraint as string);
      if (i >= 0) tally.truePos.splice(i, 1);
    }
  }
}

/** Constraints of domains the goal does not have: all false positives, scored per domain; returns them. */
function scoreDomainsOutsideGoal(s: Scoring, hyp: ParamsByService): string[] {
  const { goal, record } = s;
  const countFp = s.config.repetitions.count_fp;
  const pos: string[] = [];
  for (const [domain, params] of hyp) {
    if (Object.prototype.hasOwnProperty.call(goal, domain)) continue;
    const userOnly: string[] = [];
    for (const [constraint, turns] of params) userOnly.push(...repeat(constraint, countFp ? turns.length : 1));
    record.note(M, 'informed_domains_outside_goals', domain, userOnly);
    record.score(M, domain, computeF1([], userOnly));
    pos.push(...userOnly);
  }
  return pos;
}
