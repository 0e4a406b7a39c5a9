import { InputError } from '../../util/errors.js';
import { runSteps, type Steps } from '../../metrics/significance/steps.js';
import { runSignificanceSteps, type RunSignificance, type RunSignificanceOptions } from '../stats/run-significance.js';
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
  /**
   * Accept a per-turn file that covers fewer turns than its run report (a run cut short), its
   * statistics then marked partial; without it such a file is refused.
   */
  allowPartial?: boolean;
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
  const partial = partialTurns(runs, turnsByRun, input.allowPartial === true);
  let significance: RunSignificance | null = null;
  if (input.significance !== false) {
    const sources = runItemSources(runs, turnsByRun, input.items ?? []);
    significance = yield* runSignificanceSteps(runs.map((r, i) => ({ name: r.name, source: sources[i], confidence: r.confidence })), input.significance ?? {});
    significance?.notes.push(...partial);
  }
  const data = buildPageData(runs, turnsByRun, input.title ?? 'todeval report', significance);
  // Without SGSAcc in any run (a MultiWOZ-only report), its charts' "not shown" lines would only be noise.
  const charts = reportCharts(runs, turnsByRun).filter((c) => c.spec || runs.some((r) => r.sgsacc));
  const html = renderReportHtml(data, charts);
  return { html, runs, turnsByRun, listedTurns: data.turns.length, data, significance };
}

/**
 * A per-turn file must cover its run: one with fewer turns than the run report counts (a run cut
 * short, a file truncated) would put statistics of some turns beside the table's figure of all of
 * them. Refused, naming both files and the counts, unless allowed; then one note per such run says
 * its statistics are partial. One with more turns is always refused: the per-turn store's
 * signature names no --limit (a run of the same system over other turns resumes the same file and
 * adds its own), and the matching leaves the shard out (a --shard K/M report matches the per-turn
 * file merged from all shards), so the ± and p-values would be of turns the table's figure never
 * counted.
 */
export function partialTurns(runs: readonly ReportRun[], turnsByRun: ReadonlyMap<number, TurnsFile>, allow: boolean): string[] {
  const notes: string[] = [];
  for (const [i, tf] of turnsByRun) {
    const want = runs[i].counts?.turns;
    if (want === undefined || tf.turns.length === want) continue;
    if (tf.turns.length > want) {
      throw new InputError(
        `holds ${tf.turns.length} turns, its run report ${runs[i].file} counts ${want}: a run over other turns (another --limit or --shard) wrote to the same per-turn file; pass the report of the run that covers all of them, or score this run into a per-turn file of its own`,
        { file: tf.file },
      );
    }
    if (!allow) {
      throw new InputError(
        `covers ${tf.turns.length} of the ${want} turns of its run report ${runs[i].file}: pass the complete per-turn file, or --allow-partial to show statistics of these turns only (marked partial)`,
        { file: tf.file },
      );
    }
    notes.push(`${runs[i].name}: partial: its ± and p-values come from ${tf.turns.length} of its ${want} turns (--allow-partial; ${tf.file}), its table figures from all of them`);
  }
  return notes;
}
