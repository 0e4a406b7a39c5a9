import path from 'node:path';
import { Option, type Command } from 'commander';
import type { DatasetName } from '../../adapters/load.js';
import { keptReferencesFile } from '../../metrics/sgsacc/kept-references.js';
import { formatSgsaccReport, GRANULARITIES, loadSgsaccData, type Granularity, type ReferenceSelection, type SgsaccReport } from '../../metrics/sgsacc/index.js';
import { createNliRunner, type NliRunner } from '../../nli/runner.js';
import { runScorePipeline, type ScorePipelineHooks } from '../../pipeline/score.js';
import { refuseWeakerReport, scoreReportCoverage } from '../../pipeline/report-guard.js';
import { selectScoreTurns, type ScoreSelection } from '../../pipeline/score-selection.js';
import { progressBar, progressOption, type ProgressMode } from '../../report/progress.js';
import { reportToParent } from '../../report/worker-progress.js';
import type { ScoreShardReport, ScoreTallies } from '../../shard/score-merge.js';
import type { ShardSpec } from '../../shard/spec.js';
import { writeJsonAtomic } from '../../util/atomic-write.js';
import { InputError } from '../../util/errors.js';
import { savedTurnsNotice, setInterruptNotice } from '../../util/interrupt-notice.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { addDatasetOptions, addLimitOption, addReportFileOption, addTurnsOption, datasetDataDir, datasetLoadOptions, jsonToStdout, positiveInt, reportFileFrom, reportSkipped, type DatasetFlags } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';
import { addPredictionsOptions } from '../predictions.js';
import { checkPredictionIds, readPredictions } from '../../pipeline/predictions.js';
import { stderrHooks } from '../hooks.js';
import { addContextControlOptions, referenceSelectionOption } from '../sgsacc-options.js';
import { addShardOptions, applySlurmArrayShard, shardBlock, type ShardFlags } from '../shard-options.js';
import { runCommandInWorkers } from '../workers-run.js';
import { addRunConfidenceOptions, runConfidenceFrom, type RunConfidenceFlags } from '../significance-options.js';

interface ScoreFlags extends NliCliFlags, DatasetFlags, ShardFlags, RunConfidenceFlags {
  dataset: DatasetName;
  input?: string;
  system?: string;
  limit?: number;
  references?: string;
  turns?: string;
  output?: string;
  json?: string | boolean;
  validation: boolean;
  context: boolean;
  referenceSelection: ReferenceSelection;
  hallucination?: boolean;
  granularity?: Granularity;
  contextControl: boolean;
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
    .addOption(referenceSelectionOption())
    .option('--hallucination', 'also check facts => text (references entail the utterance): hallucination rate and a four-way label per turn')
    .addOption(
      new Option('--granularity <unit>', 'with --hallucination (implied by sentence): also check each sentence against each fact, and report the unsupported sentences').choices(
        GRANULARITIES,
      ),
    )
    .option('--chunk <n>', 'turns per NLI call (larger batches on GPU)', positiveInt('--chunk'), 256)
    .option('--force', 'replace a complete report at -o with one of fewer turns or less of the ground truth');
  addContextControlOptions(cmd, false);
  addRunConfidenceOptions(cmd);
  addShardOptions(cmd, 'turns');
  cmd.addOption(progressOption());
  addNliOptions(cmd);
  cmd.action(async (flags: ScoreFlags) => {
    // In a Slurm array task with no --shard, the task's shard (src/shard/spec.ts shardFromSlurmArray).
    applySlurmArrayShard(flags);
    if (flags.workers !== undefined) await runScoreInWorkers(flags);
    else await runScore(flags);
  });
}

/** `score --workers N`: the same command as N shards in child processes, merged (src/shard/workers.ts). */
async function runScoreInWorkers(flags: ScoreFlags): Promise<void> {
  refuseConfidenceInParts(flags);
  const output = reportFileFrom(flags);
  const merged = await runCommandInWorkers(flags, { flag: '-i/--input', file: flags.input }, {
    references: { file: flags.references },
    // The merged report replaces a complete one at -o only if it is as complete (or with --force).
    beforeWrite: (run) => {
      if (run.kind === 'score') refuseWeakerReport(output, scoreReportCoverage(run.report), flags.force);
    },
  });
  if (merged.kind !== 'score') return;
  process.stdout.write(jsonToStdout(flags) ? JSON.stringify(merged.report, null, 2) + '\n' : formatSgsaccReport(merged.report));
}

/** An interval of part of the turns is not the run's: --confidence needs them all. */
function refuseConfidenceInParts(flags: ScoreFlags): void {
  if (!flags.confidence || (!flags.shard && flags.workers === undefined)) return;
  throw new InputError(`--confidence needs the whole run in one process: drop ${flags.shard ? '--shard' : '--workers'}`);
}

async function runScore(flags: ScoreFlags): Promise<void> {
  const reportFile = reportFileFrom(flags);
  // Without --references, the references are kept beside --turns (or -o): a resumed or repeated run
  // then still has every turn's ground truth.
  const kept = flags.references ? undefined : keptReferencesFile({ turns: flags.turns, output: reportFile });
  const referencesFile = flags.references ?? kept;
  refuseOutputOverInput(
    { '--turns': flags.turns, '-o/--output': reportFile, [kept ? '--references (kept beside --turns/-o)' : '--references']: referencesFile, '--cache': flags.cache },
    { '-i/--input': flags.input, '--dialogues': flags.dialogues, '--schema': flags.schema },
  );
  if (flags.shard && !reportFile) throw new InputError('--shard needs -o/--output: todeval merge joins the shard reports');
  refuseConfidenceInParts(flags);
  const data = loadSgsaccData(datasetLoadOptions(flags, datasetDataDir(flags)));
  reportSkipped('input', data.loaded.invalid);
  const predictions = flags.input ? readPredictions(flags.input, flags.skipInvalid, stderrHooks) : undefined;
  const selection = selectScoreTurns(data.loaded.turns, { limit: flags.limit, shard: flags.shard, predictions });
  if (flags.input) {
    checkPredictionIds({
      file: flags.input,
      missing: selection.missing,
      extra: selection.extra,
      source: data.loaded.source,
      validIds: selection.allTurns.map((t) => t.id),
      matched: selection.turns.length,
      limit: flags.limit,
      allowMissing: flags.allowMissing,
      skipInvalid: flags.skipInvalid,
    }, stderrHooks);
    if (selection.missing.length > 0) {
      process.stderr.write(`todeval: ${selection.missing.length} turns have no prediction and are not scored (listed in the JSON report)\n`);
    }
  }
  // Before the model loads: a run of fewer turns than the complete report at -o would replace it.
  refuseWeakerReport(reportFile, { turns: selection.turns.length, groundTruthTurns: selection.turns.length }, flags.force);
  const system = flags.system ?? (flags.input ? path.basename(flags.input).replace(/\.(jsonl?|json)$/, '') : 'ground-truth');
  const total = selection.turns.length;

  const runner = await createNliRunner(nliOptionsFrom(flags));
  const progress = scoreProgress(flags, total, runner);
  try {
    const { report, tallies } = await runScorePipeline(selection, {
      data,
      dataset: flags.dataset,
      runner,
      predictions: flags.input && predictions ? { file: flags.input, byId: predictions } : undefined,
      system,
      limit: flags.limit,
      shard: flags.shard,
      validation: flags.validation,
      context: flags.context,
      referenceSelection: flags.referenceSelection,
      hallucination: flags.hallucination === true,
      ...(flags.granularity === 'sentence' ? { granularity: flags.granularity } : {}),
      contextControl: flags.contextControl,
      chunkTurns: flags.chunk,
      referencesFile,
      referencesKept: kept !== undefined,
      turnsFile: flags.turns,
      confidence: runConfidenceFrom(flags),
      hooks: progress.hooks,
    });
    progress.stop();
    // Its references were kept, so the ground truth covers every turn; checked again on what was computed.
    refuseWeakerReport(reportFile, scoreReportCoverage(report), flags.force, flags.turns ? `; this run's per-turn results are in ${flags.turns}` : '');
    const written = flags.shard && reportFile ? shardReport(report, tallies, selection, flags.shard, reportFile, { turns: flags.turns, references: referencesFile }) : report;
    if (reportFile) writeJsonAtomic(reportFile, written);
    process.stdout.write(jsonToStdout(flags) ? JSON.stringify(written, null, 2) + '\n' : formatSgsaccReport(written));
  } finally {
    progress.stop();
    await runner.close();
  }
}

/** The progress bar (on a terminal), the line for Ctrl-C and the parent's progress of a --workers shard, as pipeline hooks. */
function scoreProgress(flags: ScoreFlags, total: number, runner: NliRunner): { hooks: ScorePipelineHooks; stop: () => void } {
  const bar = progressBar('score |{bar}| {value}/{total} turns | {pairs} pairs | {rate} pairs/s | ETA {eta_formatted}', { etaBuffer: 50 }, flags.progress);
  const started = Date.now();
  let lastDone = 0;
  const updateBar = (turnsDone?: number) => {
    if (!bar) return;
    const issued = runner.stats().issued;
    const secs = Math.max(0.001, (Date.now() - started) / 1000);
    lastDone = turnsDone ?? lastDone;
    bar.update(lastDone, { pairs: issued, rate: (issued / secs).toFixed(1) });
  };
  let ticker: NodeJS.Timeout | undefined;
  const stop = () => {
    if (ticker) clearInterval(ticker);
    bar?.stop();
  };
  const hooks: ScorePipelineHooks = {
    started: ({ resumed, saved }) => {
      setInterruptNotice(savedTurnsNotice('turns', flags.turns, saved, total));
      if (resumed > 0) process.stderr.write(`todeval: resuming ${flags.turns}: ${resumed} of ${total} turns already scored\n`);
      // Started only now: a notice or a refused store above would otherwise print into the bar's line.
      lastDone = resumed;
      bar?.start(total, resumed, { pairs: 0, rate: '0.0' });
      reportToParent(resumed, total);
      ticker = bar ? setInterval(() => updateBar(), 1000) : undefined;
    },
    progress: (done) => {
      updateBar(done);
      reportToParent(done, total);
    },
    notice: (message) => process.stderr.write(`todeval: ${message}\n`),
    warn: (message) => {
      stop();
      process.stderr.write(`todeval: warning: ${message}\n`);
    },
  };
  return { hooks, stop };
}

/** A shard's report adds what todeval merge needs to give the unsharded numbers exactly: counts, not percentages. */
function shardReport(
  report: SgsaccReport,
  tallies: ScoreTallies,
  selection: ScoreSelection,
  shard: ShardSpec,
  reportFile: string,
  files: { turns?: string; references?: string },
): ScoreShardReport {
  return {
    ...report,
    shard: {
      ...shardBlock(shard, reportFile, { turns: files.turns, references: files.references }),
      positions: selection.missing.map((id) => selection.positionOf.get(id)!),
      erroneousAt: (report.ser.erroneousTurns ?? []).map((id) => selection.positionOf.get(id)!),
      tallies,
    },
  };
}
