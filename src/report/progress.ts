import cliProgress from 'cli-progress';

/**
 * A progress bar on stderr when stderr is a terminal, else undefined: piped or logged runs get no
 * bar redraws in their output. Callers use `bar?.` so the quiet case needs no branch.
 *
 * While it runs, the bar turns terminal line wrapping off (and the cursor, if asked). Ctrl-C or a
 * kill would leave them off in the user's shell, so Ctrl-C/SIGTERM first stop the bar (restoring
 * them) and then exit as the signal would (130/143). cli-progress's own `gracefulExit` only stops
 * the bar and leaves the process running.
 */
export function progressBar(format: string, options: cliProgress.Options = {}): cliProgress.SingleBar | undefined {
  if (!process.stderr.isTTY) return undefined;
  const bar = new cliProgress.SingleBar({ format, stream: process.stderr, ...options }, cliProgress.Presets.shades_classic);
  const onSignal = (signal: NodeJS.Signals): void => {
    bar.stop();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  const start = bar.start.bind(bar);
  const stop = bar.stop.bind(bar);
  bar.start = (...args: Parameters<typeof start>): void => {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    start(...args);
  };
  bar.stop = (): void => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stop();
  };
  return bar;
}
