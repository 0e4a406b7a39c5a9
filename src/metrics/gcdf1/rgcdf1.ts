/**
 * R-GCDF1: F1 of the slots the user requests against the requests of its goal. Repeated requests
 * are false positives unless the system missed the request (NLU), had not answered yet, or asked
 * something back first; requested information the system volunteered before the user asked counts
 * as requested; `ref` requests of booking domains are accepted though goals never list them.
 */
import { appendParams, isRefSlotName, SLOT_VALUE_ACTS, slotsByService, turnActions, userRequestsByService } from './acts.js';
import { systemTriggeredRepeatedRequest } from './behaviours.js';
import type { Gcdf1Config } from './config.js';
import { countOdd, pairwise, previousSystemTurns, SPECIAL_BEHAVIOURS } from './context.js';
import { goalRequests, isTransactionalGoal } from './goal.js';
import { computeF1, type DialogueRecord } from './record.js';
import type { Dialogue, Goal, ParamsByService, Turn } from './types.js';

type RgcdConfig = Gcdf1Config['rgcd_f1'];
const M = 'rgcd_f1';

function domainsOf(turns: Turn[]): Set<string> {
  const out = new Set<string>();
  for (const t of turns) for (const s of turnActions(t).keys()) out.add(s);
  return out;
}

/**
 * Heuristics for request annotations that do not belong to the domain: the system talked about
 * other domains only, or the user juggled several domains over a long span.
 */
export function spuriousRequestAnnotation(request: string, sysTurns: Turn[], usrTurns: Turn[], domain: string): boolean {
  if (isRefSlotName(request)) return false;
  if (domain === 'taxi' && request.includes(domain)) return false;
  const span = domainsOf(sysTurns);
  span.delete('booking');
  span.delete('general');
  if (!span.size) return false;
  if (!span.has(domain) && sysTurns.length > 1) return true;
  const multipleDomains = usrTurns.some((t) => {
    const byService = turnActions(t);
    byService.delete('general');
    return byService.size > 1;
  });
  const onlyThisDomain = span.size === 1 && span.has(domain);
  return multipleDomains && sysTurns.length > 3 && !onlyThisDomain;
}

/** Add goal requests the system informed before the user asked, as if the user had requested them. */
function addSystemProvisions(dialogue: Dialogue, goal: Goal, hyp: ParamsByService, config: RgcdConfig, record: DialogueRecord): void {
  for (const domain of config.missing_requests.provision_domains) {
    const goalReqs = goalRequests(goal, domain);
    if (!goalReqs.length) continue;
    const provided = slotsByService(dialogue, 'SYSTEM', { acts: SLOT_VALUE_ACTS, services: [domain, 'booking'] });
    const provisioned = new Map<string, number[]>();
    for (const slots of provided.values()) {
      for (const [slot, turns] of slots) {
        if (goalReqs.includes(slot)) provisioned.set(`${domain}-${slot}`, [turns[0]]);
      }
    }
    if (!provisioned.size) continue;
    const requested = hyp.get(domain);
    if (!requested) {
      record.note(M, 'provision_entire_domain', domain, [...provisioned.keys()]);
      appendParams(hyp, new Map([[domain, provisioned]]));
      continue;
    }
    const outstanding = new Map([...provisioned].filter(([r]) => !requested.has(r)));
    if (outstanding.size) {
      record.note(M, 'provision_slots', domain, [...outstanding.keys()]);
      appendParams(hyp, new Map([[domain, outstanding]]));
    }
  }
}

/** Score one dialogue (after I-GCDF1, whose goal edits for failed searches apply here). */
export function computeRgcdf1(dialogue: Dialogue, goal: Goal, config: RgcdConfig, record: DialogueRecord): void {
  const countFp = config.repetitions.count_fp;
  const hyp = userRequestsByService(dialogue);
  if (config.missing_requests.system_provision) addSystemProvisions(dialogue, goal, hyp, config, record);

  const truePos: string[] = [];
  const pos: string[] = [];
  for (const domain of Object.keys(goal)) {
    const domainTruePos = goalRequests(goal, domain).map((s) => `${domain}-${s}`);
    const domainPos: string[] = [];
    for (const [request, turns] of hyp.get(domain) ?? []) {
      let n = turns.length;
      if (n > 1) record.note(M, 'multiple_req', domain, { [request]: n });
      if (n > config.repetitions_warning) record.note(M, 'repetitions_warning', domain, request);
      if (!countFp) n = 1;
      for (let i = 0; i < n; i++) domainPos.push(request);
      if (!domainTruePos.includes(request) && config.auto_add_to_ref.includes(request) && isTransactionalGoal(goal[domain])) {
        // booking references are requested by instruction but never annotated in goals
        domainTruePos.push(request);
        record.note(M, 'auto_ref', domain, dialogue.dialogue_id);
      }
      if (!(countFp && n > 1)) continue;
      let repetition = 0;
      for (const [turnIdx, repTurnIdx] of pairwise(turns)) {
        repetition++;
        const usrTurns = [dialogue.turns[turnIdx], dialogue.turns[repTurnIdx]];
        const sysTurns = previousSystemTurns(dialogue, repTurnIdx, countOdd(turnIdx, repTurnIdx));
        const info = { [request]: [turnIdx, repTurnIdx] };
        if (spuriousRequestAnnotation(request, sysTurns, usrTurns, domain)) {
          record.note(M, 'multiple_slot_requests.spurious_annotation', domain, info);
          continue;
        }
        const behaviours = systemTriggeredRepeatedRequest(sysTurns, request, domain, config.repetitions.system_behaviour);
        const blamesUser = behaviours.some((b) => SPECIAL_BEHAVIOURS.has(b));
        if (!blamesUser && behaviours.length && repetition <= config.repetitions.repeats_to_penalty) {
          domainTruePos.push(request);
        }
        for (const b of behaviours) record.note(M, `multiple_slot_requests.${b}`, domain, { [request]: n });
      }
    }
    pos.push(...domainPos);
    truePos.push(...domainTruePos);
    if (!domainTruePos.length && domainPos.length) record.note(M, 'requests_not_in_goal', domain, domainPos);
    if (!domainPos.length && !domainTruePos.length) continue;
    record.score(M, domain, computeF1(domainTruePos, domainPos));
  }

  for (const [domain, requests] of hyp) {
    if (Object.prototype.hasOwnProperty.call(goal, domain)) continue;
    const userOnly: string[] = [];
    for (const [request, turns] of requests) for (let i = 0; i < (countFp ? turns.length : 1); i++) userOnly.push(request);
    record.score(M, domain, computeF1([], userOnly));
    pos.push(...userOnly);
    record.note(M, 'requested_domains_outside_goals', domain, userOnly);
  }
  if (truePos.length || pos.length) record.score(M, 'combined', computeF1(truePos, pos));
}
