import { gzipSync } from 'node:zlib';
import { TODEVAL_VERSION } from '../../util/version.js';
import type { ReportChart } from './charts.js';
import { CLIENT_SCRIPT } from './client.js';
import type { PageData } from './page-data.js';
import { vendorScripts } from './vendor.js';
import { VIEW_SCRIPT, views } from './views.js';

/** JSON that is safe inside a <script> element: no "</script", "<!--" or U+2028/2029 can end or bend it. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** Inline script text: a "</script" inside a library would close the element early ("<\/" means the same in JS). */
function scriptCode(code: string): string {
  return code.replace(/<\/script/gi, '<\\/script');
}

const STYLE = `
:root { --bad: #c62828; --warn: #ef6c00; --ok: #2e7d32; --info: #1565c0; --alone: #f9a825; --line: #ddd; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1280px; padding: 16px 24px 48px; color: #222; overflow-wrap: anywhere; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.sub { color: #666; margin: 0 0 12px; }
.banner { border: 2px solid var(--bad); background: #fdecea; padding: 10px 14px; border-radius: 6px; margin: 12px 0; }
.banner strong { color: var(--bad); } .banner ul { margin: 4px 0 0; padding-left: 20px; }
.js-note { border: 1px solid var(--line); background: #f7f7f7; padding: 6px 10px; border-radius: 4px; }
#load-error { border: 2px solid var(--bad); padding: 8px; }
table { border-collapse: collapse; }
#runs { width: 100%; font-variant-numeric: tabular-nums; }
#runs th, #runs td { border-bottom: 1px solid var(--line); padding: 4px 6px; text-align: right; }
#runs td { white-space: nowrap; }
#runs th[scope=row] { text-align: left; font-weight: 600; }
#runs thead th { vertical-align: bottom; }
#runs thead th:first-child { text-align: left; }
#runs thead button { font: inherit; font-weight: 600; border: 0; background: none; cursor: pointer; padding: 0; text-align: inherit; color: inherit; }
#runs tr.run > * { border-bottom: 0; }
#runs tr.detail td { text-align: left; white-space: normal; color: #555; font-size: 12.5px; padding-top: 0; }
ul.facts { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 2px 18px; }
.lbl { color: #777; }
#runs tr.standin td { font-style: italic; color: #555; }
#runs td.sig { font-weight: 700; }
#significance { font-size: 12.5px; margin: 6px 0 0; } #significance-notes { font-size: 12.5px; color: #666; margin: 2px 0 0; padding-left: 20px; }
.tag { display: inline-block; margin-left: 6px; padding: 0 5px; border-radius: 3px; background: var(--bad); color: #fff; font-size: 11px; font-style: normal; font-weight: 500; white-space: nowrap; }
dl#signatures dt { font-weight: 600; margin-top: 6px; } dl#signatures dd { margin: 0 0 0 12px; }
dl#signatures code { font-size: 12px; word-break: break-all; }
#charts { display: block; }
figure.chart { margin: 0 0 24px; width: 100%; }
figure.chart .vega-target { width: 100%; }
figure.chart figcaption { color: #666; font-size: 12px; }
.chart-sort { display: flex; gap: 4px; white-space: nowrap; align-items: center; font-size: 12px; margin: 0 0 4px; max-width: 100%; }
.chart-sort select { font: inherit; max-width: 100%; min-width: 0; flex: 0 1 auto; }
.filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: center; margin-bottom: 8px; }
.filters label { display: inline-flex; gap: 4px; align-items: center; max-width: 100%; white-space: nowrap; }
.filters select, .filters input { font: inherit; padding: 3px 6px; max-width: 100%; min-width: 0; flex: 0 1 auto; }
.pager { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 8px 0; }
article.turn { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin: 10px 0; min-width: 0; }
article.turn header .svc { color: #666; }
.prev, .utt { margin: 4px 0; }
mark.unsupported { background: #ffe08a; }
mark.contradicted { background: #ffb3b3; }
.mark-note { font-size: 0.8em; color: #555; }
.side-by-side { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 360px), 1fr)); gap: 12px; }
.run-view { border-top: 3px solid var(--line); padding-top: 4px; min-width: 0; }
.run-view h4 { margin: 4px 0; font-size: 14px; }
.badge { display: inline-block; margin: 1px 0 1px 6px; padding: 0 6px; border-radius: 10px; font-size: 11px; color: #fff; font-weight: 500; line-height: 1.6; }
.badge.bad { background: var(--bad); } .badge.warn { background: var(--warn); } .badge.ok { background: var(--ok); } .badge.info { background: var(--info); } .badge.alone { background: var(--alone); color: #222; }
table.actions { width: 100%; font-size: 12.5px; table-layout: fixed; }
table.actions th { text-align: left; color: #666; font-weight: 500; }
table.actions td, table.actions th { padding: 2px 4px; border-bottom: 1px solid #f0f0f0; vertical-align: top; overflow-wrap: break-word; }
table.actions th:nth-child(1) { width: 28%; } table.actions th:nth-child(3), table.actions th:nth-child(4) { width: 5.2em; } table.actions th:nth-child(5) { width: 7.4em; }
table.actions .num { text-align: right; font-variant-numeric: tabular-nums; }
table.actions tr.missed td { color: var(--bad); }
table.actions tr.alone td.verdict { color: #8d6e00; font-weight: 600; }
footer { margin-top: 32px; color: #888; font-size: 12px; }
@media (max-width: 720px) {
  body { padding: 12px 12px 32px; }
  #runs thead { display: none; }
  #runs, #runs tbody, #runs tr, #runs th, #runs td { display: block; width: 100%; }
  #runs tr.run { border-top: 2px solid var(--line); padding-top: 4px; }
  #runs tr.run td { display: flex; justify-content: space-between; gap: 12px; padding: 1px 0; border: 0; }
  #runs tr.run td::before { content: attr(data-label); color: #777; font-style: normal; }
  #runs tr.run th { padding: 2px 0; }
  #runs tr.detail td { padding: 2px 0 8px; border-bottom: 0; }
  /* An action per block: the act, its two probabilities and the verdict on a line, the reference under them. */
  table.actions thead { display: none; }
  table.actions, table.actions tbody { display: block; }
  table.actions tr { display: grid; grid-template-columns: minmax(0, 1fr) auto auto auto; column-gap: 8px; padding: 3px 0; border-bottom: 1px solid #f0f0f0; }
  table.actions td { border: 0; padding: 0; min-width: 0; }
  table.actions td:nth-child(1) { grid-column: 1; grid-row: 1; }
  table.actions td:nth-child(2) { grid-column: 1 / -1; grid-row: 2; color: #444; }
  table.actions td:nth-child(3) { grid-column: 2; grid-row: 1; }
  table.actions td:nth-child(4) { grid-column: 3; grid-row: 1; }
  table.actions td:nth-child(5) { grid-column: 4; grid-row: 1; }
  table.actions td:nth-child(3)::before { content: "plain "; color: #999; }
  table.actions td:nth-child(4)::before { content: "ctx "; color: #999; }
}
`;

/**
 * One self-contained HTML file: styles, the chart libraries, the page script and the data are all
 * inline, so it opens offline and can be attached to a paper's supplementary material. The turn data
 * is gzip-compressed and base64-encoded (the browser unpacks it with DecompressionStream): a full SGD
 * test set stays a few megabytes.
 *
 * The first paint is in the HTML itself, rendered by the same views the page script uses: the runs
 * table, the warnings, the signatures and the first page of failing turns read with JavaScript off
 * (and in a screenshot taken right after load); the script adds sorting, filters, charts and exports.
 */
export function renderReportHtml(data: PageData, charts: ReportChart[]): string {
  const v = views();
  const esc = v.esc;
  const vendors = vendorScripts();
  const packed = gzipSync(Buffer.from(JSON.stringify(data)), { level: 9 }).toString('base64');
  const warnings = data.warnings.length
    ? `<div class="banner" role="alert" id="warning-banner"><strong>Warning</strong><ul>${data.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul></div>`
    : '';
  const sig = data.significance;
  const significance = sig
    ? `<p class="sub" id="significance">${esc(sig.caption)}</p>` +
      (sig.notes.length ? `<ul id="significance-notes">${sig.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : '')
    : '';
  const first = v.defaultFilter(data);
  const matching = v.filterTurns(data.turns, first);
  // Filters with nothing to choose from are not drawn (a MultiWOZ report has no services or acts to filter by).
  const services = unique(data.turns.flatMap((t) => t.services));
  const acts = unique(data.turns.flatMap((t) => t.acts));
  const signatures = data.runs
    .map((r) => `<dt>${esc(`${r.name}${r.standin ? ' (stand-in model)' : ''} — ${r.file}`)}</dt><dd><code>${esc(r.signatureText)}</code></dd>`)
    .join('');
  const figures = charts
    .map(
      (c) =>
        `<figure class="chart" id="chart-${esc(c.id)}"><div class="vega-target"></div>` +
        (c.note ? `<figcaption class="note">${esc((c.spec ? 'Note: ' : `${c.title}: `) + c.note)}</figcaption>` : '') +
        (c.caption ? `<figcaption>${esc(c.caption)}</figcaption>` : '') +
        '</figure>',
    )
    .join('\n');
  const options = (values: { value: string; text: string }[], selected: string) =>
    values.map((o) => `<option value="${esc(o.value)}"${o.value === selected ? ' selected' : ''}>${esc(o.text)}</option>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="todeval ${esc(TODEVAL_VERSION)}">
<title>${esc(data.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${esc(data.title)}</h1>
<p class="sub">${data.runs.length} run${data.runs.length === 1 ? '' : 's'}: ${data.runs.map((r) => esc(r.name)).join(', ')} · written by todeval ${esc(TODEVAL_VERSION)}; scores are comparable only under equal signatures.</p>
${warnings}
<noscript><p class="js-note">JavaScript is off: the runs, the signatures and the first ${v.PAGE_SIZE} failing turns are shown; sorting, filters, charts and exports need JavaScript.</p></noscript>
<div id="load-error" hidden></div>
<h2>Runs</h2>
<table id="runs">${v.runsTableHtml(data.runs, data.columns, null)}</table>
${significance}
<h2>Signatures</h2>
<dl id="signatures">${signatures}</dl>
${charts.length ? `<h2>Charts</h2>
<div id="charts">
${figures}
</div>` : ''}
<h2>Failing turns</h2>
<p class="sub" id="turn-counts">${esc(v.turnCountsText(data.turnCounts, data.turns))}</p>
<div class="filters" id="filters" hidden>
  <label>Show <select id="f-show">${options(v.showOptions(data), first.show)}</select></label>
  <label>Run <select id="f-run"><option value="">any run</option>${options(
    data.runs.flatMap((r, i) => (r.hasTurns ? [{ value: String(i), text: r.name }] : [])),
    '',
  )}</select></label>
  <label${services.length ? '' : ' hidden'}>Service <select id="f-service"><option value="">any service</option>${options(services, '')}</select></label>
  <label${acts.length ? '' : ' hidden'}>Act <select id="f-act"><option value="">any act</option>${options(acts, '')}</select></label>
  <label>Text <input id="f-text" type="search" placeholder="id, utterance, reference"></label>
  <button type="button" id="export-csv">CSV</button>
  <button type="button" id="export-jsonl">JSONL</button>
</div>
<div class="pager"${data.turns.length ? '' : ' hidden'}><button type="button" id="prev-page" disabled hidden>‹ previous</button><span id="turn-status">${esc(v.statusText(matching, data.turns.length, 0))}</span><button type="button" id="next-page" hidden>next ›</button></div>
<div id="turn-list">${v.turnListHtml(matching, data.runs, 0)}</div>
<footer>Charts: ${vendors.map((x) => `${x.name} ${esc(x.version)}`).join(', ')} (inlined). Failing: a run finds the turn unfaithful (an action's reference is not entailed), validated or not, or (<code>score --granularity sentence</code>) a sentence of it that no fact supports, marked in the utterance as unsupported or contradicted. Excluded: the ground truth failed validation, so the turn is left out of validated SGSAcc (its unvalidated verdict is still shown). Rescued: only the context premise (previous user turn + slot description + utterance) entailed the reference. Context alone: that premise without the utterance entails it too (withdrawn with the context-only control on). Exports: the turns the filters select, one CSV row per turn and run, one JSON line per turn; <code>todeval report --csv</code> writes the unfiltered list.</footer>
<script type="application/json" id="todeval-charts">${scriptJson(charts)}</script>
<script type="text/plain" id="todeval-data">${packed}</script>
${vendors.map((x) => `<script>/* ${x.name} ${esc(x.version)} */\n${scriptCode(x.code)}</script>`).join('\n')}
<script>${scriptCode(VIEW_SCRIPT)}</script>
<script>${scriptCode(CLIENT_SCRIPT)}</script>
</body>
</html>
`;
}

function unique(xs: string[]): { value: string; text: string }[] {
  return [...new Set(xs)].sort().map((x) => ({ value: x, text: x }));
}
