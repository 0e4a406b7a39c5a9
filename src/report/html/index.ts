import { reportCharts } from './charts.js';
import { buildPageData, type PageData } from './page-data.js';
import { renderReportHtml } from './render.js';
import { loadRun, loadTurns, matchTurnsToRuns, uniqueNames, type ReportRun, type TurnsFile } from './runs.js';

export { loadRun, loadTurns, matchTurnsToRuns, type ReportRun, type TurnsFile, type TurnLine } from './runs.js';
export { buildPageData, signatureWarnings, type PageData, type PageTurn, type TurnReason } from './page-data.js';
export { reportCharts, type ReportChart } from './charts.js';
export { renderReportHtml } from './render.js';
export { defaultTurnsCsv, views, VIEW_SCRIPT, type TurnFilter, type Views } from './views.js';
export { RUN_COLUMNS, type RunColumn } from './columns.js';

export interface HtmlReportInput {
  runs: string[];
  turns?: string[];
  title?: string;
}

/** Run reports (+ per-turn files) -> the HTML text of one self-contained report. */
export function buildHtmlReport(input: HtmlReportInput): { html: string; runs: ReportRun[]; turnsByRun: Map<number, TurnsFile>; listedTurns: number; data: PageData } {
  const runs = input.runs.map(loadRun);
  uniqueNames(runs);
  const turnsByRun = matchTurnsToRuns(runs, (input.turns ?? []).map(loadTurns));
  const data = buildPageData(runs, turnsByRun, input.title ?? 'todeval report');
  const html = renderReportHtml(data, reportCharts(runs, turnsByRun));
  return { html, runs, turnsByRun, listedTurns: data.turns.length, data };
}
