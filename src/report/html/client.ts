/**
 * The page's own script, as browser JavaScript text (it runs in the viewer's browser, not in Node,
 * so it is kept as a string rather than compiled with the rest). It unpacks the embedded data,
 * renders the sortable run table, the charts (vega-embed) and the filterable, paginated list of
 * failing turns. Everything is built with textContent, never innerHTML: utterances are data.
 */
export const CLIENT_SCRIPT = String.raw`
(async function () {
  'use strict';
  var PAGE_SIZE = 25;
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'cls') e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c !== null && c !== undefined) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return e;
  }
  function fmt(x, digits) { return x === null || x === undefined ? '–' : (digits === 0 ? Math.round(x).toLocaleString('en-US') : x.toFixed(digits === undefined ? 2 : digits)); }
  function prob(p) { return p === null || p === undefined ? '–' : p.toFixed(3); }

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

  // ---- comparison table, each column sortable ----
  var columns = [
    { key: 'name', label: 'Run', type: 'text' },
    { key: 'model', label: 'NLI model', type: 'text' },
    { key: 'validated', label: 'SGSAcc validated', d: 2 },
    { key: 'validatedSeen', label: 'seen', d: 2 },
    { key: 'validatedUnseen', label: 'unseen', d: 2 },
    { key: 'unvalidated', label: 'SGSAcc unvalidated', d: 2 },
    { key: 'ser', label: 'SER %', d: 2 },
    { key: 'bleu', label: 'BLEU', d: 2 },
    { key: 'inform', label: 'Inform', d: 1 },
    { key: 'success', label: 'Success', d: 1 },
    { key: 'richness', label: 'unique trigrams', d: 0 },
    { key: 'turns', label: 'turns', d: 0 },
    { key: 'evaluated', label: 'validated turns', d: 0 },
    { key: 'excluded', label: 'excluded', d: 0 },
    { key: 'rescued', label: 'rescued actions', d: 0 }
  ];
  var sortKey = null, sortDir = 1;
  var table = document.getElementById('runs');
  function renderTable() {
    table.textContent = '';
    var head = el('tr');
    columns.forEach(function (c) {
      var arrow = sortKey === c.key ? (sortDir > 0 ? ' ▲' : ' ▼') : '';
      var th = el('th', { scope: 'col', 'aria-sort': sortKey === c.key ? (sortDir > 0 ? 'ascending' : 'descending') : 'none' },
        [el('button', { type: 'button', 'data-key': c.key, text: c.label + arrow })]);
      head.appendChild(th);
    });
    table.appendChild(el('thead', null, [head]));
    var rows = runs.map(function (r, i) { return { r: r, i: i }; });
    if (sortKey) {
      rows.sort(function (a, b) {
        var x = a.r[sortKey], y = b.r[sortKey];
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (typeof x === 'string' ? x.localeCompare(y) : x - y) * sortDir;
      });
    }
    var body = el('tbody');
    rows.forEach(function (row) {
      var r = row.r;
      var tr = el('tr', { 'data-run': r.name, cls: r.standin ? 'standin' : '' });
      columns.forEach(function (c) {
        if (c.key === 'name') tr.appendChild(el('th', { scope: 'row', text: r.name, title: r.file }));
        else if (c.key === 'model') tr.appendChild(el('td', { cls: 'text' }, [r.model || '–', r.standin ? el('span', { cls: 'tag', text: 'STAND-IN: not SGSAcc' }) : null]));
        else tr.appendChild(el('td', { text: fmt(r[c.key], c.d), title: r.standin && /validated|unvalidated|Seen|Unseen/.test(c.key) ? 'stand-in model: not SGSAcc' : '' }));
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
  }
  table.addEventListener('click', function (ev) {
    var b = ev.target.closest('button[data-key]');
    if (!b) return;
    var k = b.getAttribute('data-key');
    if (sortKey === k) sortDir = -sortDir; else { sortKey = k; sortDir = 1; }
    renderTable();
  });
  renderTable();

  var sigs = document.getElementById('signatures');
  runs.forEach(function (r) {
    sigs.appendChild(el('dt', { text: r.name + (r.standin ? ' (stand-in model)' : '') + ' — ' + r.file }));
    sigs.appendChild(el('dd', null, [el('code', { text: r.signatureText })]));
  });

  // ---- charts ----
  var chartBox = document.getElementById('charts');
  for (var ci = 0; ci < charts.length; ci++) {
    var c = charts[ci];
    var fig = el('figure', { cls: 'chart', id: 'chart-' + c.id });
    var target = el('div', { cls: 'vega-target' });
    fig.appendChild(target);
    if (c.note) fig.appendChild(el('figcaption', { text: (c.spec ? 'Note: ' : c.title + ': ') + c.note }));
    chartBox.appendChild(fig);
    if (c.spec) await vegaEmbed(target, c.spec, { renderer: 'svg', actions: false });
  }

  // ---- failing turns: filters, pagination, runs side by side ----
  var turns = data.turns;
  var services = {}, acts = {};
  turns.forEach(function (t) { t.services.forEach(function (s) { services[s] = 1; }); t.acts.forEach(function (a) { acts[a] = 1; }); });
  function fill(select, values, label) {
    select.appendChild(el('option', { value: '', text: label }));
    values.forEach(function (v) { select.appendChild(el('option', { value: String(v.value), text: v.text })); });
  }
  var fRun = document.getElementById('f-run'), fService = document.getElementById('f-service');
  var fAct = document.getElementById('f-act'), fReason = document.getElementById('f-reason'), fText = document.getElementById('f-text');
  fill(fRun, runs.map(function (r, i) { return { value: i, text: r.name }; }).filter(function (v) { return runs[v.value].hasTurns; }), 'any run');
  fill(fService, Object.keys(services).sort().map(function (s) { return { value: s, text: s }; }), 'any service');
  fill(fAct, Object.keys(acts).sort().map(function (a) { return { value: a, text: a }; }), 'any act');
  fill(fReason, [
    { value: 'unfaithful', text: 'unfaithful action' },
    { value: 'excluded', text: 'excluded by validation' },
    { value: 'rescued', text: 'rescued by context' }
  ], 'any reason');
  var page = 0, matching = [];
  var list = document.getElementById('turn-list'), status = document.getElementById('turn-status');
  function applyFilters() {
    var run = fRun.value === '' ? null : Number(fRun.value);
    var svc = fService.value, act = fAct.value, why = fReason.value, q = fText.value.trim().toLowerCase();
    matching = turns.filter(function (t) {
      if (svc && t.services.indexOf(svc) < 0) return false;
      if (act && t.acts.indexOf(act) < 0) return false;
      var ok = t.runs.some(function (e) {
        if (run !== null && e.r !== run) return false;
        return why ? e.why.indexOf(why) >= 0 : e.why.length > 0;
      });
      if (!ok) return false;
      if (q) {
        // Built once per turn, on the first text search.
        if (t.hay === undefined) t.hay = (t.id + ' ' + t.prev + ' ' + t.runs.map(function (e) { return e.u + ' ' + e.a.map(function (a) { return a[2]; }).join(' '); }).join(' ')).toLowerCase();
        if (t.hay.indexOf(q) < 0) return false;
      }
      return true;
    });
    page = 0;
    renderTurns();
  }
  function badge(text, cls) { return el('span', { cls: 'badge ' + cls, text: text }); }
  function turnCard(t) {
    var card = el('article', { cls: 'turn', 'data-turn': t.id, 'data-services': t.services.join(' ') });
    card.appendChild(el('header', null, [el('strong', { text: t.id }), ' ', el('span', { cls: 'svc', text: t.services.join(', ') })]));
    card.appendChild(el('p', { cls: 'prev' }, [el('span', { cls: 'lbl', text: 'previous user turn: ' }), t.prev || '–']));
    var grid = el('div', { cls: 'side-by-side' });
    t.runs.forEach(function (e) {
      var r = runs[e.r];
      var col = el('section', { cls: 'run-view' });
      var head = el('h4', { text: r.name });
      if (e.faithful === true) head.appendChild(badge('faithful', 'ok'));
      if (e.why.indexOf('unfaithful') >= 0) head.appendChild(badge('unfaithful', 'bad'));
      if (e.why.indexOf('excluded') >= 0) head.appendChild(badge('excluded: ' + (e.ex || []).join(', '), 'warn'));
      if (e.why.indexOf('rescued') >= 0) head.appendChild(badge('rescued by context', 'info'));
      col.appendChild(head);
      col.appendChild(el('p', { cls: 'utt' }, [el('span', { cls: 'lbl', text: 'utterance: ' }), e.u || '–']));
      var tbl = el('table', { cls: 'actions' });
      tbl.appendChild(el('tr', null, ['action', 'reference', 'p(entail)', 'with context', ''].map(function (h) { return el('th', { text: h }); })));
      e.a.forEach(function (a) {
        tbl.appendChild(el('tr', { cls: a[5] ? 'entailed' : 'missed' }, [
          el('td', { text: a[0] + (a[1] ? '(' + a[1] + ')' : '') }),
          el('td', { text: a[2] }),
          el('td', { cls: 'num', text: prob(a[3]) }),
          el('td', { cls: 'num', text: prob(a[4]) }),
          el('td', { text: a[5] ? (a[6] ? '✓ ctx' : '✓') : '✗' })
        ]));
      });
      col.appendChild(tbl);
      grid.appendChild(col);
    });
    card.appendChild(grid);
    return card;
  }
  function renderTurns() {
    var pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
    if (page >= pages) page = pages - 1;
    list.textContent = '';
    matching.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE).forEach(function (t) { list.appendChild(turnCard(t)); });
    status.textContent = matching.length.toLocaleString('en-US') + ' of ' + turns.length.toLocaleString('en-US') + ' listed turns match · page ' + (page + 1) + ' of ' + pages;
    document.getElementById('prev-page').disabled = page === 0;
    document.getElementById('next-page').disabled = page >= pages - 1;
  }
  [fRun, fService, fAct, fReason].forEach(function (s) { s.addEventListener('change', applyFilters); });
  var typing;
  fText.addEventListener('input', function () { clearTimeout(typing); typing = setTimeout(applyFilters, 200); });
  document.getElementById('prev-page').addEventListener('click', function () { page--; renderTurns(); });
  document.getElementById('next-page').addEventListener('click', function () { page++; renderTurns(); });
  document.getElementById('turn-counts').textContent = data.turnCounts.map(function (c) {
    return c.run + ': ' + c.listed.toLocaleString('en-US') + ' of ' + c.total.toLocaleString('en-US') + ' turns listed';
  }).join(' · ') || 'No per-turn files were given (--turns): only the tables and charts are shown.';
  applyFilters();
  document.body.setAttribute('data-ready', '1');
})().catch(function (e) {
  var box = document.getElementById('load-error');
  box.hidden = false;
  box.textContent = 'This report could not be displayed: ' + (e && e.message ? e.message : e);
  throw e;
});
`;
