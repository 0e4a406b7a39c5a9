import { runSteps, type Steps } from '../../metrics/significance/steps.js';
import { runSignificanceSteps, type RunSignificance, type RunSignificanceOptions } from '../run-significance.js';
import { reportCharts } from './charts.js';
import { buildPageData, type PageData } from './page-data.js';
import { renderReportHtml } from './render.js';
import { runItemSources } from './run-items.js';
import { loadRun, loadTurns, matchTurnsToRuns, uniqueNames, type ReportRun, type TurnsFile } from './runs.js';

export { loadRun, loadTurns, matchTurnsToRuns, type ReportRun, type TurnsFile, type TurnLine } from './runs.js';
export { buildPageData, signatureWarnings, type PageData, type PageTurn, type TurnReason } from './page-data.js';
export { reportCharts, type ReportChart } from './charts.js';
export { renderReportHtml } from './render.js';
export { defaultTurnsCsv, views, VIEW_SCRIPT, type TurnFilter, type Views } from './views.js';
export { RUN_COLUMNS, type RunColumn } from './columns.js';
export { runItemSources } from './run-items.js';

export interface HtmlReportInput {
  runs: string[];
  turns?: string[];
  /** evaluate's --items files of evaluate runs (score runs' statistics come from their per-turn files). */
  items?: string[];
  title?: string;
  /**
   * The ± and "vs baseline" columns (docs/significance.md), computed when some run has per-item
   * statistics; false leaves them out.
   */
  significance?: RunSignificanceOptions | false;
}

/** Run reports (+ per-turn files) -> the HTML text of one self-contained report. */
export interface HtmlReport {
  html: string;
  runs: ReportRun[];
  turnsByRun: Map<number, TurnsFile>;
  listedTurns: number;
  data: PageData;
  significance: RunSignificance | null;
}

export function buildHtmlReport(input: HtmlReportInput): HtmlReport {
  return runSteps(buildHtmlReportSteps(input));
}

/** buildHtmlReport as steps: its resampling (the significance columns) pauses between blocks (steps.ts). */
export function* buildHtmlReportSteps(input: HtmlReportInput): Steps<HtmlReport> {
  const runs = input.runs.map(loadRun);
  uniqueNames(runs);
  const turnsByRun = matchTurnsToRuns(runs, (input.turns ?? []).map(loadTurns));
  let significance: RunSignificance | null = null;
  if (input.significance !== false) {
    const sources = runItemSources(runs, turnsByRun, input.items ?? []);
    significance = yield* runSignificanceSteps(runs.map((r, i) => ({ name: r.name, source: sources[i], confidence: r.confidence })), input.significance ?? {});
  }
  const data = buildPageData(runs, turnsByRun, input.title ?? 'todeval report', significance);
  const html = renderReportHtml(data, reportCharts(runs, turnsByRun));
  return { html, runs, turnsByRun, listedTurns: data.turns.length, data, significance };
}
