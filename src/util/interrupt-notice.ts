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

let resumeAs: string | undefined;

/**
 * The command that resumes this process's work, where it is not this process's own command line:
 * a `--workers` shard process resumes through its parent's command (src/pipeline/shard-worker.ts).
 */
export function setResumeCommand(command: string | undefined): void {
  resumeAs = command;
}

/** The command line as typed, quoted for a POSIX shell, to paste back to resume. */
export function resumeCommand(argv?: readonly string[]): string {
  if (argv === undefined && resumeAs !== undefined) return resumeAs;
  argv ??= process.argv.slice(2);
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

/**
 * Ctrl-C (SIGINT, exit 130) and SIGTERM (143) leave through process.exit, so 'exit' hooks run: a
 * progress bar restores the terminal and the NLI cache appends its last pairs (Node's default would
 * end the process without). The command's notice is printed as one line first; what it must wait
 * for (`--workers`: its shard processes) ends before the exit; a second signal during that wait
 * changes nothing. Installed once by each process that runs a pipeline: the CLI and a shard worker.
 */
export function exitOnSignals(): void {
  let stopping = false;
  const stop = (code: number): void => {
    if (stopping) return;
    stopping = true;
    const line = interruptNotice();
    if (line) process.stderr.write(`${process.stderr.isTTY ? '\n' : ''}todeval: ${line}\n`);
    void interruptWait().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => stop(130));
  process.on('SIGTERM', () => stop(143));
}
