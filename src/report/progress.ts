import cliProgress from 'cli-progress';

/**
 * A progress bar on stderr when stderr is a terminal, else undefined: piped or logged runs get no
 * bar redraws in their output. Callers use `bar?.` so the quiet case needs no branch.
 */
export function progressBar(format: string, options: cliProgress.Options = {}): cliProgress.SingleBar | undefined {
  if (!process.stderr.isTTY) return undefined;
  return new cliProgress.SingleBar({ format, stream: process.stderr, ...options }, cliProgress.Presets.shades_classic);
}
