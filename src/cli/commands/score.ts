import { Option, type Command } from 'commander';
import type { DatasetName } from '../../adapters/load.js';
import { formatSgsaccReport, GRANULARITIES, SGSACC_DEFAULTS, type SgsaccReport } from '../../metrics/sgsacc/index.js';
import { runScorePipeline, type ScorePipelineHooks, type ScorePipelineOptions } from '../../pipeline/score.js';
import { pairsProgress, progressOption, type ProgressMode } from '../../util/progress/bar.js';
import { stderrHooks } from '../hooks.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { addDatasetOptions, addLimitOption, addReportFileOption, addTurnsOption, datasetDataDir, datasetLoadOptions, jsonToStdout, positiveInt, type DatasetFlags } from '../options.js';
import { checkRunOutputs, type RunOutputFlags } from '../output-guard.js';
import { addPredictionsOptions } from '../predictions-options.js';
import { addContextControlOptions, referenceSelectionOption, sgsaccSettingsOf, type SgsaccCliFlags } from '../sgsacc-options.js';
import { addShardedAction, addShardOptions, requireShardOutput, type ShardFlags } from '../shard-options.js';
import { workersDisplay } from '../workers-run.js';
import { addRunConfidenceOptions, runConfidenceFrom, type RunConfidenceFlags } from '../significance-options.js';

interface ScoreFlags extends NliCliFlags, DatasetFlags, ShardFlags, RunConfidenceFlags, SgsaccCliFlags, RunOutputFlags {
  dataset: DatasetName;
  input?: string;
  system?: string;
  limit?: number;
  references?: string;
  chunk: number;
  progress: ProgressMode;
  allowMissing?: boolean;
  force?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('score')
    .description('SGSAcc (with and without validation, seen/unseen), SER and BLEU of a system, or of the ground truth');
  addDatasetOptions(cmd, { skipInvalidHelp: 'list invalid dialogues/predictions on stderr and go on', inputAlias: false });
  addPredictionsOptions(cmd)
    .option('--system <name>', 'name of the system in the report (default: predictions file name)')
    .option('--references <file>', 'stored references (JSONL): reused when present, extended with missing turns (default: kept beside --turns, else -o, as NAME.references.jsonl)');
  addLimitOption(cmd, 'system turns');
  addTurnsOption(cmd, 'per-turn results (JSONL), written as chunks finish; re-running resumes');
  addReportFileOption(cmd, 'write the report as JSON')
    .option('--no-validation', 'keep turns whose ground truth fails validation (skips negative references)')
    .option('--no-context', 'do not retry with previous user turn + slot description in the premise')
    .addOption(referenceSelectionOption(SGSACC_DEFAULTS.score.referenceSelection))
    .option('--hallucination', 'also check facts => text (references entail the utterance): hallucination rate and a four-way label per turn')
    .addOption(new Option('--granularity <unit>', 'with --hallucination (implied by sentence): also check each sentence against each fact, and report the unsupported sentences').choices(GRANULARITIES))
    .option('--chunk <n>', 'turns per NLI call (larger batches on GPU)', positiveInt('--chunk'), 256)
    .option('--force', 'replace a complete report at -o with one of fewer turns or less of the ground truth');
  addContextControlOptions(cmd, SGSACC_DEFAULTS.score.contextControl);
  addRunConfidenceOptions(cmd);
  addShardOptions(cmd, 'turns');
  addNliOptions(cmd.addOption(progressOption()));
  addShardedAction(cmd, { inWorkers: runScoreInWorkers, inProcess: runScoreInProcess });
}

/** The flags as runScorePipeline's options, every output checked against every input (and held) before any work. */
function scoreOptionsFrom(flags: ScoreFlags, hooks?: ScorePipelineHooks): ScorePipelineOptions {
  const { output: reportFile, referencesFile, referencesKept } = checkRunOutputs(flags, { flag: '-i/--input', file: flags.input }, { file: flags.references });
  return {
    ...datasetLoadOptions(flags, datasetDataDir(flags)),
    ...sgsaccSettingsOf(flags),
    predictions: flags.input,
    allowMissing: flags.allowMissing,
    system: flags.system,
    limit: flags.limit,
    shard: flags.shard,
    chunkTurns: flags.chunk,
    referencesFile,
    referencesKept,
    turnsFile: flags.turns,
    reportFile,
    force: flags.force,
    confidence: runConfidenceFrom(flags),
    nli: nliOptionsFrom(flags),
    hooks,
  };
}

function printReport(flags: ScoreFlags, report: SgsaccReport): void {
  process.stdout.write(jsonToStdout(flags) ? JSON.stringify(report, null, 2) + '\n' : formatSgsaccReport(report));
}

/** `score --workers N`: flags -> runScoreWorkers (the same run as N shard processes, merged) -> the tables (or JSON). */
async function runScoreInWorkers(flags: ScoreFlags): Promise<void> {
  const display = workersDisplay(flags.progress);
  try {
    // Imported here, not at the top: only --workers runs need the shard machinery (some 30 modules
    // that every plain run compiled at its start).
    const { runScoreWorkers } = await import('../../pipeline/workers.js');
    printReport(flags, await runScoreWorkers(scoreOptionsFrom(flags), { workers: flags.workers!, hooks: display.hooks }));
  } finally {
    display.stop();
  }
}

/** Flags -> the score pipeline (runScorePipeline) -> the tables (or JSON) on stdout. */
async function runScoreInProcess(flags: ScoreFlags): Promise<void> {
  const progress = scoreProgress(flags);
  const options = scoreOptionsFrom(flags, progress);
  requireShardOutput(flags, options.reportFile);
  try {
    printReport(flags, await runScorePipeline(options));
  } finally {
    progress.scored();
  }
}

/** The progress bar (on a terminal, else lines or nothing as --progress says) as pipeline hooks, with the one-line notices; `scored` stops it. */
function scoreProgress(flags: ScoreFlags): ScorePipelineHooks & { scored(): void } {
  const bar = pairsProgress('score |{bar}| {value}/{total} turns | {pairs} pairs | {rate} pairs/s | ETA {eta_formatted}', flags.progress);
  return {
    ...stderrHooks,
    opened: (runner) => bar.countPairs(() => runner.stats().issued),
    // Started only now: a notice or a refused store before would otherwise print into the bar's line.
    started: ({ resumed, total }) => bar.start(total, resumed),
    progress: (done) => bar.update(done),
    warn: (message) => {
      bar.stop();
      stderrHooks.warn(message);
    },
    scored: () => bar.stop(),
  };
}
