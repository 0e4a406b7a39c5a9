const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * Runs a long synchronous stage (evaluate's MultiWOZ metrics, its bootstrap) so that Ctrl-C and
 * SIGTERM still end the process at once. A JavaScript signal listener runs only when the event loop
 * turns, which a synchronous stage of many seconds never lets it do: evaluate went on for seconds
 * after SIGTERM, and a signal that arrived during its last stage was never handled (exit 0). While
 * `work` runs our listeners are set aside, so Node's own handling applies: the terminal is reset and
 * the process ends by the signal (status 130 or 143 in the shell). Nothing is lost by it: such a
 * stage writes nothing until it returns, and its output is then written atomically.
 */
export function whileSynchronous<T>(work: () => T): T {
  const saved = STOP_SIGNALS.map((signal) => [signal, process.listeners(signal)] as const);
  for (const [signal, listeners] of saved) for (const l of listeners) process.off(signal, l);
  try {
    return work();
  } finally {
    for (const [signal, listeners] of saved) for (const l of listeners) process.on(signal, l);
  }
}
