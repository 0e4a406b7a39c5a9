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
  const outside = config.constraints_not_in_goal;
  const reps = config.repetitions;
  const countFp = reps.count_fp;
  const hyp = parametersByService(dialogue, goal, ctx, { user: true, system: false, acts: INFORM_ACTS });
  const goalConstr = goalConstraints(goal);
  let sysPairs: ParamsByService | undefined;

  const truePos: string[] = [];
  const pos: string[] = [];
  for (const domain of Object.keys(goal)) {
    const goalList = goalConstr.get(domain) ?? [];
    const goalSlots = new Set(goalList.map((c) => splitConstraint(c)[0]));
    // fail_info repeats info: duplicates removed, repetitions explained by failures are added below
    const domainTruePos = [...new Set(goalList)];
    const domainPos: string[] = [];
    const informed = hyp.get(domain);
    if (informed) {
      for (const [constraint, turns] of informed) {
        let n = turns.length;
        if (n > 1) record.note(M, 'repeated_inform', domain, { [constraint]: n });
        if (n > config.repetitions_warning) record.note(M, 'repetitions_warning', domain, constraint);
        if (!countFp) n = 1;
        domainPos.push(...repeat(constraint, n));
        const [slot] = splitConstraint(constraint);
        if (!goalSlots.has(slot)) {
          const auto = autoMatched(domain, constraint, outside.auto_matching);
          if (auto.length) {
            domainTruePos.push(...repeat(constraint, Math.min(n, outside.auto_matching.max_repetions_matched)));
            record.note(M, `constraints_not_in_goal.${auto[0]}`, domain, { [constraint]: n });
            continue;
          }
          let repetition = 0;
          for (const turnIdx of turns) {
            repetition++;
            const info = { [constraint]: turnIdx };
            if (turnIdx === 0) {
              record.note(M, 'constraints_not_in_goal.first_turn', domain, info);
              continue;
            }
            const sysTurns = previousSystemTurns(dialogue, turnIdx);
            const elicited = systemElicitedNewConstraint(domain, constraint, sysTurns, outside.sys_checks);
            if (!elicited.length) {
              record.note(M, 'constraints_not_in_goal.unmatched', domain, info);
              continue;
            }
            if ((ENTITY_SLOTS_BY_SERVICE[domain] ?? []).includes(slot)) {
              const turn = dialogue.turns[turnIdx];
              // a name informed while a taxi is being arranged belongs to the taxi, not this domain
              if (taxiActiveIntent(turn) || (turn.utterance ?? '').includes('taxi')) {
                record.note(M, 'wrong_taxi_annotations', '*', info);
                continue;
              }
            }
            if (repetition <= outside.max_repetitions) domainTruePos.push(constraint);
            for (const b of elicited) record.note(M, `constraints_not_in_goal.${b}`, domain, info);
            if (!countFp) break;
          }
          continue;
        }
        if (countFp && n > 1) {
          let repetition = 0;
          for (const [turnIdx, repTurnIdx] of pairwise(turns)) {
            repetition++;
            const sysTurns = previousSystemTurns(dialogue, repTurnIdx, countOdd(turnIdx, repTurnIdx));
            const sysNlu: ParamsByService = reps.sys_behaviours.nlu
              ? systemNluParams(sysTurns, goal, ctx)
              : new Map();
            const sysBehaviours = systemElicitedRepetition(domain, constraint, sysTurns, reps.sys_behaviours, sysNlu);
            const info = { [constraint]: [turnIdx, repTurnIdx] };
            const explained = sysBehaviours.filter((b) => !SPECIAL_BEHAVIOURS.has(b));
            for (const b of sysBehaviours) {
              if (SPECIAL_BEHAVIOURS.has(b)) record.note(M, `multiple_constraint_informs.${b}`, domain, info);
            }
            if (explained.length) {
              if (repetition <= reps.max_repetitions) domainTruePos.push(constraint);
              for (const b of explained) record.note(M, `multiple_constraint_informs.${b}`, domain, info);
              continue;
            }
            const usrTurn = dialogue.turns[repTurnIdx];
            const userBehaviours = behaviouralRepetition(domain, constraint, usrTurn, sysTurns, reps.user_behaviours);
            if (userBehaviours.includes('wrong_taxi_annotations')) {
              record.note(M, 'multiple_constraint_informs.wrong_taxi_annotations', domain, info);
              continue;
            }
            if (userBehaviours.length) {
              if (repetition <= reps.max_repetitions) domainTruePos.push(constraint);
              for (const b of userBehaviours) record.note(M, `multiple_constraint_informs.${b}`, domain, info);
            } else {
              record.note(M, 'multiple_constraint_informs.unmatched', domain, info);
            }
          }
        } else if (n === 1 && !domainTruePos.includes(constraint)) {
          // a goal slot informed once with another value: usually a noisy conversation
          record.note(M, 'single_repetitions_nog', domain, { [constraint]: turns[0] });
        }
      }
    }

    if (!domainPos.length && domainTruePos.length) record.note(M, 'missed_domain', '*', domain);
    const missing = new Set(domainTruePos.filter((c) => !domainPos.includes(c)));
    if (missing.size) {
      sysPairs ??= parametersByService(
        dialogue,
        goal,
        { ...ctx, field: 'preprocessed_sys_constraints' },
        { user: false, system: true, acts: SLOT_VALUE_ACTS },
      );
      for (const constraint of [...missing]) {
        const turns = sysPairs.get(domain)?.get(constraint) ?? sysPairs.get('booking')?.get(constraint);
        if (!turns) continue;
        missing.delete(constraint);
        record.note(M, 'sys_preempted_constraint', domain, { [constraint]: turns });
        if (config.compensate_preemption) domainPos.push(constraint);
      }
    }
    for (const [key, constraint] of emptyDbResponse(domain, hyp, domainTruePos, missing, dialogue)) {
      record.note(M, key, domain, constraint);
      if (!SPECIAL_BEHAVIOURS.has(key)) continue;
      if (config.empty_db_result.compensate_request) delete goal[domain].reqt;
      if (config.empty_db_result.compensate_missed_constraints) {
        const i = domainTruePos.indexOf(constraint as string);
        if (i >= 0) domainTruePos.splice(i, 1);
      }
    }
    truePos.push(...domainTruePos);
    pos.push(...domainPos);
    if (!domainPos.length && !domainTruePos.length) continue; // e.g. police, hospital goals
    record.score(M, domain, computeF1(domainTruePos, domainPos));
  }

  // constraints of domains the goal does not have are all false positives
  for (const [domain, params] of hyp) {
    if (Object.prototype.hasOwnProperty.call(goal, domain)) continue;
    const userOnly: string[] = [];
    for (const [constraint, turns] of params) userOnly.push(...repeat(constraint, countFp ? turns.length : 1));
    record.note(M, 'informed_domains_outside_goals', domain, userOnly);
    record.score(M, domain, computeF1([], userOnly));
    pos.push(...userOnly);
  }
  if (truePos.length || pos.length) record.score(M, 'combined', computeF1(truePos, pos));
}
