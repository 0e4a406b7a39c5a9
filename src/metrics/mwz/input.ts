import { InputError } from '../../util/errors.js';
import { dialogueKey } from './ground-truth.js';
import type { BeliefState } from './normalize-state.js';

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
}

export interface ValidateOptions {
  file?: string;
  /** Expected number of system turns per known dialogue id. */
  expectedTurns: Record<string, number>;
  skipInvalid?: boolean;
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

function checkTurn(raw: unknown, file: string | undefined, where: string): MwzInputTurn {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InputError('a turn must be an object with a "response" string', { file, where });
  }
  const t = raw as Record<string, unknown>;
  if (typeof t.response !== 'string') {
    throw new InputError('missing "response" string', { file, where });
  }
  const turn: MwzInputTurn = { response: t.response };
  if (t.utterance !== undefined) {
    if (typeof t.utterance !== 'string') throw new InputError('"utterance" must be a string', { file, where });
    turn.utterance = t.utterance;
  }
  if (t.state !== undefined) {
    if (typeof t.state !== 'object' || t.state === null || Array.isArray(t.state)) {
      throw new InputError('"state" must be an object {domain: {slot: value}}', { file, where });
    }
    const state: BeliefState = {};
    for (const [domain, slots] of Object.entries(t.state as Record<string, unknown>)) {
      if (typeof slots !== 'object' || slots === null || Array.isArray(slots)) {
        throw new InputError(`"state.${domain}" must be an object {slot: value}`, { file, where });
      }
      checkDomain(domain, '"state"', file, where);
      const d: Record<string, string> = {};
      for (const [slot, value] of Object.entries(slots as Record<string, unknown>)) {
        // numbers (e.g. stars: 4) are accepted as their string form, as the database stores them
        if (typeof value === 'string') d[slot] = value;
        else if (typeof value === 'number' || typeof value === 'boolean') d[slot] = String(value);
        else throw new InputError(`"state.${domain}.${slot}" must be a string`, { file, where });
      }
      state[domain] = d;
    }
    turn.state = state;
  }
  if (t.active_domains !== undefined) {
    if (!Array.isArray(t.active_domains) || !t.active_domains.every((d) => typeof d === 'string')) {
      throw new InputError('"active_domains" must be a list of domain names', { file, where });
    }
    for (const d of t.active_domains as string[]) checkDomain(d, '"active_domains"', file, where);
    turn.active_domains = (t.active_domains as string[]).map((d) => d.toLowerCase());
  }
  return turn;
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
      dialogues[id] = turns.map((t, i) => checkTurn(t, file, `${rawId}/turn ${i}`));
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
  return { dialogues, invalid };
}
