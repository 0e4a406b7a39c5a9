import type { Command } from 'commander';
import type { DatasetName } from '../../adapters/load.js';
import { findDataDir } from '../../data/data-dir.js';
import { runRerankPipeline, type RerankHooks, type RerankPipelineOptions } from '../../pipeline/rerank.js';
import type { RerankReport, RerankShardReport } from '../../shard/rerank-merge.js';
import { barProgress, progressBar, progressOption, type ProgressMode } from '../../util/progress/bar.js';
import { RANK_BY, RERANK_DEFAULTS } from '../../rerank/index.js';
import { formatRerankReport } from '../../rerank/summary.js';
import { stderrHooks } from '../hooks.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { addDatasetOptions, addInputOption, addLimitOption, addReportFileOption, addTurnsOption, datasetLoadOptions, jsonToStdout, rankByFrom, reportSkipped, type DatasetFlags } from '../options.js';
import { checkRunOutputs, type RunOutputFlags } from '../output-guard.js';
import { workersDisplay } from '../workers-run.js';
import { addShardedAction, addShardOptions, requireShardOutput, type ShardFlags } from '../shard-options.js';
import { addContextControlOptions } from '../sgsacc-options.js';

interface RerankFlags extends NliCliFlags, DatasetFlags, ShardFlags, RunOutputFlags {
  input: string;
  dataset: DatasetName;
  limit?: number;
  context?: boolean;
  contextControl?: boolean;
  systems?: string;
  progress: ProgressMode;
  hallucination?: boolean;
  rankBy: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('rerank')
    .description('choose, per item, the candidate utterance that realises the most dialogue actions (SGSAcc fidelity)')
  addInputOption(cmd, 'JSONL items (schemas/rerank-input.schema.json)', { required: true });
  addDatasetOptions(cmd, {
    defaultDataset: 'sgd',
    datasetHelp: 'schema and rules the actions belong to',
    splitHelp: 'dataset split for dataset_id lookups',
    dialoguesHelp: 'your own dialogues file/folder for dataset_id lookups',
    schemaHelp: 'schema file (instead of the data dir)',
    skipInvalidHelp: 'list invalid items on stderr and go on',
    inputAlias: false, // --input names the items here
  });
  addLimitOption(cmd, 'items');
  addTurnsOption(cmd, 'per-item results (JSONL after a signature line), written as chunks finish; re-running resumes');
  addReportFileOption(cmd, 'write {signature, summary, items} as one JSON file')
    .option('--no-context', 'do not retry with context + slot description in the premise')
    .option('--systems <names>', 'comma-separated tie-break order of systems (default: order of each item\'s candidates)')
    .option('--hallucination', 'also check facts => text per candidate: the references it realised must entail it (four-way label)')
    .option('--rank-by <order>', `${RANK_BY.join(' | ')}: most actions realised, or no omission then no hallucination, or no omission then fewest unsupported sentences (both imply --hallucination); then likelihood`, 'fidelity');
  addContextControlOptions(cmd, RERANK_DEFAULTS.contextControl);
  addShardOptions(cmd, 'items');
  addNliOptions(cmd.addOption(progressOption()));
  addShardedAction(cmd, { inWorkers: runRerankInWorkers, inProcess: runRerankInProcess });
}

/** The flags as runRerankPipeline's options, every output checked against every input (and held) before any work. */
function rerankOptionsFrom(flags: RerankFlags, hooks?: RerankHooks): RerankPipelineOptions {
  const rankBy = rankByFrom(flags.rankBy);
  const { output: reportFile } = checkRunOutputs(flags, { flag: '--input', file: flags.input });
  const dataDir = findDataDir(flags.dataDir)?.dir;
  return {
    input: flags.input,
    dataset: flags.dataset,
    limit: flags.limit,
    skipInvalid: flags.skipInvalid,
    context: flags.context,
    contextControl: flags.contextControl,
    hallucination: flags.hallucination,
    rankBy,
    shard: flags.shard,
    load: datasetLoadOptions(flags, dataDir),
    dataDir,
    systems: flags.systems?.split(',').map((s) => s.trim()).filter(Boolean),
    // --turns names the per-item file here (rerank has items, not turns).
    itemsFile: flags.turns,
    reportFile,
    nli: nliOptionsFrom(flags),
    hooks,
  };
}

function printReport(flags: RerankFlags, report: RerankReport | RerankShardReport): void {
  process.stdout.write(jsonToStdout(flags) ? JSON.stringify(report, null, 2) + '\n' : formatRerankReport(report));
}

/** `rerank --workers N`: flags -> runRerankWorkers (the same run as N shard processes, merged) -> the summary (or JSON). */
async function runRerankInWorkers(flags: RerankFlags): Promise<void> {
  const display = workersDisplay(flags.progress);
  try {
    // Imported here, not at the top: only --workers runs need the shard machinery (some 30 modules
    // that every plain run compiled at its start).
    const { runRerankWorkers } = await import('../../pipeline/workers.js');
    printReport(flags, await runRerankWorkers(rerankOptionsFrom(flags), { workers: flags.workers!, hooks: display.hooks }));
  } finally {
    display.stop();
  }
}

/** Flags -> the rerank pipeline -> the summary (or JSON) on stdout. */
async function runRerankInProcess(flags: RerankFlags): Promise<void> {
  const bar = progressBar('rerank |{bar}| {value}/{total} items | ETA {eta_formatted}', {}, flags.progress);
  const options = rerankOptionsFrom(flags, {
    skipped: (invalid) => reportSkipped('item', invalid),
    notice: stderrHooks.notice,
    progress: barProgress(bar),
  });
  requireShardOutput(flags, options.reportFile);
  try {
    const doc = await runRerankPipeline(options);
    bar?.stop();
    printReport(flags, doc);
  } finally {
    bar?.stop();
  }
}
