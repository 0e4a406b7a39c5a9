import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Long synchronous loops in a test hold the vitest worker's event loop; on a loaded box a few CPU
 * seconds become a minute and the worker misses vitest's 60 s RPC deadline (`Timeout calling
 * "onTaskUpdate"`), failing a run whose tests all passed. These give the loop a turn between chunks.
 */

/** One turn of the event loop (timers and I/O, the RPC's reply included, run before it resolves). */
export function yieldTurn(): Promise<void> {
  return nextTurn();
}

/** `items.map(fn)`, giving the event loop a turn after every `every` items. */
export async function mapYielding<T, R>(items: readonly T[], fn: (item: T, index: number) => R, every = 50): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % every === 0) await yieldTurn();
    out.push(fn(items[i]!, i));
  }
  return out;
}

/**
 * For loops whose items cost very different amounts (a whole dataset's texts): `const due =
 * turnDue(); ... if (due()) await yieldTurn();` gives the loop back every `ms` of work, whatever
 * the machine's speed, at the cost of one clock read an item.
 */
export function turnDue(ms = 250): () => boolean {
  let last = performance.now();
  return () => {
    const now = performance.now();
    if (now - last < ms) return false;
    last = now;
    return true;
  };
}
