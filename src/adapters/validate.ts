import type { SchemaIndex } from '../schema/schema-index.js';
import { InputError } from '../util/errors.js';
import type { DialogueAction } from './types.js';

/**
 * Slot names that are not schema slots but part of the act's own vocabulary: SGD writes
 * INFORM_COUNT(count=N) and OFFER_INTENT/INFORM_INTENT(intent=Name).
 */
const ACT_OWN_SLOTS: Record<string, string> = {
  INFORM_COUNT: 'count',
  OFFER_INTENT: 'intent',
  INFORM_INTENT: 'intent',
};

/** Acts that never carry a service: general acts are checked by name only. */
export const GENERAL_SERVICE = 'general';

/** Checks the action's service, slot and intent against the schema; throws an InputError naming file and turn. */
export function checkActionAgainstSchema(a: DialogueAction, schema: SchemaIndex, file: string, where: string): void {
  if (a.service === GENERAL_SERVICE && a.slot === '') return;
  if (!schema.service(a.service)) {
    throw new InputError(`unknown service "${a.service}" (not in schema ${schema.source})`, { file, where });
  }
  if (a.slot === '') return;
  if (ACT_OWN_SLOTS[a.act] === a.slot) {
    if (a.slot === 'intent') {
      for (const v of a.values) {
        if (!schema.intent(a.service, v)) {
          throw new InputError(`unknown intent "${v}" of service "${a.service}"`, { file, where });
        }
      }
    }
    return;
  }
  if (!schema.slot(a.service, a.slot)) {
    throw new InputError(`unknown slot "${a.slot}" of service "${a.service}" in ${a.act}`, { file, where });
  }
}

/**
 * A system turn must carry its utterance field. An empty string is kept (SGD test has two empty
 * GOODBYE turns, 3_00055/15 and 6_00009/11): the turn is real, SGSAcc simply cannot validate it.
 */
export function requireUtterance(u: unknown, file: string, where: string): string {
  if (typeof u !== 'string') {
    throw new InputError('system turn has no utterance', { file, where });
  }
  return u;
}
