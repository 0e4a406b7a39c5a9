/**
 * What a command wants said when the user stops it with Ctrl-C (SIGINT) or SIGTERM: one line with
 * how much is saved where and the command that resumes. src/cli/main.ts prints it on the way out;
 * `--workers` (src/shard/workers.ts) sets it too, so it lives below both.
 */
let notice: (() => string | undefined) | undefined;

export function setInterruptNotice(f: (() => string | undefined) | undefined): void {
  notice = f;
}

let wait: (() => Promise<void>) | undefined;

/**
 * What must end before the process may exit on Ctrl-C or SIGTERM: `--workers` waits for every
 * shard process, so a resume started right after never collides with a shard still writing.
 */
export function setInterruptWait(f: (() => Promise<void>) | undefined): void {
  wait = f;
}

export async function interruptWait(): Promise<void> {
  try {
    await wait?.();
  } catch {
    // never let the wait stand in the way of exiting
  }
}

export function interruptNotice(): string | undefined {
  try {
    return notice?.();
  } catch {
    return undefined; // never let the notice stand in the way of exiting
  }
}

/** The command line as typed, quoted for a POSIX shell, to paste back to resume. */
export function resumeCommand(argv: readonly string[] = process.argv.slice(2)): string {
  const quote = (a: string): string => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);
  return ['todeval', ...argv.map(quote)].join(' ');
}

/**
 * The notice of a command with a per-turn file: `<n> of <total> turns saved in <file>; resume with:
 * <command>`, or, without one, that nothing was kept and how to make the next run resumable.
 */
export function savedTurnsNotice(what: string, file: string | undefined, saved: () => number, total: number): () => string {
  return () =>
    file
      ? `interrupted: ${saved()} of ${total} ${what} saved in ${file}; resume with: ${resumeCommand()}`
      : `interrupted: nothing saved (add --turns FILE to make the run resumable)`;
}
