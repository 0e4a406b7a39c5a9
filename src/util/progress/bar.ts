import cliProgress from 'cli-progress';
import { mib } from '../units.js';
import { InvalidArgumentError, Option } from 'commander';

/** --progress: a bar on a terminal, plain lines for runs nobody watches (nohup, Slurm, CI), or nothing. */
export type ProgressMode = 'auto' | 'bar' | 'lines' | 'none';
export const PROGRESS_MODES: readonly ProgressMode[] = ['auto', 'bar', 'lines', 'none'];

/** Seconds between two progress lines (`--progress lines`, or auto without a terminal); $TODEVAL_PROGRESS_SECONDS overrides. */
export const PROGRESS_LINE_SECONDS = 30;

export function progressOption(): Option {
  return new Option('--progress <mode>', `progress on stderr: auto (a bar on a terminal, else a line every ${PROGRESS_LINE_SECONDS} s), bar, lines or none`)
    .choices(PROGRESS_MODES)
    .default('auto');
}

/** The part of cli-progress's SingleBar the commands use; the line printer implements it too. */
export interface Progress {
  start(total: number, value: number, payload?: Record<string, unknown>): void;
  update(value: number, payload?: Record<string, unknown>): void;
  increment(): void;
  /** A total learnt while running (the workers' bar: each shard reports its own when it starts). */
  setTotal(total: number): void;
  stop(): void;
  readonly isActive: boolean;
  getProgress?(): number;
}

/**
 * Progress on stderr for a format like `score |{bar}| {value}/{total} turns | {pairs} pairs | ETA {eta_formatted}`.
 *
 * mode undefined (commands without --progress): a bar when stderr is a terminal, else nothing.
 * 'auto': a bar on a terminal, else a plain line every PROGRESS_LINE_SECONDS. 'bar' / 'lines' /
 * 'none' force one. Callers use `bar?.` so the quiet case needs no branch.
 *
 * While it runs, the bar turns terminal line wrapping off (and the cursor, if asked). A run that
 * ends early (Ctrl-C and SIGTERM exit through process.exit, see src/cli/main.ts) would leave them
 * off in the user's shell, so the bar also stops on the process 'exit' event, restoring them.
 * (cli-progress's own `gracefulExit` stops the bar on SIGINT but leaves the process running.)
 */
export function progressBar(format: string, options: cliProgress.Options = {}, mode?: ProgressMode): Progress | undefined {
  const tty = process.stderr.isTTY === true;
  const kind = mode === undefined ? (tty ? 'bar' : 'none') : mode === 'auto' ? (tty ? 'bar' : 'lines') : mode;
  if (kind === 'none') return undefined;
  if (kind === 'lines') return new ProgressLines(format, lineSeconds());
  const bar = new cliProgress.SingleBar({ format, stream: process.stderr, noTTYOutput: !tty, ...options }, cliProgress.Presets.shades_classic);
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
  return bar as unknown as Progress;
}

/**
 * A pipeline's `progress(done, total)` hook drawing `bar`: it starts on the first report, as only
 * the pipeline knows the total (the lexicalized turns, the items left after a resume).
 */
export function barProgress(bar: Progress | undefined): (done: number, total: number) => void {
  return (done, total) => (bar?.isActive ? bar.update(done) : bar?.start(total, done));
}

function lineSeconds(): number {
  const env = process.env.TODEVAL_PROGRESS_SECONDS;
  if (env === undefined || env === '') return PROGRESS_LINE_SECONDS;
  const n = Number(env);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`TODEVAL_PROGRESS_SECONDS must be a positive number of seconds, got "${env}"`);
  return n;
}

/**
 * The same format as plain lines, one every `seconds`: `todeval: score 120/400 turns (30%) | 1234
 * pairs | 3.1 pairs/s | ETA 2m 5s`. Nothing is printed for runs shorter than one interval, so logs
 * of quick runs stay clean; the ETA is from the rate since start (resumed work excluded).
 */
export class ProgressLines implements Progress {
  private total = 0;
  private value = 0;
  private startValue = 0;
  private startedAt = 0;
  private payload: Record<string, unknown> = {};
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly format: string,
    private readonly seconds: number,
    private readonly write: (line: string) => void = (l) => process.stderr.write(l),
    private readonly now: () => number = Date.now,
  ) {}

  get isActive(): boolean {
    return this.timer !== undefined;
  }

  start(total: number, value: number, payload: Record<string, unknown> = {}): void {
    this.total = total;
    this.value = this.startValue = value;
    this.payload = { ...payload };
    this.startedAt = this.now();
    this.timer = setInterval(() => this.print(), this.seconds * 1000);
    this.timer.unref();
  }

  update(value: number, payload: Record<string, unknown> = {}): void {
    this.value = value;
    Object.assign(this.payload, payload);
  }

  increment(): void {
    this.value++;
  }

  setTotal(total: number): void {
    this.total = total;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The line as it would be printed now. */
  line(): string {
    const secs = Math.max(0.001, (this.now() - this.startedAt) / 1000);
    const rate = (this.value - this.startValue) / secs;
    const eta = rate > 0 ? formatDuration((this.total - this.value) / rate) : 'unknown';
    const pct = this.total > 0 ? Math.floor((100 * this.value) / this.total) : 0;
    const fields: Record<string, unknown> = {
      ...this.payload,
      value: this.value,
      total: this.total,
      percentage: pct,
      eta_formatted: eta,
      eta: eta,
      duration_formatted: formatDuration(secs),
    };
    const text = this.format
      .replace(/\s*[|[]?\{bar\}[|\]]?\s*/, ' ')
      .replace(/\{(\w+)\}/g, (_, k: string) => (fields[k] === undefined ? '' : String(fields[k])))
      .replace(/ (\d+)\/(\d+) (\w+)/, ` $1/$2 $3 (${pct}%)`)
      .replace(/\s+/g, ' ')
      .trim();
    return `todeval: ${text}`;
  }

  private print(): void {
    this.write(`${this.line()}\n`);
  }
}

function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

/**
 * A download's progress (`models pull`): a bar in MiB on a terminal; piped or in CI, a line per
 * file, or a 1.4 GB download looks like a hang. `update` takes bytes done and total, and the file.
 */
export function downloadProgress(format: string): { update: (done: number, total: number, file: string) => void; stop: () => void } {
  const bar = progressBar(format);
  let started = false;
  let lastFile = '';
  const update = (done: number, total: number, file: string): void => {
    if (!bar) {
      if (file !== lastFile) process.stderr.write(`pulling ${file} (${mib(done)} of ${mib(total)} so far)\n`);
      lastFile = file;
      return;
    }
    if (!started) {
      bar.start(Math.ceil(total / 2 ** 20), 0, { file });
      started = true;
    }
    bar.update(Math.floor(done / 2 ** 20), { file });
  };
  return { update, stop: () => bar?.stop() };
}

/**
 * The bar of an NLI run (`score`): units done of the total, the pairs issued and their rate since
 * the runner opened, redrawn every second between chunks. The format takes `{pairs}` and `{rate}`.
 */
export function pairsProgress(format: string, mode?: ProgressMode) {
  const bar = progressBar(format, { etaBuffer: 50 }, mode);
  let issued: (() => number) | undefined;
  let since = Date.now();
  let lastDone = 0;
  let ticker: NodeJS.Timeout | undefined;
  const update = (done?: number): void => {
    if (!bar || !issued) return;
    const pairs = issued();
    const secs = Math.max(0.001, (Date.now() - since) / 1000);
    lastDone = done ?? lastDone;
    bar.update(lastDone, { pairs, rate: (pairs / secs).toFixed(1) });
  };
  return {
    /** Where the pair count comes from (the runner's stats), from when the runner is open. */
    countPairs(count: () => number): void {
      issued = count;
      since = Date.now();
    },
    start(total: number, done: number): void {
      lastDone = done;
      bar?.start(total, done, { pairs: 0, rate: '0.0' });
      ticker = bar ? setInterval(() => update(), 1000) : undefined;
    },
    update,
    stop(): void {
      if (ticker) clearInterval(ticker);
      bar?.stop();
    },
  };
}
