/**
 * The page's own script, as browser JavaScript text (it runs in the viewer's browser, not in Node,
 * so it is kept as a string rather than compiled with the rest). The first paint is already in the
 * HTML; this unpacks the embedded data and adds what needs a script: sorting the runs table, the
 * charts (vega-embed) and their orders, the filters and pages of the turn list, and the CSV/JSONL
 * exports. It renders with the views of views.ts (loaded before it), which escape every piece of data.
 */
export const CLIENT_SCRIPT = String.raw`
(async function () {
  'use strict';
  async function unpack(id) {
    var b64 = document.getElementById(id).textContent.trim();
    var bin;
    if (typeof Uint8Array.fromBase64 === 'function') bin = Uint8Array.fromBase64(b64);
    else {
      // A plain loop: several times faster than Array.from with a callback on megabytes.
      var raw = atob(b64);
      bin = new Uint8Array(raw.length);
      for (var i = 0; i < raw.length; i++) bin[i] = raw.charCodeAt(i);
    }
    var stream = new Blob([bin]).stream().pipeThrough(new DecompressionStream('gzip'));
    return JSON.parse(await new Response(stream).text());
  }
  var data = await unpack('todeval-data');
  var charts = JSON.parse(document.getElementById('todeval-charts').textContent);
  var runs = data.runs;

  // ---- runs table: click a header to sort, again to reverse ----
  var sort = null;
  var table = document.getElementById('runs');
  function renderTable() { table.innerHTML = runsTableHtml(runs, data.columns, sort); }
  table.addEventListener('click', function (ev) {
    var b = ev.target.closest('button[data-key]');
    if (!b) return;
    var k = b.getAttribute('data-key');
    sort = sort && sort.key === k ? { key: k, dir: -sort.dir } : { key: k, dir: 1 };
    renderTable();
  });
  renderTable();

  // ---- turns: filters, pages, exports ----
  var filter = defaultFilter(data);
  var page = 0, matching = [];
  var list = document.getElementById('turn-list'), status = document.getElementById('turn-status');
  var prev = document.getElementById('prev-page'), next = document.getElementById('next-page');
  var fShow = document.getElementById('f-show'), fRun = document.getElementById('f-run'), fService = document.getElementById('f-service');
  var fAct = document.getElementById('f-act'), fText = document.getElementById('f-text');
  function renderTurns() {
    var pages = pageCount(matching);
    if (page >= pages) page = pages - 1;
    list.innerHTML = turnListHtml(matching, runs, page);
    status.textContent = statusText(matching, data.turns.length, page);
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }
  function applyFilters() {
    filter = { run: fRun.value === '' ? null : Number(fRun.value), service: fService.value, act: fAct.value, show: fShow.value, q: fText.value.trim() };
    matching = filterTurns(data.turns, filter);
    page = 0;
    renderTurns();
  }
  [fShow, fRun, fService, fAct].forEach(function (s) { s.addEventListener('change', applyFilters); });
  var typing;
  fText.addEventListener('input', function () { clearTimeout(typing); typing = setTimeout(applyFilters, 200); });
  prev.addEventListener('click', function () { page--; renderTurns(); });
  next.addEventListener('click', function () { page++; renderTurns(); });
  function download(name, text, type) {
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([text], { type: type }));
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 0);
  }
  document.getElementById('export-csv').addEventListener('click', function () { download('todeval-turns.csv', turnsCsv(matching, runs), 'text/csv'); });
  document.getElementById('export-jsonl').addEventListener('click', function () { download('todeval-turns.jsonl', turnsJsonl(matching, runs), 'application/jsonl'); });
  // No per-turn file: nothing to filter or page through.
  document.getElementById('filters').hidden = data.turns.length === 0;
  prev.hidden = data.turns.length === 0;
  next.hidden = data.turns.length === 0;
  applyFilters();

  // ---- charts, each as wide as its box; group charts can be re-sorted ----
  for (var ci = 0; ci < charts.length; ci++) {
    var c = charts[ci];
    if (!c.spec) continue;
    var fig = document.getElementById('chart-' + c.id);
    var target = fig.querySelector('.vega-target');
    var view = await vegaEmbed(target, c.spec, { renderer: 'svg', actions: false });
    if (c.sorts && c.sorts.length > 1) {
      var label = document.createElement('label');
      label.className = 'chart-sort';
      var word = document.createElement('span');
      word.textContent = 'Order';
      label.appendChild(word);
      var select = document.createElement('select');
      c.sorts.forEach(function (s) { var o = document.createElement('option'); o.value = s.key; o.textContent = s.label; select.appendChild(o); });
      label.appendChild(select);
      fig.insertBefore(label, target);
      (function (chart, box, current) {
        select.addEventListener('change', async function (ev) {
          var order = chart.sorts.filter(function (s) { return s.key === ev.target.value; })[0].order;
          chart.spec.encoding.y.sort = order;
          current.finalize();
          current = await vegaEmbed(box, chart.spec, { renderer: 'svg', actions: false });
        });
      })(c, target, view);
    }
  }
  document.body.setAttribute('data-ready', '1');
})().catch(function (e) {
  var box = document.getElementById('load-error');
  box.hidden = false;
  box.textContent = 'This report could not be displayed: ' + (e && e.message ? e.message : e);
  throw e;
});
`;
