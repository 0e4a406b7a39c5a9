import type { Turn } from '../../adapters/types.js';
import type { SgsaccAction, SgsaccTurn } from './types.js';

/** What the rule engine gives per action (src/rules ActionReferences); `id` there is the turn id. */
export type ExpandedAction = Omit<SgsaccAction, 'id'> & { id?: string };

/**
 * The rule engine's actions of one turn as SGSAcc actions. Actions are identified by position in
 * the turn, which is stable for a given dataset file and rules version (both are in the signature).
 */
export function numberActions(expanded: ExpandedAction[]): SgsaccAction[] {
  return expanded.map((a, i) => ({
    id: String(i),
    service: a.service,
    act: a.act,
    slot: a.slot,
    values: a.values,
    candidates: a.candidates,
    negatives: a.negatives,
    slotDescription: a.slotDescription,
  }));
}

/** Joins dataset turns with their rule-engine references. */
export function toSgsaccTurns(turns: Turn[], expand: (turn: Turn) => ExpandedAction[]): SgsaccTurn[] {
  return turns.map((turn) => ({
    id: turn.id,
    services: turn.services,
    utterance: turn.utterance,
    previousUserUtterance: turn.previousUserUtterance,
    actions: numberActions(expand(turn)),
  }));
}
