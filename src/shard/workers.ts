import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { InputError } from '../util/errors.js';
import { resumeCommand, setInterruptNotice, setInterruptWait } from '../util/interrupt-notice.js';
import { keptReferencesFile } from '../metrics/sgsacc/kept-references.js';
import { mergeRunShards, type MergedRun } from './run-merge.js';
import type { ShardSpec } from './spec.js';

/** The script a shard process runs (a pipeline's worker entry), and Node's flags for it (tsx under the sources). */
export interface WorkerEntry {
  script: string;
  execArgv: string[];
}

/** One shard's files: its report, its per-turn (per-item) file, and its references when the run keeps them. */
export interface ShardFiles {
  report: string;
  turns: string;
  references?: string;
}

/** What runWorkers tells its caller besides the merged run: a library function never writes to stderr itself. */
export interface WorkersHooks {
  /** The shard processes are about to start: `count` of them. */
  started?(count: number): void;
  /** Turns (items) done over all shards, of the total they reported so far. */
  progress?(done: number, total: number): void;
  /** A line a shard process wrote on stderr (its warnings, notices, error), with the shard's number. */
  shardLine?(shard: number, count: number, line: string): void;
  /** A line for the user before any shard starts (the count an earlier run's shard files fix, resumeWorkerCount). */
  notice?(message: string): void;
}

export interface WorkersOptions {
  /** `--workers N`, or true for the default (an unfinished run's count, resumeWorkerCount; else one per visible GPU; else one per core). */
  workers: number | true;
  device: 'auto' | 'cpu' | 'cuda';
  /** `-o`: the merged report; the shards' files are kept beside it until the merge. */
  output: string;
  /** `--turns`: the merged per-turn / per-item file. */
  turns?: string;
  /**
   * The run's references (score): a file named by the user (each shard stores its own beside it, as
   * `NAME.shard-K-of-N.jsonl`), or the one kept beside --turns/-o (`kept`: each shard then keeps its
   * own beside its per-turn file, the rule a single process follows, keptReferencesFile), so a
   * resumed worker's turns keep their ground-truth scores.
   */
  references?: { file: string; kept: boolean };
  /** `--threads`, per worker when given; else the cores are split between the workers. */
  threads?: number;
  /** The script each shard process runs. */
  entry: WorkerEntry;
  /** The job of one shard (JSON, its entry's one argument): the run's options with the shard, its files and its threads. */
  job(shard: ShardSpec, files: ShardFiles, threads: number | undefined): unknown;
  hooks?: WorkersHooks;
  /** Called with the merged run before anything is written (mergeRunShards' beforeWrite). */
  beforeWrite?: (merged: MergedRun) => void;
}

/** `run.json` -> `run.shard-2-of-4.json`: a shard's file beside the run's. */
export function shardFileName(file: string, index: number, count: number, suffix = ''): string {
  const ext = path.extname(file);
  return `${file.slice(0, file.length - ext.length)}.shard-${index}-of-${count}${suffix}${ext}`;
}

/**
 * The shard files an earlier `--workers` run left beside the run's files (`-o`, `--turns`, a named
 * `--references`), by their count M: every `STEM.shard-K-of-M*` in each file's folder, STEM being
 * the name shardFileName cuts (kept references sit beside a shard's per-turn file, so its stem
 * finds them too). A merged run removes them, so any left are an unfinished run's work.
 */
export function earlierShardFiles(runFiles: readonly (string | undefined)[]): Map<number, string[]> {
  const byCount = new Map<number, string[]>();
  const seen = new Set<string>();
  for (const file of runFiles) {
    if (!file) continue;
    const dir = path.dirname(file);
    const base = path.basename(file);
    const prefix = `${base.slice(0, base.length - path.extname(base).length)}.shard-`;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue; // no folder yet: nothing was run there
    }
    for (const name of names.sort()) {
      if (!name.startsWith(prefix)) continue;
      const m = /^(\d+)-of-(\d+)(?:\.|$)/.exec(name.slice(prefix.length));
      if (!m) continue;
      const index = Number(m[1]);
      const count = Number(m[2]);
      if (index < 1 || index > count) continue;
      const full = path.join(dir, name);
      if (seen.has(full)) continue;
      seen.add(full);
      byCount.set(count, [...(byCount.get(count) ?? []), full]);
    }
  }
  return byCount;
}

/** Shard files of one count as the patterns that name them all (`run.shard-*-of-4.json`), for a line the user can act on (or rm). */
function shardFilePatterns(files: readonly string[]): string {
  const patterns = [...new Set(files.map((f) => path.join(path.dirname(f), path.basename(f).replace(/\.shard-\d+-of-/, '.shard-*-of-'))))];
  return `${patterns.join(', ')} (${files.length} file${files.length === 1 ? '' : 's'})`;
}

/**
 * The `--workers` count of a run, given the shard files an earlier run left (earlierShardFiles).
 * The default count comes from the machine (its GPUs or cores), so a run resumed on another box
 * would otherwise get another count, cut the turns otherwise and ignore every saved shard: with
 * files of one count M and no count given, M is reused (and said in `notice`). Files of several
 * counts, or of another count than an explicit `--workers N`, are refused (one line naming them)
 * rather than recomputed beside them.
 */
export function resumeWorkerCount(requested: number | true, earlier: ReadonlyMap<number, readonly string[]>): { workers: number | true; notice?: string } {
  const counts = [...earlier.keys()].sort((a, b) => a - b);
  const others = counts.filter((c) => c !== requested);
  if (others.length === 0) return { workers: requested };
  const listed = (of: readonly number[]) => of.map((c) => `${c} shards: ${shardFilePatterns(earlier.get(c)!)}`).join('; ');
  if (requested === true) {
    if (counts.length === 1) {
      const m = counts[0];
      return { workers: m, notice: `resuming the earlier run of --workers ${m} from its shard files (${shardFilePatterns(earlier.get(m)!)}): ${m} workers, not this machine's default` };
    }
    throw new InputError(`shard files of ${counts.length} earlier --workers runs with different counts (${listed(counts)}): give --workers M for the run to resume and delete the other runs' files`);
  }
  const resume = others.length === 1 ? `give --workers ${others[0]} to resume that run` : 'give --workers M to resume one of those runs';
  throw new InputError(`--workers ${requested}, but an earlier run left shard files of another count (${listed(others)}): ${resume}, or delete them to start over with ${requested}`);
}

/** GPUs the workers may use: CUDA_VISIBLE_DEVICES when set, else nvidia-smi's list; none without either. */
export function visibleGpus(env: NodeJS.ProcessEnv = process.env): string[] {
  const set = env.CUDA_VISIBLE_DEVICES;
  if (set !== undefined) return set.split(',').map((s) => s.trim()).filter((s) => s !== '' && s !== '-1');
  const smi = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' });
  if (smi.status !== 0 || typeof smi.stdout !== 'string') return [];
  return smi.stdout.split('\n').filter((l) => /^GPU \d+/.test(l)).map((_, i) => String(i));
}

interface Plan {
  count: number;
  /** Per worker: the environment it adds (CUDA_VISIBLE_DEVICES) and its --threads. */
  env: Record<string, string>[];
  threads: (number | undefined)[];
}

/**
 * How many workers and what each gets. CUDA (or auto with GPUs visible): one worker per GPU by
 * default, each pinned to one with CUDA_VISIBLE_DEVICES (several per GPU, round robin, when N is
 * larger). CPU: N workers (default: one per core) splitting the cores, so N workers never
 * oversubscribe the machine more than one process with all cores does.
 */
export function planWorkers(opts: Pick<WorkersOptions, 'workers' | 'device' | 'threads'>, gpus: string[], cores = availableParallelism()): Plan {
  const onGpu = opts.device === 'cuda' || (opts.device === 'auto' && gpus.length > 0);
  if (opts.device === 'cuda' && gpus.length === 0 && opts.workers === true) {
    throw new InputError('--workers with --device cuda: no visible GPU to count (CUDA_VISIBLE_DEVICES is empty and nvidia-smi finds none); give --workers N');
  }
  const count = opts.workers === true ? (onGpu ? gpus.length : cores) : opts.workers;
  const env = Array.from({ length: count }, (_, k): Record<string, string> => (onGpu && gpus.length > 0 ? { CUDA_VISIBLE_DEVICES: gpus[k % gpus.length] } : {}));
  const threads = Array.from({ length: count }, () => opts.threads ?? (onGpu ? undefined : Math.max(1, Math.floor(cores / count))));
  return { count, env, threads };
}

/** How long stopped shard processes get to save and exit before they are killed (SIGKILL). */
const SHARD_STOP_GRACE_MS = 20_000;

interface Worker {
  index: number;
  child: ChildProcess;
  done: number;
  total: number;
  lastError?: string;
  exit: Promise<number | null>;
}

/** Each shard's files, beside the run's: `run.json` -> `run.shard-2-of-4.json`. */
function shardFiles(opts: WorkersOptions, n: number): ShardFiles[] {
  return Array.from({ length: n }, (_, i) => {
    const k = i + 1;
    // Always a per-turn file, even when the caller asked for none: it is what makes a shard resumable.
    const turns = opts.turns ? shardFileName(opts.turns, k, n) : shardFileName(opts.output, k, n, '.turns').replace(/\.json$/, '.jsonl');
    const refs = opts.references;
    return { report: shardFileName(opts.output, k, n), turns, references: refs ? (refs.kept ? keptReferencesFile({ turns }) : shardFileName(refs.file, k, n)) : undefined };
  });
}

/**
 * `--workers N`: runs shards 1..N of one run as child processes of this one (each runs `entry` with
 * its job), reports their combined progress, and merges their reports into the run's report. When
 * a child fails, the others are stopped (SIGTERM: they save what they finished) and the child's
 * error is raised (exit 2). Shard files stay beside `output` until the merge succeeds, so running
 * the same call again resumes every shard where it stopped (with the count of those files when
 * none is given, resumeWorkerCount: the default would differ on another machine).
 *
 * Signals: this process ends only after every shard process has. Under the CLI (whose handlers
 * print the notice and exit, src/util/interrupt-notice.ts exitOnSignals) that is the interrupt
 * wait set here; in a program with no SIGINT/SIGTERM handler of its own, the signal is forwarded to
 * the shards, they are waited for, and the signal is then raised again on this process, which ends
 * as it would have without us.
 */
export async function runWorkers(opts: WorkersOptions): Promise<MergedRun> {
  // Before the machine decides the count: an unfinished run's shards fix it (resumeWorkerCount).
  const count = resumeWorkerCount(opts.workers, earlierShardFiles([opts.output, opts.turns, opts.references?.file]));
  if (count.notice) opts.hooks?.notice?.(count.notice);
  const plan = planWorkers({ ...opts, workers: count.workers }, opts.device === 'cpu' ? [] : visibleGpus());
  const n = plan.count;
  const files = shardFiles(opts, n);
  const mergedReferences = opts.references?.file;
  const workers: Worker[] = [];
  let failed: Worker | undefined;
  const running = () => workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  const stopAll = (signal: NodeJS.Signals = 'SIGTERM') => {
    for (const w of running()) w.child.kill(signal);
  };
  // Whatever ends this process through process.exit: the children go with us.
  const stopOnExit = (): void => stopAll();
  process.once('exit', stopOnExit);
  // Every shard process stopped and waited for (each saves what it finished on SIGTERM/SIGINT); one
  // that does not end within the grace period is killed, and waited for too.
  let interrupted = false;
  const stopAndWait = async (signal: NodeJS.Signals): Promise<void> => {
    interrupted = true;
    stopAll(signal);
    const killer = setTimeout(() => stopAll('SIGKILL'), SHARD_STOP_GRACE_MS);
    await Promise.all(workers.map((w) => w.exit));
    clearTimeout(killer);
  };
  const ownSignals = process.listenerCount('SIGINT') === 0 && process.listenerCount('SIGTERM') === 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    void stopAndWait(signal).finally(() => {
      removeSignalHandlers();
      process.kill(process.pid, signal);
    });
  };
  const removeSignalHandlers = (): void => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  if (ownSignals) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  setInterruptWait(() => stopAndWait('SIGTERM'));
  setInterruptNotice(
    () => `interrupted: every shard stopped; their work is saved in ${path.dirname(path.resolve(files[0].turns))} (*.shard-K-of-${n}.*); resume with: ${resumeCommand()}`,
  );
  try {
    opts.hooks?.started?.(n);
    for (let i = 0; i < n; i++) {
      const job = opts.job({ index: i + 1, count: n }, files[i], plan.threads[i]);
      // The job is the entry's one argument: visible in `ps`, so a shard's files name its process.
      const child = spawn(process.execPath, [...opts.entry.execArgv, opts.entry.script, JSON.stringify(job)], {
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        env: { ...process.env, ...plan.env[i], TODEVAL_WORKER: '1' },
      });
      const w: Worker = { index: i + 1, child, done: 0, total: 0, // 'close', not 'exit': its stderr is read to the end first (the error line says why it failed).
        exit: new Promise((resolve) => child.once('close', (code) => resolve(code))) };
      workers.push(w);
      let pending = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          if (line.startsWith('todeval: ')) w.lastError = line.slice('todeval: '.length);
          opts.hooks?.shardLine?.(w.index, n, line);
        }
      });
      child.on('message', (m: { type?: string; done?: number; total?: number }) => {
        if (m?.type !== 'progress') return;
        w.done = m.done ?? w.done;
        w.total = m.total ?? w.total;
        opts.hooks?.progress?.(
          workers.reduce((s, x) => s + x.done, 0),
          workers.reduce((s, x) => s + x.total, 0),
        );
      });
      void w.exit.then((code) => {
        if (code !== 0 && !failed) {
          failed = w;
          stopAll();
        }
      });
    }
    await Promise.all(workers.map((w) => w.exit));
    // Stopped by a signal: the process ends (130/143, or by the signal raised again) once the wait
    // above is over; neither a "shard failed" error nor a merge of the parts may come first.
    if (interrupted) await new Promise<never>(() => undefined);
  } finally {
    process.off('exit', stopOnExit);
    if (!interrupted) removeSignalHandlers();
    setInterruptNotice(undefined);
    setInterruptWait(undefined);
  }
  if (failed) {
    const why = failed.lastError ?? `exit code ${String(failed.child.exitCode ?? failed.child.signalCode)}`;
    throw new InputError(`shard ${failed.index}/${n} failed: ${why}; the other shards were stopped. Their work is saved: run the same command again to resume`);
  }
  const merged = mergeRunShards(files.map((f) => f.report), { output: opts.output, turns: opts.turns, references: mergedReferences, beforeWrite: opts.beforeWrite });
  for (const f of files) for (const file of [f.report, f.turns, f.references]) if (file && existsSync(file)) rmSync(file);
  return merged;
}
