/**
 * The system and user behaviours that explain a repetition or a constraint outside the goal
 * (MultiWOZ 2.1 act conventions), following the reference's behaviours/multiwoz.py. Each check reads
 * flattened act strings (see acts.ts); system turns spans are ordered most recent first.
 */
import {
  ACT_SLOT_SEP,
  BOOK_ACTS,
  BOOKING_REQUEST_ACTS,
  BOOKING_SERVICES,
  CHOICE_SLOTS,
  ENTITY_SLOTS_BY_SERVICE,
  INFORM_ACTS,
  isRefSlotName,
  NOTIFY_FAILURE_ACTS,
  RECOMMENDATION_ACTS,
  REF_SLOT_PATTERNS,
  REQUEST_ACTS,
  SLOT_VALUE_SEP,
  splitConstraint,
  TRAIN_BOOKING_INTENT_ACTS,
  TRAIN_CONFIRMATION_ACTS,
  TRAIN_CONFIRMATION_NAMES,
  TRANSACTION_FAILURE_ACTS,
  TRANSACTIONAL_DOMAINS,
  turnActionParams,
  turnActions,
} from './acts.js';
import type { Gcdf1Config } from './config.js';
import type { ParamsByService, Turn } from './types.js';

const entitySlots = (domain: string): string[] => ENTITY_SLOTS_BY_SERVICE[domain] ?? [];

const isRefSlot = isRefSlotName;

/** The system NLU recognised a request for `slot` (`domain-slot`); a turn without NLU counts as understood. */
export function hasUnderstoodRequest(nlu: Turn['nlu'] | undefined, slot: string, domain: string): boolean {
  if (!nlu || Object.keys(nlu).length === 0) return true;
  const requested = turnActionParams(nlu, { acts: REQUEST_ACTS, services: [domain], includeValues: false }).of(domain);
  return requested.map((s) => `${domain}-${s}`).includes(slot);
}

/** The system turn gives a booking reference. */
export function confirmsBooking(domain: string, turn: Turn): boolean {
  if (domain === 'train') {
    const slots = turnActionParams(turn, {
      acts: [...TRAIN_CONFIRMATION_ACTS, ...INFORM_ACTS],
      services: [domain],
      includeValues: false,
    }).of(domain);
    return slots.some((s) => REF_SLOT_PATTERNS.includes(s));
  }
  const byService = turnActionParams(turn, {
    acts: [...BOOK_ACTS, ...INFORM_ACTS],
    services: [domain, 'booking'],
    includeValues: false,
  });
  return [...byService.of(domain), ...byService.of('booking')].some((s) => REF_SLOT_PATTERNS.includes(s));
}

/** The system informed `slot` (`domain-slot`) in this turn (for ref slots: or confirmed a booking). */
export function hasGivenAnswer(turn: Turn, slot: string, domain: string): boolean {
  if (isRefSlot(slot) && confirmsBooking(domain, turn)) return true;
  const informed = turnActionParams(turn, { acts: INFORM_ACTS, services: [domain] }).of(domain);
  return informed.some((p) => `${domain}-${p.split(SLOT_VALUE_SEP)[0]}` === slot);
}

/** The turn has a request act in the domain or the booking service. */
export function informationRequested(domain: string, turn: Turn): boolean {
  const req = turnActions(turn, { acts: REQUEST_ACTS, services: [domain, ...BOOKING_SERVICES] });
  return req.of(domain).length > 0 || req.of('booking').length > 0;
}

/**
 * Why the user requested `slot` again: the system NLU missed the first request, the system had
 * asked something back first (user pre-empted), or it had not answered yet (delayed). Answering and
 * being asked again is flagged `repeated_despite_receiving_answer` (a user fault).
 */
export function systemTriggeredRepeatedRequest(
  sysTurns: Turn[],
  slot: string,
  domain: string,
  config: Gcdf1Config['rgcd_f1']['repetitions']['system_behaviour'],
): string[] {
  const behaviours: string[] = [];
  if (!config.validate_nlu && !config.validate_policy) return behaviours;
  if (config.validate_nlu) {
    // the oldest system turn of the span is the one that parsed the first request
    const turn = sysTurns[sysTurns.length - 1];
    if (!hasUnderstoodRequest(turn.nlu, slot, domain)) behaviours.push('system_req_nlu_failure');
  }
  if (config.validate_policy) {
    const oldestFirst = [...sysTurns].reverse();
    const responded = oldestFirst.map((t) => hasGivenAnswer(t, slot, domain));
    const askedMore = oldestFirst.map((t) => informationRequested(domain, t));
    if (responded.some(Boolean)) behaviours.push('repeated_despite_receiving_answer');
    else behaviours.push(askedMore[0] ? 'user_prempted_request' : 'delayed_response');
  }
  return behaviours;
}

export function systemRequestedSlot(domain: string, slot: string, turn: Turn): boolean {
  const byService = turnActionParams(turn, { acts: REQUEST_ACTS, services: [domain, 'booking'], includeValues: false });
  return byService.of(domain).includes(slot) || byService.of('booking').includes(slot);
}

/** Any of the turns informs/recommends/books a parameter whose text contains `slot`. */
export function systemOfferedSlot(domain: string, slot: string, sysTurns: Turn[], onlyEntitySlots = false): boolean {
  slot = slot.toLowerCase();
  if (onlyEntitySlots && !entitySlots(domain).includes(slot)) return false;
  const acts = [...INFORM_ACTS, ...RECOMMENDATION_ACTS, ...BOOK_ACTS];
  for (const turn of sysTurns) {
    const byService = turnActionParams(turn, { acts, services: [domain, ...BOOKING_SERVICES], includeValues: false });
    const params = [...byService.of(domain), ...byService.of('booking')];
    if (params.some((p) => p.includes(slot))) return true;
  }
  return false;
}

/** The system recommended/selected an entity of the domain (only for entity slots by default). */
export function makesRecommendation(domain: string, slot: string, sysTurns: Turn[], onlyEntitySlots = true): boolean {
  slot = slot.toLowerCase();
  if (onlyEntitySlots && !entitySlots(domain).includes(slot)) return false;
  return sysTurns.some((t) => turnActions(t, { acts: RECOMMENDATION_ACTS }).of(domain).length > 0);
}

/** The system offers to book: Booking-Inform (first turn only), or Train-OfferBook in any turn for trains. */
export function offersBookingIntent(domain: string, slot: string, sysTurns: Turn[], onlyEntitySlots = true): boolean {
  if (domain === 'train') {
    if (onlyEntitySlots && !entitySlots(domain).includes(slot)) return false;
    for (const turn of sysTurns) {
      const actions = turnActions(turn, { acts: TRAIN_BOOKING_INTENT_ACTS, services: [domain] }).of(domain);
      for (const a of actions) {
        const act = a.split(ACT_SLOT_SEP)[0];
        if (!TRAIN_CONFIRMATION_NAMES.includes(act)) return true;
      }
    }
    return false;
  }
  slot = slot.toLowerCase();
  if (!TRANSACTIONAL_DOMAINS.includes(domain)) return false;
  if (onlyEntitySlots && !entitySlots(domain).includes(slot)) return false;
  return turnActions(sysTurns[0], { acts: BOOKING_REQUEST_ACTS }).size > 0;
}

/** Any of the turns reports a booking failure (NoBook). */
export function notifiesBookingFailure(domain: string, slot: string, sysTurns: Turn[], onlyEntitySlots = true): boolean {
  if (!TRANSACTIONAL_DOMAINS.includes(domain)) return false;
  if (onlyEntitySlots && !entitySlots(domain).includes(slot)) return false;
  return sysTurns.some((t) => turnActions(t, { acts: TRANSACTION_FAILURE_ACTS }).size > 0);
}

/** The system turn says no entity matches (NoOffer) in the domain. */
export function notifiesVoidResult(domain: string, turn: Turn): boolean {
  return turnActions(turn, { acts: NOTIFY_FAILURE_ACTS }).of(domain).length > 0;
}

/** The system turn informs how many choices there are in the domain. */
export function systemOfferedChoice(domain: string, turn: Turn): boolean {
  const slots = turnActionParams(turn, { includeValues: false }).of(domain);
  return slots.length > 0 && CHOICE_SLOTS.some((c) => slots.includes(c));
}

/** The turn proposes an entity (all entity slots informed or recommended) or a booking. */
export function offersEntityOrBooking(domain: string, sysTurns: Turn[]): boolean {
  if (domain === 'train') {
    const entity = entitySlots(domain).map((s) => s.toLowerCase());
    for (const turn of sysTurns) {
      const slots = turnActionParams(turn, { acts: INFORM_ACTS, services: [domain], includeValues: false }).of(domain);
      if (entity.every((s) => slots.includes(s))) return true;
      if (turnActions(turn, { acts: TRAIN_BOOKING_INTENT_ACTS }).size > 0) return true;
    }
    return false;
  }
  const entity = [...new Set(entitySlots(domain).map((s) => s.toLowerCase()))];
  if (!entity.length) return false;
  for (const turn of sysTurns) {
    const recommended = entity.map((s) => makesRecommendation(domain, s, [turn]));
    const offered = entity.map((s) => systemOfferedSlot(domain, s, [turn]));
    if (recommended.every(Boolean) || offered.every(Boolean)) return true;
    const intent = offersBookingIntent(domain, 'name', [turn], false);
    const failure = notifiesBookingFailure(domain, 'name', [turn], false);
    if (intent && !failure) return true;
  }
  return false;
}

/** Which system behaviours elicited a constraint that is not in the goal. */
export function systemElicitedNewConstraint(
  domain: string,
  constraint: string,
  sysTurns: Turn[],
  config: Gcdf1Config['igcd_f1']['constraints_not_in_goal']['sys_checks'],
): string[] {
  const behaviours: string[] = [];
  const context = sysTurns.slice(0, config.sys_context_size);
  const [slot] = splitConstraint(constraint);
  if (config.requests && systemRequestedSlot(domain, slot, sysTurns[0])) behaviours.push('elicited_by_sys_question');
  if (config.offers && systemOfferedSlot(domain, slot, context)) behaviours.push('elicited_by_sys_offer');
  if (config.booking_failure_response && notifiesBookingFailure(domain, slot, context, true)) {
    behaviours.push('elicited_by_booking_failure');
  }
  if (config.booking_request_response && offersBookingIntent(domain, slot, sysTurns.slice(0, 1))) {
    behaviours.push('elicited_by_booking_acceptance');
  }
  // recommendations look at every earlier system turn: users pick up a recommendation later on
  if (config.recommendations && makesRecommendation(domain, slot, sysTurns)) behaviours.push('elicited_by_recommendation');
  return behaviours;
}

/**
 * Which system behaviours explain a repeated goal constraint: a system question, a booking failure
 * or an empty database result since the last mention, or an NLU that did not pick the constraint up.
 * The `*_validation_failure` entries flag spans where a later success contradicts the failure.
 */
export function systemElicitedRepetition(
  domain: string,
  constraint: string,
  sysTurns: Turn[],
  config: Gcdf1Config['igcd_f1']['repetitions']['sys_behaviours'],
  sysNlu: ParamsByService,
): string[] {
  const behaviours: string[] = [];
  const [slot] = splitConstraint(constraint);
  if (config.requests && systemRequestedSlot(domain, slot, sysTurns[0])) behaviours.push('elicited_by_sys_question');
  const moved = sysTurns.map((t) => confirmsBooking(domain, t) || offersEntityOrBooking(domain, [t]));
  const firstMoved = moved.indexOf(true);
  if (config.booking_failure_response) {
    const failed = sysTurns.findIndex((t) => notifiesBookingFailure(domain, slot, [t], false));
    if (failed >= 0) {
      if (firstMoved < 0 || failed <= firstMoved) behaviours.push('elicited_by_booking_failure');
      else behaviours.push('nobook_validation_failure');
    }
  }
  if (config.no_offers) {
    const noOffer = sysTurns.findIndex((t) => notifiesVoidResult(domain, t));
    if (noOffer >= 0) {
      if (firstMoved < 0 || noOffer <= firstMoved) behaviours.push('elicited_by_no_offers');
      else behaviours.push('nooffer_validation_failure');
    }
  }
  if (config.nlu && !(sysNlu.get(domain)?.has(constraint) ?? false)) behaviours.push('failed_sys_nlu');
  return behaviours;
}

export function taxiActiveIntent(turn: Turn): boolean {
  return (turn.frames ?? []).some((f) => f.service === 'taxi' && (f.actions ?? []).length > 0);
}

/** Other domains (not booking, not taxi) came up in the system turns since the last mention. */
export function detectDomainSwitches(domain: string, usrTurn: Turn, sysTurns: Turn[]): boolean {
  // taxi turns mention places of other domains: likely an annotation artefact, not a switch
  if (turnActions(usrTurn, { services: ['taxi'] }).size > 0 || (usrTurn.utterance ?? '').includes('taxi')) return false;
  const discussed = new Set<string>();
  for (const turn of sysTurns) {
    const byService = turnActions(turn);
    if (byService.has('taxi') || (turn.utterance ?? '').includes('taxi')) return false;
    byService.delete('booking');
    for (const s of byService.keys()) discussed.add(s);
  }
  discussed.delete(domain);
  return discussed.size > 0;
}

/** Which user behaviours explain a repeated goal constraint. */
export function behaviouralRepetition(
  domain: string,
  constraint: string,
  usrTurn: Turn,
  sysTurns: Turn[],
  config: Gcdf1Config['igcd_f1']['repetitions']['user_behaviours'],
): string[] {
  const behaviours: string[] = [];
  const [slot] = splitConstraint(constraint);
  if (config.offer_checks && systemOfferedChoice(domain, sysTurns[0])) behaviours.push('confirmed_choice_params');
  if (config.repeats_while_requesting_info && informationRequested(domain, usrTurn)) {
    behaviours.push('repeated_while_requesting_info');
  }
  if (config.repeats_while_booking && offersEntityOrBooking(domain, [sysTurns[0]])) {
    // the reference compares the slot with act patterns here, which never holds; kept for parity
    if (['OfferBook$', 'offerbook$'].includes(slot) && taxiActiveIntent(usrTurn)) return ['wrong_taxi_annotations'];
    behaviours.push('repeated_while_booking');
  }
  if (config.repeats_when_answering_request && informationRequested(domain, sysTurns[0])) {
    behaviours.push('repeated_when_answering_request');
  }
  if (config.proposes_multiple_domains && detectDomainSwitches(domain, usrTurn, sysTurns)) {
    behaviours.push('switched_between_domains');
  }
  return behaviours;
}
