import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { progressBar, type ProgressMode } from '../util/progress/bar.js';
import { InputError } from '../util/errors.js';
import { resumeCommand, setInterruptNotice, setInterruptWait } from '../util/interrupt-notice.js';
import { keptReferencesFile } from '../metrics/sgsacc/kept-references.js';
import { mergeRunShards, type MergedRun } from './run-merge.js';

export interface WorkersOptions {
  /** The user's command line after `todeval` (process.argv less node and the script). */
  args: string[];
  /** `--workers N`, or true for the default (one per visible GPU; else one per core). */
  workers: number | true;
  device: 'auto' | 'cpu' | 'cuda';
  /** `-o`: the merged report; the shards' files are kept beside it until the merge. */
  output: string;
  /** `--turns`: the merged per-turn / per-item file. */
  turns?: string;
  /** `--references`: the merged references file (score). */
  references?: string;
  /**
   * The command stores references (score): without `--references`, each worker keeps its own beside
   * its per-turn file and the merged ones are kept beside `--turns` (else `-o`), the rule a single
   * process follows (keptReferencesFile), so a resumed worker's turns keep their ground-truth scores.
   */
  storesReferences?: boolean;
  /** `--threads`, per worker when given; else the cores are split between the workers. */
  threads?: number;
  /** `--progress`: the one combined bar (the children draw none). */
  progress?: ProgressMode;
  /** Called with the merged run before anything is written (mergeRunShards' beforeWrite). */
  beforeWrite?: (merged: MergedRun) => void;
}

/** Flags the parent sets per shard: the user's values are removed from the children's command line. */
const PER_SHARD_FLAGS: { names: string[]; value: 'required' | 'optional-number' | 'optional' }[] = [
  { names: ['--workers'], value: 'optional-number' },
  { names: ['--shard'], value: 'required' },
  { names: ['-o', '--output'], value: 'required' },
  // `--json` prints the merged report (the parent's job); `--json FILE` is the old -o.
  { names: ['--json'], value: 'optional' },
  { names: ['--out', '--turns'], value: 'required' },
  { names: ['--references'], value: 'required' },
  { names: ['--threads'], value: 'required' },
  { names: ['--progress'], value: 'required' },
];

/** The user's arguments without the per-shard flags, in `--flag value`, `--flag=value` or `-ovalue` form. */
export function withoutShardFlags(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    const spec = PER_SHARD_FLAGS.find((f) => f.names.some((n) => a === n || (n.startsWith('--') && a.startsWith(`${n}=`)) || (!n.startsWith('--') && a.startsWith(n) && a.length > n.length)));
    if (!spec) {
      out.push(a);
      continue;
    }
    const joined = a.includes('=') || (!a.startsWith('--') && a.length > 2);
    if (joined) continue;
    if (spec.value === 'required') i++;
    else if (spec.value === 'optional-number' && /^\d+$/.test(args[i + 1] ?? '')) i++;
    else if (spec.value === 'optional' && args[i + 1] !== undefined && !args[i + 1].startsWith('-')) i++;
  }
  return out;
}

/** `run.json` -> `run.shard-2-of-4.json`: a shard's file beside the run's. */
export function shardFileName(file: string, index: number, count: number, suffix = ''): string {
  const ext = path.extname(file);
  return `${file.slice(0, file.length - ext.length)}.shard-${index}-of-${count}${suffix}${ext}`;
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

function cliEntry(): { script: string; execArgv: string[] } {
  // This file is src/shard/workers.ts under tsx, dist/src/shard/workers.js when built.
  const here = fileURLToPath(import.meta.url);
  const ext = path.extname(here);
  const script = path.join(path.dirname(here), '..', 'cli', `main${ext}`);
  return { script, execArgv: ext === '.ts' ? ['--import', 'tsx'] : [] };
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

/**
 * `--workers N`: runs shards 1..N of the same command as child processes of this one, shows one
 * progress bar for all of them, and merges their reports into the run's report. When a child fails,
 * the others are stopped (SIGTERM: they save what they finished) and the child's error is raised
 * (exit 2). Shard files stay beside `-o` until the merge succeeds, so running the same command
 * again resumes every shard where it stopped.
 */
export async function runWorkers(opts: WorkersOptions): Promise<MergedRun> {
  const plan = planWorkers(opts, opts.device === 'cpu' ? [] : visibleGpus());
  const n = plan.count;
  const base = withoutShardFlags(opts.args);
  const files = Array.from({ length: n }, (_, i) => {
    const k = i + 1;
    // Always a per-turn file, even when the user asked for none: it is what makes a shard resumable.
    const turns = opts.turns ? shardFileName(opts.turns, k, n) : shardFileName(opts.output, k, n, '.turns').replace(/\.json$/, '.jsonl');
    return {
      report: shardFileName(opts.output, k, n),
      turns,
      references: opts.references ? shardFileName(opts.references, k, n) : opts.storesReferences ? keptReferencesFile({ turns }) : undefined,
    };
  });
  const mergedReferences = opts.references ?? (opts.storesReferences ? keptReferencesFile({ turns: opts.turns, output: opts.output }) : undefined);
  const { script, execArgv } = cliEntry();
  const bar = progressBar(`workers ${n} |{bar}| {value}/{total} | ETA {eta_formatted}`, { etaBuffer: 50 }, opts.progress);
  const workers: Worker[] = [];
  let failed: Worker | undefined;
  const stopAll = () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGTERM');
  };
  // Ctrl-C and SIGTERM leave through process.exit (src/cli/main.ts): the children go with us.
  process.once('exit', stopAll);
  // Ctrl-C or SIGTERM: this process exits only once every shard process has (each saves what it
  // finished on SIGTERM); one that does not within the grace period is killed, and waited for too.
  let interrupted = false;
  setInterruptWait(async () => {
    interrupted = true;
    stopAll();
    const killer = setTimeout(() => {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    }, SHARD_STOP_GRACE_MS);
    await Promise.all(workers.map((w) => w.exit));
    clearTimeout(killer);
  });
  setInterruptNotice(
    () => `interrupted: every shard stopped; their work is saved in ${path.dirname(path.resolve(files[0].turns))} (*.shard-K-of-${n}.*); resume with: ${resumeCommand()}`,
  );
  try {
    for (let i = 0; i < n; i++) {
      const f = files[i];
      const args = [...base, '--shard', `${i + 1}/${n}`, '-o', f.report, '--turns', f.turns, '--progress', 'none'];
      if (f.references) args.push('--references', f.references);
      if (plan.threads[i] !== undefined) args.push('--threads', String(plan.threads[i]));
      const child = spawn(process.execPath, [...execArgv, script, ...args], {
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        env: { ...process.env, ...plan.env[i], TODEVAL_WORKER: '1' },
      });
      const w: Worker = { index: i + 1, child, done: 0, total: 0, exit: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
      workers.push(w);
      let pending = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          if (line.startsWith('todeval: ')) w.lastError = line.slice('todeval: '.length);
          process.stderr.write(`[shard ${w.index}/${n}] ${line}\n`);
        }
      });
      child.on('message', (m: { type?: string; done?: number; total?: number }) => {
        if (m?.type !== 'progress') return;
        w.done = m.done ?? w.done;
        w.total = m.total ?? w.total;
        const total = workers.reduce((s, x) => s + x.total, 0);
        const done = workers.reduce((s, x) => s + x.done, 0);
        if (!bar) return;
        if (bar.isActive) bar.setTotal(total);
        else bar.start(total, 0);
        bar.update(done);
      });
      void w.exit.then((code) => {
        if (code !== 0 && !failed) {
          failed = w;
          stopAll();
        }
      });
    }
    await Promise.all(workers.map((w) => w.exit));
    // Stopped by a signal: src/cli/main.ts exits (130/143) once the wait above is over; neither a
    // "shard failed" error nor a merge of the parts may come first.
    if (interrupted) await new Promise<never>(() => undefined);
  } finally {
    bar?.stop();
    process.off('exit', stopAll);
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
