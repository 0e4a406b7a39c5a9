import { gzipSync } from 'node:zlib';
import { TODEVAL_VERSION } from '../../version.js';
import type { ReportChart } from './charts.js';
import { CLIENT_SCRIPT } from './client.js';
import type { PageData } from './page-data.js';
import { vendorScripts } from './vendor.js';

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** JSON that is safe inside a <script> element: no "</script", "<!--" or U+2028/2029 can end or bend it. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** Inline script text: a "</script" inside a library would close the element early ("<\/" means the same in JS). */
function scriptCode(code: string): string {
  return code.replace(/<\/script/gi, '<\\/script');
}

const STYLE = `
:root { --bad: #c62828; --warn: #ef6c00; --ok: #2e7d32; --info: #1565c0; --line: #ddd; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1280px; padding: 16px 24px 48px; color: #222; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.sub { color: #666; margin: 0 0 12px; }
.banner { border: 2px solid var(--bad); background: #fdecea; padding: 10px 14px; border-radius: 6px; margin: 12px 0; }
.banner strong { color: var(--bad); } .banner ul { margin: 4px 0 0; padding-left: 20px; }
#load-error { border: 2px solid var(--bad); padding: 8px; }
table { border-collapse: collapse; }
#runs { width: 100%; font-variant-numeric: tabular-nums; }
#runs th, #runs td { border-bottom: 1px solid var(--line); padding: 4px 6px; text-align: right; white-space: nowrap; }
#runs th[scope=row], #runs td.text { text-align: left; }
#runs thead th { vertical-align: bottom; white-space: normal; }
.scroll { overflow-x: auto; }
#runs thead button { font: inherit; font-weight: 600; border: 0; background: none; cursor: pointer; padding: 0; text-align: inherit; }
#runs tr.standin td { font-style: italic; color: #555; }
.tag { display: inline-block; margin-left: 6px; padding: 0 5px; border-radius: 3px; background: var(--bad); color: #fff; font-size: 11px; font-style: normal; }
dl#signatures dt { font-weight: 600; margin-top: 6px; } dl#signatures dd { margin: 0 0 0 12px; }
dl#signatures code { font-size: 12px; word-break: break-all; }
#charts { display: flex; flex-wrap: wrap; gap: 16px 32px; overflow-x: auto; }
figure.chart { margin: 0; } figure.chart figcaption { color: #666; font-size: 12px; max-width: 560px; }
.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 8px; }
.filters select, .filters input { font: inherit; padding: 3px 6px; }
.pager { display: flex; gap: 8px; align-items: center; margin: 8px 0; }
article.turn { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
article.turn header .svc { color: #666; }
.prev, .utt { margin: 4px 0; } .lbl { color: #777; }
.side-by-side { display: grid; grid-template-columns: repeat(auto-fit, minmax(360px, 1fr)); gap: 12px; }
.run-view { border-top: 3px solid var(--line); padding-top: 4px; }
.run-view h4 { margin: 4px 0; font-size: 14px; }
.badge { display: inline-block; margin-left: 6px; padding: 0 6px; border-radius: 10px; font-size: 11px; color: #fff; font-weight: 500; }
.badge.bad { background: var(--bad); } .badge.warn { background: var(--warn); } .badge.ok { background: var(--ok); } .badge.info { background: var(--info); }
table.actions { width: 100%; font-size: 12.5px; } table.actions th { text-align: left; color: #666; font-weight: 500; }
table.actions td, table.actions th { padding: 2px 4px; border-bottom: 1px solid #f0f0f0; vertical-align: top; }
table.actions td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.actions tr.missed td { color: var(--bad); }
footer { margin-top: 32px; color: #888; font-size: 12px; }
`;

/**
 * One self-contained HTML file: styles, the chart libraries, the page script and the data are all
 * inline, so it opens offline and can be attached to a paper's supplementary material. The turn data
 * is gzip-compressed and base64-encoded (the browser unpacks it with DecompressionStream): a full SGD
 * test set stays a few megabytes.
 */
export function renderReportHtml(data: PageData, charts: ReportChart[]): string {
  const vendors = vendorScripts();
  const packed = gzipSync(Buffer.from(JSON.stringify(data)), { level: 9 }).toString('base64');
  const warnings = data.warnings.length
    ? `<div class="banner" role="alert" id="warning-banner"><strong>Warning</strong><ul>${data.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul></div>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="todeval ${escapeHtml(TODEVAL_VERSION)}">
<title>${escapeHtml(data.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(data.title)}</h1>
<p class="sub">${data.runs.length} run${data.runs.length === 1 ? '' : 's'}: ${data.runs.map((r) => escapeHtml(r.name)).join(', ')} · written by todeval ${escapeHtml(TODEVAL_VERSION)}; scores are comparable only under equal signatures.</p>
${warnings}
<div id="load-error" hidden></div>
<h2>Runs</h2>
<div class="scroll"><table id="runs"></table></div>
<h2>Signatures</h2>
<dl id="signatures"></dl>
<h2>Charts</h2>
<div id="charts"></div>
<h2>Failing turns</h2>
<p class="sub" id="turn-counts"></p>
<div class="filters">
  <label>Run <select id="f-run"></select></label>
  <label>Service <select id="f-service"></select></label>
  <label>Act <select id="f-act"></select></label>
  <label>Reason <select id="f-reason"></select></label>
  <label>Text <input id="f-text" type="search" placeholder="id, utterance, reference"></label>
</div>
<div class="pager"><button type="button" id="prev-page">‹ previous</button><span id="turn-status"></span><button type="button" id="next-page">next ›</button></div>
<div id="turn-list"></div>
<footer>Charts: ${vendors.map((v) => `${v.name} ${escapeHtml(v.version)}`).join(', ')} (inlined). Unfaithful: an action's reference is not entailed. Excluded: the ground truth failed validation, so the turn is left out of validated SGSAcc. Rescued: only the context premise (previous user turn + slot description + utterance) entailed the reference.</footer>
<script type="application/json" id="todeval-charts">${scriptJson(charts)}</script>
<script type="text/plain" id="todeval-data">${packed}</script>
${vendors.map((v) => `<script>/* ${v.name} ${escapeHtml(v.version)} */\n${scriptCode(v.code)}</script>`).join('\n')}
<script>${scriptCode(CLIENT_SCRIPT)}</script>
</body>
</html>
`;
}
