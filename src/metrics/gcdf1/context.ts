/** Shared helpers for walking back through the system turns between two user turns. */
import type { Dialogue, Turn } from './types.js';

/**
 * System turns before user turn `start` (even index), most recent first: `contextSize` of them, or
 * all the way back to the start of the dialogue when it is not positive.
 */
export function previousSystemTurns(dialogue: Dialogue, start: number, contextSize = -1): Turn[] {
  const lowerBound = contextSize > 0 ? Math.max(-1, start - 1 - 2 * contextSize) : -1;
  const out: Turn[] = [];
  for (let i = start - 1; i > lowerBound; i -= 2) out.push(dialogue.turns[i]);
  return out;
}

/** How many odd numbers lie in [left, right): the system turns between two user turns. */
export function countOdd(left: number, right: number): number {
  let n = Math.floor((right - left) / 2);
  if (right % 2 !== 0 || left % 2 !== 0) n += 1;
  return n;
}

export function* pairwise<T>(items: T[]): Generator<[T, T]> {
  for (let i = 0; i + 1 < items.length; i++) yield [items[i], items[i + 1]];
}

/** Behaviours that only validate the rules (or blame the user) and never compensate a repetition. */
export const SPECIAL_BEHAVIOURS = new Set([
  'nobook_validation_failure',
  'wrong_taxi_annotations',
  'nooffer_validation_failure',
  'failed_dialogue',
  'repeated_despite_receiving_answer',
]);
