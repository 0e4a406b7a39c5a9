import type { TurnScore } from './types.js';

/** How a turn ends up in a run, one outcome per turn (the report's outcome mix adds them up). */
export type TurnOutcome =
  | { kind: 'faithful' | 'unfaithful' | 'context-only' | 'unscorable' }
  | { kind: 'excluded'; reasons: string[] };

/**
 * - excluded: left out of validated SGSAcc (whatever its unvalidated verdict);
 * - unscorable: an action has no reference;
 * - context-only: the verdict rests on context rescues the context alone entails: faithful only
 *   through them (control off), or unfaithful only because they were withdrawn (control on);
 * - faithful / unfaithful otherwise.
 */
export function turnOutcome(
  // Reads per-turn files too, whose exclusion reasons are whatever strings they hold.
  s: Pick<TurnScore, 'validation' | 'faithful'> & { exclusionReasons?: readonly string[]; actions: Pick<TurnScore['actions'][number], 'entailed' | 'contextUsed' | 'contextOnly'>[] },
): TurnOutcome {
  if (s.validation === 'excluded') return { kind: 'excluded', reasons: [...(s.exclusionReasons ?? [])].sort() };
  if (s.faithful === null) return { kind: 'unscorable' };
  const contextOnly = (a: { contextUsed: boolean; contextOnly?: boolean }) => a.contextUsed && a.contextOnly === true;
  if (s.faithful) return { kind: s.actions.some(contextOnly) ? 'context-only' : 'faithful' };
  const missed = s.actions.filter((a) => !a.entailed);
  return { kind: missed.length > 0 && missed.every(contextOnly) ? 'context-only' : 'unfaithful' };
}
