import { existsSync } from 'node:fs';
import type { SgsaccReport } from '../metrics/sgsacc/report.js';
import { InputError } from '../util/errors.js';
import { parseJsonText, readTextFile } from '../util/json-file.js';

/** What a score report covers: how many turns, and how much of its ground-truth section. */
export interface ReportCoverage {
  turns: number;
  /** Turns the ground-truth section covers (0 without one). */
  groundTruthTurns: number;
}

export function scoreReportCoverage(r: Pick<SgsaccReport, 'dataset' | 'groundTruth'>): ReportCoverage {
  return { turns: r.dataset.turns, groundTruthTurns: r.groundTruth?.coverage.turns ?? 0 };
}

/** The coverage of the score report at `file`, or undefined when there is none (no file, another command's, not JSON). */
export function existingScoreReport(file: string): ReportCoverage | undefined {
  if (!existsSync(file)) return undefined;
  let r: Partial<SgsaccReport> | undefined;
  try {
    r = parseJsonText<Partial<SgsaccReport>>(readTextFile(file, 'report'), file);
  } catch {
    return undefined; // not a report of ours: replaced as any output is
  }
  const metric = r?.signature?.metric;
  if (metric !== 'sgsacc' || typeof r?.dataset?.turns !== 'number') return undefined;
  return scoreReportCoverage(r as SgsaccReport);
}

/**
 * Why `next` would weaken the complete report at `file`, or undefined. A report is complete when its
 * ground-truth section covers all its turns; replacing it with one of fewer turns, or with less of
 * the ground truth, loses work a user may not be able to redo cheaply.
 */
export function weakerReport(existing: ReportCoverage, next: ReportCoverage): string | undefined {
  const complete = existing.turns > 0 && existing.groundTruthTurns === existing.turns;
  if (!complete) return undefined;
  if (next.turns < existing.turns) return `it holds a complete report of ${existing.turns} turns and this run covers ${next.turns}`;
  if (next.groundTruthTurns < next.turns) {
    return `it holds a complete report of ${existing.turns} turns and this run's ground truth covers ${next.groundTruthTurns} of ${next.turns}`;
  }
  return undefined;
}

/** Refuses (one line, exit 2) to replace the complete score report at `file` with a weaker one, unless `force`. */
export function refuseWeakerReport(file: string | undefined, next: ReportCoverage, force: boolean | undefined, after = ''): void {
  if (!file || force) return;
  const existing = existingScoreReport(file);
  const why = existing && weakerReport(existing, next);
  if (why) throw new InputError(`not replaced: ${why}${after}; give --force to replace it, or another -o`, { file });
}
