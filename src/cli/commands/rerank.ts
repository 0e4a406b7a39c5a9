import type { Command } from 'commander';
import type { DatasetName } from '../../adapters/load.js';
import { findDataDir } from '../../data/data-dir.js';
import { loadSgsaccData } from '../../metrics/sgsacc/dataset.js';
import { runRerankPipeline } from '../../pipeline/rerank.js';
import { progressBar, progressOption, type ProgressMode } from '../../report/progress.js';
import { formatSignature } from '../../util/signature.js';
import { RANK_BY, type RankBy } from '../../rerank/index.js';
import { InputError } from '../../util/errors.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { addDatasetOptions, addInputOption, addLimitOption, addReportFileOption, addTurnsOption, datasetLoadOptions, jsonToStdout, reportFileFrom, reportSkipped, type DatasetFlags } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';
import { formatRerankSummary } from '../../rerank/summary.js';
import { runCommandInWorkers } from '../workers-run.js';
import { addShardOptions, applySlurmArrayShard, type ShardFlags } from '../shard-options.js';
import { addContextControlOptions } from '../sgsacc-options.js';

interface RerankFlags extends NliCliFlags, DatasetFlags, ShardFlags {
  input: string;
  dataset: DatasetName;
  turns?: string;
  output?: string;
  json?: string | boolean;
  limit?: number;
  context: boolean;
  contextControl: boolean;
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
  addContextControlOptions(cmd, true);
  addShardOptions(cmd, 'items');
  cmd.addOption(progressOption());
  addNliOptions(cmd);
  cmd.action(async (flags: RerankFlags) => {
    // In a Slurm array task with no --shard, the task's shard (src/shard/spec.ts shardFromSlurmArray).
    applySlurmArrayShard(flags);
    if (flags.workers !== undefined) await runRerankInWorkers(flags);
    else await runRerank(flags);
  });
}

/** `rerank --workers N`: the same command as N shards in child processes, merged (src/shard/workers.ts). */
async function runRerankInWorkers(flags: RerankFlags): Promise<void> {
  const merged = await runCommandInWorkers(flags, { flag: '--input', file: flags.input });
  if (merged.kind !== 'rerank') return;
  if (jsonToStdout(flags)) process.stdout.write(JSON.stringify(merged.report, null, 2) + '\n');
  else {
    process.stdout.write(formatRerankSummary(merged.report.summary, merged.report.items.length, merged.report.signature.contextControl === true));
    process.stdout.write(`signature: ${formatSignature(merged.report.signature)}\n`);
  }
}

/** Flags -> the rerank pipeline -> the summary (or JSON) on stdout. */
async function runRerank(flags: RerankFlags): Promise<void> {
  if (!(RANK_BY as readonly string[]).includes(flags.rankBy)) {
    throw new InputError(`--rank-by must be one of ${RANK_BY.join(', ')} (got "${flags.rankBy}")`);
  }
  const rankBy = flags.rankBy as RankBy;
  const reportFile = reportFileFrom(flags);
  refuseOutputOverInput({ '--turns': flags.turns, '-o/--output': reportFile, '--cache': flags.cache }, { '--input': flags.input, '--dialogues': flags.dialogues, '--schema': flags.schema });
  if (flags.shard && !reportFile) throw new InputError('--shard needs -o/--output: todeval merge joins the shard reports');
  const dataDir = findDataDir(flags.dataDir)?.dir;
  // Called once the input is read: its errors come first, as they are the cheaper to fix.
  const loadData = () => {
    if (!dataDir && !(flags.schema && (flags.dialogues || flags.dataset === 'generic'))) {
      throw new InputError('no data directory: pass --data-dir, set TODEVAL_DATA, or give --schema (and --dialogues)');
    }
    if (flags.dataset === 'generic' && !flags.dialogues) {
      throw new InputError('--dataset generic needs --dialogues <turns.jsonl> and --schema <schema.json>');
    }
    // Invalid dataset turns only matter if an item points at them (reported then).
    return loadSgsaccData({ ...datasetLoadOptions(flags, dataDir), skipInvalid: true });
  };
  const bar = progressBar('rerank |{bar}| {value}/{total} items | ETA {eta_formatted}', {}, flags.progress);
  try {
    const doc = await runRerankPipeline({
      ...flags,
      loadData,
      dataDir,
      systems: flags.systems?.split(',').map((s) => s.trim()).filter(Boolean),
      hallucination: flags.hallucination === true || rankBy === 'omission-hallucination' || rankBy === 'omission-sentences',
      rankBy,
      turnsFile: flags.turns,
      reportFile,
      nli: nliOptionsFrom(flags),
      hooks: {
        skipped: (invalid) => reportSkipped('item', invalid),
        notice: (m) => process.stderr.write(`todeval: ${m}\n`),
        progress: (done, total) => (bar?.isActive ? bar.update(done) : bar?.start(total, done)),
      },
    });
    bar?.stop();
    if (jsonToStdout(flags)) process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
    else {
      process.stdout.write(formatRerankSummary(doc.summary, doc.items.length, doc.signature.contextControl === true));
      process.stdout.write(`signature: ${formatSignature(doc.signature)}\n`);
    }
  } finally {
    bar?.stop();
  }
}
