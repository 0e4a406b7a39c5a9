import cliProgress from 'cli-progress';

/**
 * A progress bar on stderr when stderr is a terminal, else undefined: piped or logged runs get no
 * bar redraws in their output. Callers use `bar?.` so the quiet case needs no branch.
 *
 * While it runs, the bar turns terminal line wrapping off (and the cursor, if asked). A run that
 * ends early (Ctrl-C and SIGTERM exit through process.exit, see src/cli/main.ts) would leave them
 * off in the user's shell, so the bar also stops on the process 'exit' event, restoring them.
 * (cli-progress's own `gracefulExit` stops the bar on SIGINT but leaves the process running.)
 */
export function progressBar(format: string, options: cliProgress.Options = {}): cliProgress.SingleBar | undefined {
  if (!process.stderr.isTTY) return undefined;
  const bar = new cliProgress.SingleBar({ format, stream: process.stderr, ...options }, cliProgress.Presets.shades_classic);
  const start = bar.start.bind(bar);
  const stop = bar.stop.bind(bar);
  const restore = (): void => stop();
  bar.start = (...args: Parameters<typeof start>): void => {
    process.once('exit', restore);
    start(...args);
  };
  bar.stop = (): void => {
    process.off('exit', restore);
    stop();
  };
  return bar;
}
