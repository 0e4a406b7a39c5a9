import type { SgsaccReport } from '../metrics/sgsacc/report.js';
import { InputError } from '../util/errors.js';
import { writeJsonAtomic } from '../util/atomic-write.js';
import { mergeRecordFiles, readShardReport, type LoadedShard } from './merge.js';
import { mergeRerankReports, type RerankReport, type RerankShardReport } from './rerank-merge.js';
import { mergeScoreReports, type ScoreShardReport } from './score-merge.js';
import { mergeEvaluateReports, type EvaluateReport, type EvaluateShardReport } from './evaluate-merge.js';
import { mergeGcdf1Reports, type Gcdf1LoadedShard } from './gcdf1-merge.js';
import type { Gcdf1Report } from '../metrics/gcdf1/report.js';

export type MergedRun =
  | { kind: 'score'; report: SgsaccReport }
  | { kind: 'rerank'; report: RerankReport }
  | { kind: 'evaluate'; report: EvaluateReport }
  | { kind: 'gcdf1'; report: Gcdf1Report };

export interface MergeRunOptions {
  /** The merged report (JSON). */
  output: string;
  /** The merged per-turn / per-item records, from the shards' record files. */
  turns?: string;
  /** The merged references (score shards run with --references). */
  references?: string;
  /** The whole run's per-dialogue records (gcdf1 shards), as `gcdf1 --per-dialogue` writes them. */
  perDialogue?: string;
  /** Called with the merged run before any file is written: throw to refuse it (a weaker report over a complete one). */
  beforeWrite?: (merged: MergedRun) => void;
}

/**
 * `todeval merge`: reads shard reports of one score, rerank, evaluate --sgsacc or gcdf1 run, checks they are the whole run
 * (merge.ts checkShardSet), joins the record files asked for, then writes the merged report. The
 * report is written last, so a refused or failed merge leaves no report claiming a whole run.
 */
export function mergeRunShards(files: readonly string[], opts: MergeRunOptions): MergedRun {
  const shards = files.map(readShardReport);
  const metric = shards[0].report.signature.metric;
  const other = shards.find((s) => s.report.signature.metric !== metric);
  if (other) throw new InputError(`a ${String(other.report.signature.metric)} shard cannot merge with ${String(metric)} shards (${shards[0].file})`, { file: other.file });
  if (opts.perDialogue && metric !== 'gcdf1') throw new InputError('--per-dialogue: only gcdf1 shards have per-dialogue records');
  let merged: MergedRun;
  if (metric === 'sgsacc') {
    const score = shards as LoadedShard<ScoreShardReport>[];
    merged = { kind: 'score', report: mergeScoreReports(score, { referencesFile: opts.references }) };
    opts.beforeWrite?.(merged);
    if (opts.turns) mergeRecordFiles(score, 'turns', 'todeval-sgsacc-turns', opts.turns);
    if (opts.references) mergeRecordFiles(score, 'references', 'todeval-sgsacc-references', opts.references);
  } else if (metric === 'sgsacc-rerank') {
    if (opts.references) throw new InputError('--references: rerank shards have no references to merge');
    const rerank = shards as LoadedShard<RerankShardReport>[];
    merged = { kind: 'rerank', report: mergeRerankReports(rerank) };
    opts.beforeWrite?.(merged);
    if (opts.turns) mergeRecordFiles(rerank, 'turns', 'todeval-rerank', opts.turns);
  } else if (metric === 'mwz-evaluate') {
    if (opts.turns || opts.references) throw new InputError(`${opts.turns ? '--turns' : '--references'}: evaluate shards have no record files to merge`);
    merged = { kind: 'evaluate', report: mergeEvaluateReports(shards as LoadedShard<EvaluateShardReport>[]) };
    opts.beforeWrite?.(merged);
  } else if (metric === 'gcdf1') {
    if (opts.turns || opts.references) throw new InputError(`${opts.turns ? '--turns' : '--references'}: gcdf1 shards have none (--per-dialogue writes the per-dialogue records)`);
    const gcdf1 = mergeGcdf1Reports(shards as LoadedShard<Gcdf1LoadedShard>[]);
    merged = { kind: 'gcdf1', report: gcdf1.report };
    opts.beforeWrite?.(merged);
    if (opts.perDialogue) writeJsonAtomic(opts.perDialogue, gcdf1.perDialogue);
  } else {
    throw new InputError(`cannot merge ${String(metric)} reports: only score, rerank, evaluate --sgsacc and gcdf1 shards merge`, { file: shards[0].file });
  }
  writeJsonAtomic(opts.output, merged.report);
  return merged;
}
