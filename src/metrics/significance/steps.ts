/**
 * Resampling as work that can pause. A paired test over millions of resamples runs for minutes;
 * done in one synchronous call it keeps Node's event loop, and with it the SIGINT/SIGTERM handlers
 * (src/cli/main.ts), from running until it ends: Ctrl-C would be answered only after the result.
 * The tests are written as generators that yield between blocks of resamples; library callers
 * drain them at once (runSteps), the commands drain them giving the event loop a turn every few
 * milliseconds (runStepsAsync), so a signal ends the process within a second.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** A computation that yields (nothing) between blocks of work and returns T. */
export type Steps<T> = Generator<void, T, void>;

/** The result at once, never pausing (the library's synchronous calls). */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * The result, letting the event loop run whenever `sliceMs` of work has passed since it last did:
 * a pending signal's handler runs then. 25 ms slices keep the pauses' cost (one setImmediate each,
 * microseconds) far below 1% and the answer to a signal far below the one second promised.
 */
export async function runStepsAsync<T>(steps: Steps<T>, sliceMs = 25): Promise<T> {
  let last = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() - last >= sliceMs) {
      await nextTurn();
      last = performance.now();
    }
  }
}
