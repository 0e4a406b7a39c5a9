/**
 * Reading dialogue acts the way the reference evaluator does: acts are flattened to lowercase strings
 * `act<<<slot===value` (several values joined by `###`), grouped by service. Pattern lists are searched
 * (not anchored) in the raw act name, and an act matched by two patterns of a list is yielded twice,
 * exactly as the reference's iterator does.
 */
import type { Dialogue, Frame, ParamsByService, Turn } from './types.js';

export const SLOT_VALUE_SEP = '===';
export const ACT_SLOT_SEP = '<<<';
export const MULTIPLE_VALUE_SEP = '###';

const re = (...patterns: string[]): RegExp[] => patterns.map((p) => new RegExp(p));

export const INFORM_ACTS = re('inform', 'Inform', 'INFORM');
export const REQUEST_ACTS = re('request', 'Request', 'REQUEST');
export const TRANSACTION_FAILURE_ACTS = re('NoBook', 'nobook');
export const BOOKING_REQUEST_ACTS = re('booking-inform', 'Booking-Inform');
export const RECOMMENDATION_ACTS = re('Select', 'select', 'recommend', 'Recommend');
export const TRAIN_CONFIRMATION_ACTS = re('OfferBooked', 'offerbooked');
export const TRAIN_CONFIRMATION_NAMES = ['OfferBooked', 'offerbooked'];
export const TRAIN_BOOKING_INTENT_ACTS = re('OfferBook$', 'offerbook$');
export const BOOK_ACTS = re('\\bbook$|\\bBook$');
export const NOTIFY_FAILURE_ACTS = re('noofer', 'NoOffer');
/** Acts whose parameters carry a slot value the system can pre-empt the user with. */
export const SLOT_VALUE_ACTS = [
  ...INFORM_ACTS,
  ...RECOMMENDATION_ACTS,
  ...TRAIN_CONFIRMATION_ACTS,
  ...BOOK_ACTS,
  ...NOTIFY_FAILURE_ACTS,
];

export const REF_SLOT_PATTERNS = ['ref', 'Ref', 'reference'];
/** A booking reference slot (substring test: `restaurant-ref`, `train-Ref`). */
export function isRefSlotName(slot: string): boolean {
  return REF_SLOT_PATTERNS.some((p) => slot.includes(p));
}
export const TRANSACTIONAL_DOMAINS = ['hotel', 'Hotel', 'restaurant', 'Restaurant', 'Train', 'train'];
export const ENTITY_SLOTS_BY_SERVICE: Record<string, string[]> = {
  attraction: ['name', 'Name'],
  restaurant: ['name', 'Name'],
  hotel: ['name', 'Name'],
  train: ['trainID', 'trainid'],
  taxi: [],
  police: [],
  hospital: [],
};
/** Domains a goal may name (those with entity-slot knowledge in the reference). */
export const GOAL_DOMAINS = Object.keys(ENTITY_SLOTS_BY_SERVICE);
export const BOOKING_SERVICES = ['Booking', 'booking'];
export const CHOICE_SLOTS = ['choice', 'Choice'];
export const COREFERENCE_VALUES: Record<string, string[]> = { restaurant: ['the restaurant'] };
export const DOMAIN_CONSTRAINT_GOAL_KEYS = ['book', 'fail_book', 'info', 'fail_info'] as const;
export const DOMAIN_REQUEST_GOAL_KEY = 'reqt';

const serviceRegexCache = new Map<string, RegExp>();
function serviceMatches(service: string, patterns: string[]): boolean {
  return patterns.some((p) => {
    let rx = serviceRegexCache.get(p);
    if (!rx) serviceRegexCache.set(p, (rx = new RegExp(p)));
    return rx.test(service);
  });
}

/** Grouped result with the reference's defaultdict reads: a missing service reads as empty. */
export class ByService<T> extends Map<string, T[]> {
  of(service: string): T[] {
    return this.get(service) ?? [];
  }
  push(service: string, item: T): void {
    const list = this.get(service);
    if (list) list.push(item);
    else this.set(service, [item]);
  }
}

export interface ActQuery {
  acts?: RegExp[];
  services?: string[];
  lowercase?: boolean;
}

/** Formatted actions of a turn (or of an NLU output, which has the same `frames` shape), by service. */
export function turnActions(turn: { frames?: Frame[] }, q: ActQuery = {}): ByService<string> {
  const out = new ByService<string>();
  const lowercase = q.lowercase ?? true;
  for (const frame of turn.frames ?? []) {
    const service = frame.service ?? '';
    if (q.services && q.services.length && !serviceMatches(service, q.services)) continue;
    for (const action of frame.actions ?? []) {
      // an act matched by two patterns of the list is taken twice, as the reference's iterator does
      let times = 1;
      if (q.acts && q.acts.length) {
        times = 0;
        for (const p of q.acts) if (p.test(action.act)) times++;
        if (!times) continue;
      }
      const slot = action.slot ? action.slot : '';
      const value = slot && action.values && action.values.length ? action.values.join(MULTIPLE_VALUE_SEP) : '';
      let formatted: string;
      if (slot && value) formatted = `${action.act}${ACT_SLOT_SEP}${slot}${SLOT_VALUE_SEP}${value}`;
      else if (slot) formatted = `${action.act}${ACT_SLOT_SEP}${slot}`;
      else formatted = action.act;
      for (let k = 0; k < times; k++) out.push(service, lowercase ? formatted.toLowerCase() : formatted);
    }
  }
  return out;
}

/** Parameters (`slot===value`, or just the slot) of formatted actions; actions without any are dropped. */
export function actionParams(actions: string[], includeValues = true): string[] {
  const params: string[] = [];
  for (const action of actions) {
    const parts = action.split(ACT_SLOT_SEP);
    const param = parts.slice(1).join('').toLowerCase();
    if (param) params.push(param);
  }
  return includeValues ? params : params.map((p) => p.split(SLOT_VALUE_SEP)[0]);
}

export function turnActionParams(
  turn: { frames?: Frame[] },
  q: ActQuery & { includeValues?: boolean } = {},
): ByService<string> {
  const out = new ByService<string>();
  for (const [service, actions] of turnActions(turn, q)) out.set(service, actionParams(actions, q.includeValues ?? true));
  return out;
}

/** Turns of one or both speakers, each with its index in the full dialogue (USER turns are even). */
export function* speakerTurns(dialogue: { turns: Turn[] }, user: boolean, system: boolean): Generator<[number, Turn]> {
  if (!user && !system) throw new Error('at least one speaker must be selected');
  const skip = !user ? 'USER' : !system ? 'SYSTEM' : '';
  let i = 0;
  for (const turn of dialogue.turns) {
    if (skip && turn.speaker === skip) continue;
    // the reference rebuilds the index from the position among the selected speaker's turns
    const idx = user !== system ? (system ? i * 2 + 1 : i * 2) : i;
    i++;
    yield [idx, turn];
  }
}

/** Append every leaf list of `extra` to the matching list of `into`, creating keys as needed. */
export function appendParams(into: ParamsByService, extra: ParamsByService): void {
  for (const [service, params] of extra) {
    let target = into.get(service);
    if (!target) into.set(service, (target = new Map()));
    for (const [param, turns] of params) {
      const existing = target.get(param);
      if (existing) existing.push(...turns);
      else target.set(param, [...turns]);
    }
  }
}

/** Slots the user requested (frame state `requested_slots`), by service, with the turns of each request. */
export function userRequestsByService(dialogue: Dialogue, lowercase = true): ParamsByService {
  const out: ParamsByService = new Map();
  for (const [idx, turn] of speakerTurns(dialogue, true, false)) {
    const thisTurn: ParamsByService = new Map();
    for (const frame of turn.frames ?? []) {
      for (let slot of frame.state?.requested_slots ?? []) {
        if (lowercase) slot = slot.toLowerCase();
        let m = thisTurn.get(frame.service);
        if (!m) thisTurn.set(frame.service, (m = new Map()));
        m.set(slot, [idx]);
      }
    }
    appendParams(out, thisTurn);
  }
  return out;
}

/** Slots (no values) in the acts of one speaker's turns, by service, with turn indices. */
export function slotsByService(dialogue: Dialogue, agent: 'USER' | 'SYSTEM', q: ActQuery): ParamsByService {
  const out: ParamsByService = new Map();
  for (const [idx, turn] of speakerTurns(dialogue, agent === 'USER', agent === 'SYSTEM')) {
    const thisTurn: ParamsByService = new Map();
    for (const [service, slots] of turnActionParams(turn, { ...q, includeValues: false })) {
      for (const slot of slots) {
        let m = thisTurn.get(service);
        if (!m) thisTurn.set(service, (m = new Map()));
        m.set(slot, [idx]);
      }
    }
    appendParams(out, thisTurn);
  }
  return out;
}

export function splitConstraint(constraint: string): [string, string] {
  const i = constraint.indexOf(SLOT_VALUE_SEP);
  if (i < 0) return [constraint, ''];
  return [constraint.slice(0, i), constraint.slice(i + SLOT_VALUE_SEP.length)];
}
