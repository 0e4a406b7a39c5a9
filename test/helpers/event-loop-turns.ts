/**
 * For tests with long synchronous loops (tokenizing a whole dataset, checking every pair): a worker
 * whose event loop is held cannot answer vitest's RPC, and on a loaded machine a held minute fails the
 * run ("Timeout calling onTaskUpdate"). `const due = turnDue(); ... if (due()) await nextTurn();`
 * gives the loop back every `ms` of work, whatever the machine's speed, at the cost of one clock read
 * an iteration.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function turnDue(ms = 250): () => boolean {
  let last = performance.now();
  return () => {
    const now = performance.now();
    if (now - last < ms) return false;
    last = now;
    return true;
  };
}
