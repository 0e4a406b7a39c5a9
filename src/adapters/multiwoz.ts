import type { SchemaIndex } from '../schema/schema-index.js';
import { InputError } from '../util/errors.js';
import { readJsonFile, type FileRead } from '../util/json-file.js';
import type { InvalidCollector } from './collect.js';
import { loadSlotMap, mapSlot, type MultiwozSlotMap } from './multiwoz-slots.js';
import { turnId, type DialogueAction, type Turn } from './types.js';
import { checkActionAgainstSchema, GENERAL_SERVICE, requireUtterance } from './validate.js';

type ActPairs = [string, string][];
export interface ConvlabTurn {
  text?: string;
  dialog_act?: Record<string, ActPairs>;
  metadata?: Record<string, { book?: { booked?: unknown[] } }>;
}
export interface ConvlabDialogue {
  goal?: Record<string, unknown>;
  log: ConvlabTurn[];
}

const BOOKING = 'booking';

/**
 * The system acts of MultiWOZ (ConvLab 2.1 and 2.2 dialog_acts), compared case-insensitively.
 * Anything else is a typo or another dataset's act: left through, it would get no reference and
 * silently drop out of every score.
 */
export const MULTIWOZ_SYSTEM_ACTS = [
  'Inform', 'Request', 'Recommend', 'Select', 'NoOffer', 'Book', 'NoBook', 'OfferBook', 'OfferBooked',
  'bye', 'greet', 'reqmore', 'welcome',
];
const KNOWN_ACTS = new Set(MULTIWOZ_SYSTEM_ACTS.map((a) => a.toLowerCase()));

function checkConvlabShape(raw: unknown, file: string): Record<string, ConvlabDialogue> {
  if (Array.isArray(raw)) {
    throw new InputError(
      'wrong dataset format: this is a JSON array (SGD-style dialogues?); expected a MultiWOZ ConvLab file {dialogue_id: {goal, log}}',
      { file },
    );
  }
  if (raw === null || typeof raw !== 'object') {
    throw new InputError('wrong dataset format: expected a MultiWOZ ConvLab object {dialogue_id: {goal, log}}', { file });
  }
  return raw as Record<string, ConvlabDialogue>;
}

function actDomains(t: ConvlabTurn | undefined): string[] {
  return Object.keys(t?.dialog_act ?? {})
    .map((k) => k.split('-')[0].toLowerCase())
    .filter((d) => d !== BOOKING && d !== GENERAL_SERVICE);
}

function bookedCount(t: ConvlabTurn | undefined, domain: string): number {
  const b = t?.metadata?.[domain]?.book?.booked;
  return Array.isArray(b) ? b.length : 0;
}

/**
 * The domain a `Booking-*` act is about. In order: the domain whose booked list grows at this turn
 * (the belief state records what was actually booked), a domain named by another act of the same
 * turn, the latest domain named earlier in the dialogue, the first goal domain with a booking,
 * the first goal domain at all, the next domain named later in the dialogue.
 */
export function bookingDomain(log: ConvlabTurn[], ti: number, goal: Record<string, unknown> | undefined): string | undefined {
  const t = log[ti];
  const prevSys = ti >= 2 ? log[ti - 2] : undefined;
  for (const d of Object.keys(t.metadata ?? {})) {
    if (bookedCount(t, d) > bookedCount(prevSys, d)) return d;
  }
  const same = actDomains(t);
  if (same.length) return same[0];
  for (let i = ti - 1; i >= 0; i--) {
    const ds = actDomains(log[i]);
    if (ds.length) return ds[0];
  }
  const goalDomains = Object.entries(goal ?? {}).filter(
    ([d, g]) => d !== 'topic' && d !== 'message' && g && typeof g === 'object' && Object.keys(g).length > 0,
  );
  const withBook = goalDomains.find(([, g]) => Object.keys((g as { book?: object }).book ?? {}).length > 0);
  if (withBook) return withBook[0];
  if (goalDomains.length) return goalDomains[0][0];
  for (let i = ti + 1; i < log.length; i++) {
    const ds = actDomains(log[i]);
    if (ds.length) return ds[0];
  }
  return undefined;
}

function normaliseValue(map: MultiwozSlotMap, suffix: string, value: string): string[] {
  const v = String(value).trim();
  if (v === '?' || v === '') return [];
  if (v.toLowerCase() === 'none') return map.noneMeans[suffix] ? [map.noneMeans[suffix]] : [];
  return [v];
}

export function readMultiwozTurns(file: string, schema: SchemaIndex, collector: InvalidCollector, limit?: number, read?: FileRead): Turn[] {
  const map = loadSlotMap();
  const dialogues = checkConvlabShape(readJsonFile(file, read), file);
  const turns: Turn[] = [];
  for (const [dialogueId, d] of Object.entries(dialogues)) {
    if (!d || !Array.isArray(d.log)) {
      collector.reject(new InputError('wrong dataset format: dialogue without log (not a MultiWOZ ConvLab dialogue)', {
        file,
        where: dialogueId,
      }));
      continue;
    }
    // ConvLab logs alternate user/system starting with the user: odd positions are system turns.
    for (let ti = 1; ti < d.log.length; ti += 2) {
      if (limit !== undefined && turns.length >= limit) return turns;
      const where = turnId(dialogueId, ti);
      const turn = collector.guard(() => multiwozSystemTurn(d, dialogueId, ti, schema, map, file, where));
      if (turn) turns.push(turn);
    }
  }
  return turns;
}

export function multiwozSystemTurn(
  d: ConvlabDialogue,
  dialogueId: string,
  ti: number,
  schema: SchemaIndex,
  map: MultiwozSlotMap,
  file: string,
  where: string,
): Turn {
  const t = d.log[ti];
  const utterance = requireUtterance(t?.text, file, where);
  const acts = t.dialog_act ?? {};
  if (typeof acts !== 'object' || Array.isArray(acts)) throw new InputError('dialog_act is not an object', { file, where });
  const actions: DialogueAction[] = [];
  const services = new Set<string>();
  for (const [key, pairs] of Object.entries(acts)) {
    const dash = key.indexOf('-');
    if (dash <= 0 || !Array.isArray(pairs)) {
      throw new InputError(`malformed dialog_act "${key}" (expected "Domain-Act": [[slot, value], ...])`, { file, where });
    }
    let domain = key.slice(0, dash).toLowerCase();
    const act = key.slice(dash + 1);
    if (!KNOWN_ACTS.has(act.toLowerCase())) {
      throw new InputError(`unknown MultiWOZ system act "${act}" in "${key}" (MultiWOZ has ${MULTIWOZ_SYSTEM_ACTS.join(', ')})`, { file, where });
    }
    if (domain === BOOKING) {
      const resolved = bookingDomain(d.log, ti, d.goal);
      if (!resolved) throw new InputError(`cannot tell which domain "${key}" books`, { file, where });
      domain = resolved;
    }
    if (domain !== GENERAL_SERVICE) services.add(domain);
    for (const pair of pairs) {
      // Both must be strings: a null or numeric slot reached slot.toLowerCase() (mapSlot) as a
      // TypeError naming no file or turn, which --skip-invalid could not skip; a null value would
      // have been coerced to the text "null".
      if (!Array.isArray(pair) || pair.length < 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
        throw new InputError(`malformed slot-value pair ${JSON.stringify(pair)} in "${key}" (expected [slot, value], two strings)`, { file, where });
      }
      const [slot21, value] = pair;
      let slot = '';
      let values: string[] = [];
      if (slot21 !== 'none' && domain !== GENERAL_SERVICE) {
        const suffix = mapSlot(map, domain, slot21);
        if (!suffix) throw new InputError(`unknown slot "${slot21}" in "${key}" (not in rules/multiwoz/slot-map.json)`, { file, where });
        slot = `${domain}-${suffix}`;
        values = normaliseValue(map, suffix, value);
      }
      const action: DialogueAction = { service: domain, act, slot, values, sourceAct: key };
      checkActionAgainstSchema(action, schema, file, where);
      actions.push(action);
    }
  }
  const prev = d.log[ti - 1];
  return {
    id: where,
    dialogueId,
    turnIndex: ti,
    dataset: 'multiwoz',
    services: [...services],
    actions,
    utterance,
    previousUserUtterance: typeof prev?.text === 'string' ? prev.text : '',
  };
}
