import { InputError } from '../../util/errors.js';
import { duplicateTopLevelKey } from '../../util/json-file.js';
import { schemaError } from '../../util/json-schema.js';
import { dialogueKey } from './ground-truth.js';
import { normalizeStateSlotName, type BeliefState } from './normalize-state.js';

/** One system turn in mwzeval's input format, plus our optional lexicalized `utterance`. */
export interface MwzInputTurn {
  response: string;
  state?: BeliefState;
  active_domains?: string[];
  /** Lexicalized text of the same turn, used by --sgsacc. */
  utterance?: string;
}
/** Dialogue id (`sng0073`) -> turns. */
export type MwzPredictions = Record<string, MwzInputTurn[]>;

export interface ValidatedPredictions {
  dialogues: MwzPredictions;
  /** Problems that were skipped under skipInvalid (each names dialogue/turn). */
  invalid: InputError[];
  /** State slots MultiWOZ does not have (left in: they never match the ground truth). */
  unknownSlots: UnknownStateSlot[];
}

export interface ValidateOptions {
  file?: string;
  /** Expected number of system turns per known dialogue id. */
  expectedTurns: Record<string, number>;
  skipInvalid?: boolean;
  /** A state slot MultiWOZ does not have is an error (else counted in unknownSlots). */
  strict?: boolean;
}

/**
 * MultiWOZ domain names (bus has a belief state in 2.1 but no database). Any other name is a typo
 * ("hotels") that the metrics would silently ignore, so it is refused.
 */
export const MWZ_DOMAINS = ['attraction', 'bus', 'hospital', 'hotel', 'police', 'restaurant', 'taxi', 'train'];

function checkDomain(domain: string, field: string, file: string | undefined, where: string): void {
  if (!MWZ_DOMAINS.includes(domain.toLowerCase())) {
    throw new InputError(`${field}: unknown domain "${domain}" (MultiWOZ domains: ${MWZ_DOMAINS.join(', ')})`, { file, where });
  }
}

/**
 * Belief-state slots of each MultiWOZ domain, as normalizeStateSlotName writes them (arriveBy ->
 * arrive, "book day" -> bookday). Booking slots come both with the "book" prefix (the dataset's
 * states) and without it (what systems such as AuGPT predict). Any other slot never matches the
 * ground truth: a warning, counted, or an error under --strict.
 */
const BOOKING = (...slots: string[]) => slots.flatMap((s) => [s, `book${s}`]);
export const MWZ_STATE_SLOTS: Record<string, readonly string[]> = {
  attraction: ['area', 'name', 'type'],
  bus: ['day', 'departure', 'destination', 'leave', 'arrive'],
  hospital: ['department'],
  hotel: ['area', 'internet', 'name', 'parking', 'pricerange', 'stars', 'type', ...BOOKING('day', 'people', 'stay')],
  police: ['name'],
  restaurant: ['area', 'food', 'name', 'pricerange', ...BOOKING('day', 'people', 'time')],
  taxi: ['arrive', 'departure', 'destination', 'leave'],
  train: ['arrive', 'day', 'departure', 'destination', 'leave', ...BOOKING('people')],
};

/** One state slot outside MWZ_STATE_SLOTS, where it was seen. */
export interface UnknownStateSlot {
  where: string;
  domain: string;
  slot: string;
}

function checkTurn(raw: unknown, file: string | undefined, where: string, unknownSlots: UnknownStateSlot[]): MwzInputTurn {
  // Types first, by schemas/mwz-predictions.schema.json: a number in a state ("stars": 4) or a
  // string where a list belongs is refused rather than coerced.
  const typeError = schemaError(raw, 'mwz-predictions.schema.json', 'turn');
  if (typeError) throw new InputError(typeError, { file, where });
  const t = raw as MwzInputTurn;
  const turn: MwzInputTurn = { response: t.response };
  if (t.utterance !== undefined) turn.utterance = t.utterance;
  if (t.state !== undefined) {
    // Domains are accepted in any case (as in active_domains), so they are lowercased here: the
    // ground truth and the database know "hotel" only, and a "Hotel" state never matched anything.
    const state: BeliefState = {};
    for (const [domain, slots] of Object.entries(t.state)) {
      checkDomain(domain, '"state"', file, where);
      const lower = domain.toLowerCase();
      if (Object.prototype.hasOwnProperty.call(state, lower)) {
        throw new InputError(`"state": domain "${lower}" given twice (domains are case-insensitive)`, { file, where });
      }
      const known = MWZ_STATE_SLOTS[lower];
      for (const slot of Object.keys(slots)) {
        if (!known.includes(normalizeStateSlotName(slot))) unknownSlots.push({ where, domain, slot });
      }
      state[lower] = slots;
    }
    turn.state = state;
  }
  if (t.active_domains !== undefined) {
    for (const d of t.active_domains) checkDomain(d, '"active_domains"', file, where);
    turn.active_domains = t.active_domains.map((d) => d.toLowerCase());
  }
  return turn;
}

/** The error --strict gives for a state slot MultiWOZ does not have. */
export function unknownSlotError(u: UnknownStateSlot, file: string | undefined): InputError {
  const known = MWZ_STATE_SLOTS[u.domain.toLowerCase()];
  return new InputError(`"state.${u.domain}": unknown slot "${u.slot}" (MultiWOZ ${u.domain.toLowerCase()} slots: ${known.join(', ')})`, { file, where: u.where });
}

/**
 * Refuses a dialogue id written twice in a predictions file's `text` (its parsed value a plain
 * object): JSON.parse kept the later copy without a word, where ids that differ only in case are
 * refused as given twice by validatePredictions. Refused even under skipInvalid, the first copy
 * being already gone.
 */
export function checkRepeatedDialogues(text: string, file: string): void {
  const repeated = duplicateTopLevelKey(text);
  if (repeated !== undefined) throw new InputError('dialogue given twice (ids are case-insensitive)', { file, where: repeated });
}

/**
 * Check a predictions object against the test set: every dialogue id must be a test dialogue
 * (ids are matched case-insensitively, a ".json" suffix is dropped) and carry exactly one entry
 * per system turn. Errors name the dialogue and turn; under skipInvalid, bad dialogues are listed
 * and left out instead.
 */
export function validatePredictions(data: unknown, opts: ValidateOptions): ValidatedPredictions {
  const { file, expectedTurns } = opts;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new InputError('expected a JSON object: dialogue id (e.g. "sng0073") -> list of turns', { file });
  }
  const dialogues: MwzPredictions = {};
  const invalid: InputError[] = [];
  const unknownIds: string[] = [];
  const unknownSlots: UnknownStateSlot[] = [];
  const fail = (e: InputError): void => {
    if (!opts.skipInvalid) throw e;
    invalid.push(e);
  };

  for (const [rawId, turns] of Object.entries(data as Record<string, unknown>)) {
    const id = dialogueKey(rawId);
    if (!(id in expectedTurns)) {
      unknownIds.push(rawId);
      continue;
    }
    if (id in dialogues) {
      fail(new InputError('dialogue given twice (ids are case-insensitive)', { file, where: rawId }));
      continue;
    }
    if (!Array.isArray(turns)) {
      fail(new InputError('expected a list of turns', { file, where: rawId }));
      continue;
    }
    if (turns.length !== expectedTurns[id]) {
      fail(
        new InputError(`expected ${expectedTurns[id]} system turns, got ${turns.length}`, { file, where: rawId }),
      );
      continue;
    }
    try {
      const found: UnknownStateSlot[] = [];
      const checked = turns.map((t, i) => checkTurn(t, file, `${rawId}/turn ${i}`, found));
      if (opts.strict && found.length > 0) throw unknownSlotError(found[0], file);
      dialogues[id] = checked;
      unknownSlots.push(...found);
    } catch (e) {
      if (e instanceof InputError) fail(e);
      else throw e;
    }
  }

  if (unknownIds.length > 0) {
    const shown = unknownIds.slice(0, 5).join(', ') + (unknownIds.length > 5 ? `, ... (${unknownIds.length} in all)` : '');
    fail(new InputError(`dialogue ids not in the MultiWOZ test set: ${shown}`, { file }));
  }
  if (Object.keys(dialogues).length === 0) {
    throw new InputError('no valid test dialogues to evaluate', { file });
  }
  return { dialogues, invalid, unknownSlots };
}
