/**
 * Whether this process keeps the MultiWOZ data it reads (ground truth, database, booked domains)
 * for its later evaluations. Off by default: a one-shot run reads each file once anyway, and a
 * library caller gets objects of its own that it may change. `todeval stdio` turns it on, because
 * there every request would otherwise parse the same files again (most of a small request's time).
 * What is kept is frozen, so code that changed it would throw instead of altering the next request.
 */
let holding = false;

export function holdMwzData(on = true): void {
  holding = on;
}

export function holdingMwzData(): boolean {
  return holding;
}

/** `value` and everything reachable from it frozen; returns it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
