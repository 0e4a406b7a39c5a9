import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SgsaccReport } from '../metrics/sgsacc/index.js';
import type { NliRunnerOptions } from '../nli/runner.js';
import { builtTwinFile } from '../nli/worker-entry.js';
import type { RerankReport } from '../shard/rerank-merge.js';
import type { MergedRun } from '../shard/run-merge.js';
import type { ShardSpec } from '../shard/spec.js';
import { runWorkers, type ShardFiles, type WorkerEntry, type WorkersHooks } from '../shard/workers.js';
import { InputError } from '../util/errors.js';
import { resumeCommand } from '../util/interrupt-notice.js';
import { refuseWeakerReport, scoreReportCoverage } from './report-guard.js';
import { runRerankPipeline, type RerankPipelineOptions } from './rerank.js';
import { runScorePipeline, type ScorePipelineOptions } from './score.js';

/** How a run is split into shard processes (`--workers`, `--threads`) and what it reports on the way. */
export interface WorkersRunOptions {
  /** How many shard processes, or true for the default (an unfinished run's count, else one per visible GPU, else one per core: src/shard/workers.ts). */
  workers: number | true;
  /** Combined progress, and each shard process's stderr lines (its warnings, notices, error). */
  hooks?: WorkersHooks;
}

/**
 * One shard process's work: a product's options, already holding its shard, its files and its
 * threads (JSON: what crosses into the process). src/pipeline/shard-worker.ts runs it.
 */
export type ShardJob =
  | { product: 'score'; options: Omit<ScorePipelineOptions, 'hooks'>; resume: string }
  | { product: 'rerank'; options: Omit<RerankPipelineOptions, 'hooks' | 'loadData'>; resume: string };

/**
 * The shard worker beside this file: the built one under dist/; from the sources, a current build's
 * twin where one is named ($TODEVAL_CURRENT_BUILD, as the tests' globalSetup sets it), else the
 * source run through tsx.
 */
function shardWorkerEntry(): WorkerEntry {
  const here = fileURLToPath(import.meta.url);
  const ext = path.extname(here);
  if (ext !== '.ts') return { script: path.join(path.dirname(here), `shard-worker${ext}`), execArgv: [] };
  const twin = builtTwinFile(import.meta.url, 'shard-worker');
  return twin ? { script: twin, execArgv: [] } : { script: path.join(path.dirname(here), 'shard-worker.ts'), execArgv: ['--import', 'tsx'] };
}

/** The runner options a shard process gets: the run's, less the callbacks (they cannot cross), with its share of the threads. */
function shardNli(nli: NliRunnerOptions, threads: number | undefined): NliRunnerOptions {
  const { onProgress: _p, notice: _n, ...rest } = nli;
  return { ...rest, threads };
}

/** The checks every `--workers` run makes before a process starts: a report to merge into, and no shard of its own. */
function checkWorkersRun(o: { reportFile?: string; shard?: ShardSpec }): string {
  if (!o.reportFile) throw new InputError("--workers needs -o/--output: the shards' files are kept beside it until they are merged");
  if (o.shard) throw new InputError('--workers runs every shard itself: give --workers or --shard, not both');
  return o.reportFile;
}

/**
 * `todeval score --workers N` as a library call: the run of runScorePipeline split into N shard processes
 * (src/pipeline/shard-worker.ts, each a runScorePipeline of its shard), merged into the report runScorePipeline
 * would have written (`todeval merge`'s exact counts) and returned. The run's references are kept
 * as one process keeps them: in `referencesFile` (beside it per shard), each shard's beside its
 * per-turn file when `referencesKept`. A complete report at `reportFile` is replaced only by one as
 * complete (or with `force`). This process ends only after every shard process has (runWorkers).
 */
export async function runScoreWorkers(o: ScorePipelineOptions, w: WorkersRunOptions): Promise<SgsaccReport> {
  const output = checkWorkersRun(o);
  // An interval of part of the turns is not the run's (as refuseConfidenceOfShard says of --shard).
  if (o.confidence) throw new InputError('--confidence needs the whole run in one process: drop --workers');
  const { hooks: _hooks, ...options } = o;
  const resume = resumeCommand();
  const merged = await runWorkers({
    workers: w.workers,
    device: o.nli.device ?? 'auto',
    threads: o.nli.threads,
    output,
    turns: o.turnsFile,
    references: o.referencesFile ? { file: o.referencesFile, kept: o.referencesKept === true } : undefined,
    entry: shardWorkerEntry(),
    job: (shard: ShardSpec, files: ShardFiles, threads: number | undefined): ShardJob => ({
      product: 'score',
      resume,
      // Each shard's references are its own file, named by the parent: not a kept one to start afresh.
      options: { ...options, shard, reportFile: files.report, turnsFile: files.turns, referencesFile: files.references, referencesKept: false, nli: shardNli(o.nli, threads) },
    }),
    hooks: w.hooks,
    beforeWrite: (run) => {
      if (run.kind === 'score') refuseWeakerReport(output, scoreReportCoverage(run.report), o.force);
    },
  });
  return reportOf(merged, 'score');
}

/**
 * `todeval rerank --workers N` as a library call: runRerankPipeline's run split into N shard
 * processes, merged into the report it would have written, and returned. The data is given by
 * `load` (a `loadData` function cannot cross into another process).
 */
export async function runRerankWorkers(o: RerankPipelineOptions, w: WorkersRunOptions): Promise<RerankReport> {
  const output = checkWorkersRun(o);
  if (o.loadData) throw new InputError('runRerankWorkers: give the data as `load` (where to read it), not `loadData`: a function cannot reach the shard processes');
  const { hooks: _hooks, loadData: _loadData, ...options } = o;
  const resume = resumeCommand();
  const merged = await runWorkers({
    workers: w.workers,
    device: o.nli.device ?? 'auto',
    threads: o.nli.threads,
    output,
    turns: o.itemsFile,
    entry: shardWorkerEntry(),
    job: (shard: ShardSpec, files: ShardFiles, threads: number | undefined): ShardJob => ({
      product: 'rerank',
      resume,
      options: { ...options, shard, reportFile: files.report, itemsFile: files.turns, nli: shardNli(o.nli, threads) },
    }),
    hooks: w.hooks,
  });
  return reportOf(merged, 'rerank');
}

function reportOf(merged: MergedRun, kind: 'score'): SgsaccReport;
function reportOf(merged: MergedRun, kind: 'rerank'): RerankReport;
function reportOf(merged: MergedRun, kind: 'score' | 'rerank'): SgsaccReport | RerankReport {
  // The shards are this run's own: a merge of another kind would be a bug, not bad input.
  if (merged.kind !== kind) throw new Error(`--workers merged ${merged.kind} shards for a ${kind} run`);
  return merged.report as SgsaccReport | RerankReport;
}

/** The printing a shard process does itself: each pipeline message as one stderr line, worded as the CLI words it (its parent passes them on, `[shard K/N]` first). */
const shardStderr = {
  warn: (message: string) => process.stderr.write(`todeval: warning: ${message}\n`),
  notice: (message: string) => process.stderr.write(`todeval: ${message}\n`),
  skipped: (kind: string, errors: readonly { oneLine(): string }[]) => {
    for (const e of errors) process.stderr.write(`todeval: warning: skipped invalid ${kind}: ${e.oneLine()}\n`);
  },
};

/** One shard process's work (src/pipeline/shard-worker.ts): the product's pipeline on its shard, which writes the shard's report. */
export async function runShardJob(job: ShardJob): Promise<void> {
  if (job.product === 'score') {
    await runScorePipeline({ ...job.options, hooks: shardStderr });
  } else {
    await runRerankPipeline({ ...job.options, hooks: { notice: shardStderr.notice, skipped: (invalid) => shardStderr.skipped('item', invalid) } });
  }
}
