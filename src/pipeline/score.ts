import path from 'node:path';
import type { LoadDatasetOptions } from '../adapters/load.js';
import { loadSgsaccData, type SgsaccReport } from '../metrics/sgsacc/index.js';
import { createNliRunner, type NliRunner, type NliRunnerOptions } from '../nli/runner.js';
import { reportToParent } from '../util/progress/worker-ipc.js';
import type { ScoreShardReport, ScoreTallies } from '../shard/score-merge.js';
import { shardBlock, type ShardSpec } from '../shard/spec.js';
import { writeJsonAtomic } from '../util/atomic-write.js';
import { savedTurnsNotice, setInterruptNotice } from '../util/interrupt-notice.js';
import type { PipelineHooks } from './hooks.js';
import { checkPredictionIds, readPredictions } from './predictions-check.js';
import { refuseWeakerReport, scoreReportCoverage } from './report-guard.js';
import { refuseConfidenceOfShard, scoreSelectedTurns, type ScoreTurnsHooks, type ScoreTurnsOptions } from './score-turns.js';
import { selectScoreTurns, type ScoreSelection } from './score-selection.js';
import type { SgsaccSettings } from '../metrics/sgsacc/index.js';

/** Options as scoreSelectedTurns takes them (limit, shard, chunkTurns, the stores, confidence), less what runScorePipeline opens itself. */
export interface ScorePipelineOptions
  extends Omit<LoadDatasetOptions, 'limit'>, SgsaccSettings, Pick<ScoreTurnsOptions, 'limit' | 'shard' | 'chunkTurns' | 'referencesFile' | 'referencesKept' | 'turnsFile' | 'confidence'> {
  /** The system's outputs (a predictions file); none: the ground truth is scored. */
  predictions?: string;
  /** Score the turns that have a prediction (missing ones are listed in the report), instead of refusing. */
  allowMissing?: boolean;
  /** Name of the system in the report (default: the predictions file's name, or `ground-truth`). */
  system?: string;
  /** The report (JSON, written atomically; a shard's carries what `todeval merge` needs); a complete one there is not replaced by a weaker one unless `force`. */
  reportFile?: string;
  force?: boolean;
  nli: NliRunnerOptions;
  hooks?: ScorePipelineHooks;
}

export interface ScorePipelineHooks extends ScoreTurnsHooks, Pick<PipelineHooks, 'skipped'> {
  /** The NLI runner is open, before any scoring (a progress display can read its pair counts). */
  opened?(runner: NliRunner): void;
  /** The scoring is over; next the report is checked against the one at `reportFile` and written. */
  scored?(): void;
}

/** The turns to score and the predictions by id, checked before any model loads. */
function selectTurns(o: ScorePipelineOptions, data: ReturnType<typeof loadSgsaccData>) {
  const predictions = o.predictions ? readPredictions(o.predictions, o.skipInvalid, o.hooks) : undefined;
  const selection = selectScoreTurns(data.loaded.turns, { limit: o.limit, shard: o.shard, predictions });
  if (o.predictions) {
    const { missing, extra } = selection;
    const validIds = selection.allTurns.map((t) => t.id);
    checkPredictionIds({ file: o.predictions, missing, extra, source: data.loaded.source, validIds, matched: selection.turns.length, limit: o.limit, allowMissing: o.allowMissing, skipInvalid: o.skipInvalid }, o.hooks);
    if (missing.length > 0) o.hooks?.notice?.(`${missing.length} turns have no prediction and are not scored (listed in the JSON report)`);
  }
  return { selection, predictions };
}

/**
 * `todeval score` from its inputs to its report: the data and predictions read and checked, the
 * turns selected, a runner opened (and closed whatever happens), scoreSelectedTurns, then the report
 * (a shard's with what `todeval merge` needs) checked against the one it would replace and written.
 */
export async function runScorePipeline(o: ScorePipelineOptions): Promise<SgsaccReport | ScoreShardReport> {
  // Before anything is read: scoreSelectedTurns refuses it too, but only once the model has loaded.
  refuseConfidenceOfShard(o);
  const data = loadSgsaccData({ dataset: o.dataset, dataDir: o.dataDir, split: o.split, input: o.input, schemaFile: o.schemaFile, skipInvalid: o.skipInvalid });
  o.hooks?.skipped?.('input', data.loaded.invalid);
  const { selection, predictions } = selectTurns(o, data);
  // Before the model loads: a run of fewer turns than the complete report at -o would replace it.
  refuseWeakerReport(o.reportFile, { turns: selection.turns.length, groundTruthTurns: selection.turns.length }, o.force);
  const system = o.system ?? (o.predictions ? path.basename(o.predictions).replace(/\.(jsonl?|json)$/, '') : 'ground-truth');
  const runner = await createNliRunner(o.nli);
  try {
    o.hooks?.opened?.(runner);
    const { report, tallies } = await scoreSelectedTurns(selection, {
      // The SGSAcc settings as given: scoreSelectedTurns resolves them once.
      ...o,
      data,
      runner,
      predictions: o.predictions && predictions ? { file: o.predictions, byId: predictions } : undefined,
      system,
      hooks: withRunNotices(o, selection.turns.length),
    });
    o.hooks?.scored?.();
    // Its references were kept, so the ground truth covers every turn; checked again on what was computed.
    refuseWeakerReport(o.reportFile, scoreReportCoverage(report), o.force, o.turnsFile ? `; this run's per-turn results are in ${o.turnsFile}` : '');
    const written = o.shard && o.reportFile ? shardReport(report, tallies, selection, o.shard, o.reportFile, { turns: o.turnsFile, references: o.referencesFile }) : report;
    if (o.reportFile) writeJsonAtomic(o.reportFile, written);
    return written;
  } finally {
    await runner.close();
  }
}

/**
 * The hooks scoreSelectedTurns gets: the caller's, after what every run of the command does as rerank's
 * pipeline does (the line Ctrl-C prints, the resume notice, a --workers parent's progress).
 */
function withRunNotices(o: ScorePipelineOptions, total: number): ScoreTurnsHooks {
  return {
    ...o.hooks,
    started: (state) => {
      setInterruptNotice(savedTurnsNotice('turns', o.turnsFile, state.saved, total));
      if (state.resumed > 0) o.hooks?.notice?.(`resuming ${o.turnsFile}: ${state.resumed} of ${total} turns already scored`);
      reportToParent(state.resumed, total);
      o.hooks?.started?.(state);
    },
    progress: (done, of) => {
      o.hooks?.progress?.(done, of);
      reportToParent(done, of);
    },
  };
}

/** A shard's report adds what todeval merge needs to give the unsharded numbers exactly: counts, not percentages. */
function shardReport(report: SgsaccReport, tallies: ScoreTallies, selection: ScoreSelection, shard: ShardSpec, reportFile: string, files: { turns?: string; references?: string }): ScoreShardReport {
  return {
    ...report,
    shard: {
      ...shardBlock(shard, reportFile, files),
      positions: selection.missing.map((id) => selection.positionOf.get(id)!),
      erroneousAt: (report.ser.erroneousTurns ?? []).map((id) => selection.positionOf.get(id)!),
      tallies,
    },
  };
}
