import { statSync } from 'node:fs';
import path from 'node:path';
import { runStepsAsync } from '../metrics/significance/steps.js';
import { buildHtmlReportSteps, defaultTurnsCsv, type HtmlReport, type HtmlReportInput } from '../report/html/index.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';

export interface ReportPipelineOptions extends HtmlReportInput {
  /** The HTML file to write (.html or .htm). */
  output: string;
  /** Also the failing turns as CSV (the page's CSV button with no filter set). */
  csv?: string;
}

export interface ReportResult extends Omit<HtmlReport, 'html'> {
  /** Size of the HTML file written. */
  bytes: number;
  /** Seconds from reading the runs to the page written. */
  seconds: number;
  /** Some run was scored with a stand-in model (its SGSAcc columns are not SGSAcc). */
  standinRuns: boolean;
  /** The CSV written, with its rows (one per failing turn and run). */
  csv?: { file: string; rows: number };
}

/** The page must be an .html file and the CSV another file: checked first (a caller may check before it draws a seed). */
export function checkReportOutputs(output: string, csv?: string): void {
  if (!output.toLowerCase().endsWith('.html') && !output.toLowerCase().endsWith('.htm')) {
    throw new InputError('-o/--output must name an .html file', { file: output });
  }
  if (csv && path.resolve(csv) === path.resolve(output)) throw new InputError('--csv and -o/--output name the same file', { file: csv });
}

/**
 * `todeval report` as a library call: run reports (+ per-turn files, per-item statistics) -> one
 * self-contained HTML page (and the failing turns as CSV), each written atomically. The resampling
 * of the significance columns yields to the event loop (runStepsAsync), so a signal handler
 * (Ctrl-C, SIGTERM) still runs within a second.
 */
export async function runReportPipeline(o: ReportPipelineOptions): Promise<ReportResult> {
  checkReportOutputs(o.output, o.csv);
  const started = performance.now();
  const { html, ...report } = await runStepsAsync(
    buildHtmlReportSteps({ runs: o.runs, turns: o.turns, items: o.items, title: o.title, significance: o.significance, allowPartial: o.allowPartial }),
  );
  // Written to a temporary file and renamed: an interrupted run never leaves half a report.
  writeFileAtomic(o.output, html);
  const bytes = statSync(o.output).size;
  const seconds = (performance.now() - started) / 1000;
  let csv: ReportResult['csv'];
  if (o.csv) {
    const text = defaultTurnsCsv(report.data);
    writeFileAtomic(o.csv, text);
    csv = { file: o.csv, rows: text.split('\r\n').length - 2 };
  }
  return { ...report, bytes, seconds, standinRuns: report.runs.some((r) => r.standin), csv };
}
