import type { RunColumn } from './columns.js';
import type { PageData, PageRun, PageTurn } from './page-data.js';

/**
 * The page's views as browser JavaScript text, written once and run in two places: in Node, where
 * `todeval report` renders the first paint into the HTML itself (readable with JavaScript off) and
 * writes `--csv`, and in the browser, where the page script re-renders on every sort, filter and
 * page and builds the CSV/JSONL downloads. One source means the static first page, the live page and
 * the exports cannot drift apart. Every piece of data goes through esc(): utterances are data.
 */
export const VIEW_SCRIPT = String.raw`
var PAGE_SIZE = 25;
var DEFAULT_FILTER = { run: null, service: '', act: '', show: 'failing', q: '' };
// Comparing runs, what a person looks for first is where they disagree: the default with two or more
// runs' per-turn files (a turn both fail says nothing about which system is better).
var COMPARE_SHOW = [
  { value: 'disagree', text: 'the runs disagree: one fails it, another does not' },
  { value: 'both-fail', text: 'both fail: every run fails it' }
];
var SHOW = [
  { value: 'failing', text: 'failing: some run finds it unfaithful' },
  { value: 'context-only', text: 'context-only: the context alone entails a rescue' },
  { value: 'rescued', text: 'rescued by context' },
  { value: 'excluded', text: 'excluded by validation' },
  { value: 'unsupported-sentence', text: 'a sentence no fact supports (--granularity sentence)' },
  { value: 'any', text: 'any of these' }
];

function esc(s) {
  return String(s === null || s === undefined ? '' : s).replace(/[&<>"']/g, function (c) {
    return c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;';
  });
}
function fmt(x, digits) {
  if (x === null || x === undefined) return '–';
  if (typeof x === 'string') return x;
  return digits === 0 ? Math.round(x).toLocaleString('en-US') : x.toFixed(digits === undefined ? 2 : digits);
}
function prob(p) { return p === null || p === undefined ? '–' : p.toFixed(3); }
function words(reason) { return String(reason).replace(/-/g, ' '); }
function standinTag() { return '<span class="tag">STAND-IN: not SGSAcc</span>'; }

function sortRuns(runs, sort) {
  var order = runs.map(function (r, i) { return i; });
  if (!sort || !sort.key) return order;
  var value = function (i) { return sort.key === 'name' ? runs[i].name : runs[i].values[sort.key]; };
  return order.sort(function (a, b) {
    var x = value(a), y = value(b);
    if (x === null || x === undefined) return y === null || y === undefined ? a - b : 1;
    if (y === null || y === undefined) return -1;
    return (typeof x === 'string' ? String(x).localeCompare(String(y)) : x - y) * sort.dir || a - b;
  });
}

/** The runs table (thead + tbody): a row per run with the main columns, then its detail row. */
function runsTableHtml(runs, columns, sort) {
  var main = columns.filter(function (c) { return !c.detail; });
  var detail = columns.filter(function (c) { return c.detail; });
  function head(c) {
    var on = sort && sort.key === c.key;
    return '<th scope="col"' + (c.title ? ' title="' + esc(c.title) + '"' : '') + ' aria-sort="' + (on ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none') + '">' +
      '<button type="button" data-key="' + esc(c.key) + '">' + esc(c.label) + (on ? (sort.dir > 0 ? ' ▲' : ' ▼') : '') + '</button></th>';
  }
  var html = '<thead><tr>' + head({ key: 'name', label: 'Run' }) + main.map(head).join('') + '</tr></thead><tbody>';
  sortRuns(runs, sort).forEach(function (i) {
    var r = runs[i];
    html += '<tr class="run' + (r.standin ? ' standin' : '') + '" data-run="' + esc(r.name) + '">' +
      '<th scope="row" title="' + esc(r.file) + '">' + esc(r.name) + (r.standin ? standinTag() : '') + '</th>';
    main.forEach(function (c) {
      var v = r.values[c.key];
      var notes = [];
      if (r.standin && c.sgsacc) notes.push('stand-in model: not SGSAcc');
      var cls = '';
      var text = fmt(v, c.digits);
      if (c.format === 'pm' && typeof v === 'number') text = '± ' + text;
      if (c.format === 'pvalue') {
        if (typeof v === 'number') {
          var significant = v <= c.alpha;
          text = v.toFixed(4) + (significant ? ' *' : '');
          cls = significant ? ' class="sig"' : ' class="nonsig"';
          notes.push(significant ? 'significant at α = ' + c.alpha : 'not significant at α = ' + c.alpha);
        } else if (r.name === c.baseline) text = 'baseline';
      }
      var low = r.values[c.key + 'Low'];
      if (low && typeof v === 'number') {
        text += ' †';
        notes.push(low);
      }
      html += '<td data-label="' + esc(c.label) + '"' + cls + (notes.length ? ' title="' + esc(notes.join('; ')) + '"' : '') + '>' + esc(text) + '</td>';
    });
    html += '</tr><tr class="detail" data-run="' + esc(r.name) + '"><td colspan="' + (main.length + 1) + '"><ul class="facts">';
    detail.forEach(function (c) {
      var v = r.values[c.key];
      if (v === null || v === undefined) return;
      html += '<li><span class="lbl">' + esc(c.label) + ':</span> ' + esc(fmt(v, c.digits)) + (c.key === 'model' && r.standin ? standinTag() : '') + '</li>';
    });
    html += '</ul></td></tr>';
  });
  return html + '</tbody>';
}

/**
 * A run's verdict on a turn, in words that cannot contradict each other: one main badge (what
 * counts in validated SGSAcc, or why the turn does not count there and what it scored unvalidated),
 * plus what the context did.
 */
function verdictBadges(e) {
  var out = [];
  var scored = e.faithful === true ? 'faithful' : e.faithful === false ? 'unfaithful' : 'unscorable';
  if (e.v === 'excluded') {
    out.push({ cls: 'warn', text: 'excluded from validated SGSAcc (' + (e.ex || []).map(words).join(', ') + '); scored unvalidated: ' + scored });
  } else if (e.faithful === null) {
    out.push({ cls: 'warn', text: 'unscorable: an action has no reference' });
  } else {
    var unchecked = e.v === 'unchecked' ? ' (no validation)' : '';
    if (e.o === 'context-only') {
      out.push(e.faithful
        ? { cls: 'warn', text: 'faithful only through the context alone' + unchecked }
        : { cls: 'bad', text: 'unfaithful: its context rescues were withdrawn' + unchecked });
    } else out.push(e.faithful ? { cls: 'ok', text: 'faithful' + unchecked } : { cls: 'bad', text: 'unfaithful' + unchecked });
  }
  var rescued = e.a.filter(function (a) { return a[5] && a[6]; }).length;
  var alone = e.a.filter(function (a) { return a[7]; }).length;
  if (rescued > 0) out.push({ cls: 'info', text: 'rescued by context: ' + rescued + ' action' + (rescued === 1 ? '' : 's') });
  if (alone > 0) out.push({ cls: 'alone', text: 'the context alone entails ' + alone + (e.a.some(function (a) { return a[7] && !a[5]; }) ? ': withdrawn' : ': credited, control off') });
  return out;
}

function actionVerdict(a) {
  if (a[5]) return a[6] ? (a[7] ? '✓ context alone' : '✓ context') : '✓';
  return a[7] ? '✗ context alone' : '✗';
}

/**
 * The utterance, its unsupported sentences marked: <mark> carries the meaning without styles or
 * script (and says which in its title and a bracketed word after it for readers without colour).
 */
function utteranceHtml(e) {
  if (!e.u) return '–';
  if (!e.s || e.s.length === 0) return esc(e.u);
  var html = '', at = 0;
  e.s.forEach(function (x) {
    html += esc(e.u.slice(at, x[0]));
    var what = x[2] ? 'contradicted' : 'unsupported';
    html += '<mark class="' + what + '" title="' + (x[2] ? 'a fact contradicts this sentence' : 'no fact supports this sentence') + '">' + esc(e.u.slice(x[0], x[1])) + '</mark>' +
      '<span class="mark-note"> [' + what + ']</span>';
    at = x[1];
  });
  return html + esc(e.u.slice(at));
}

/** The unsupported sentences of a run's view of a turn, for the exports. */
function unsupportedText(e) {
  return (e.s || []).map(function (x) { return e.u.slice(x[0], x[1]); }).join(' | ');
}

/** One listed turn: the previous user turn, then each run's view side by side. */
function turnCardHtml(t, runs) {
  var html = '<article class="turn" data-turn="' + esc(t.id) + '" data-services="' + esc(t.services.join(' ')) + '">' +
    '<header><strong>' + esc(t.id) + '</strong> <span class="svc">' + esc(t.services.join(', ')) + '</span></header>' +
    '<p class="prev"><span class="lbl">previous user turn: </span>' + esc(t.prev || '–') + '</p><div class="side-by-side">';
  t.runs.forEach(function (e) {
    html += '<section class="run-view" data-run="' + esc(runs[e.r].name) + '"><h4><span class="run-name">' + esc(runs[e.r].name) + '</span>' +
      verdictBadges(e).map(function (b) { return ' <span class="badge ' + b.cls + '">' + esc(b.text) + '</span>'; }).join('') + '</h4>' +
      '<p class="utt"><span class="lbl">utterance: </span>' + utteranceHtml(e) + '</p>' +
      (e.s && e.s.length ? '<p class="unsupported-note"><span class="lbl">unsupported sentences: </span>' + e.s.length + ' (marked)</p>' : '') +
      '<table class="actions"><thead><tr><th>action</th><th>reference</th><th class="num" title="entailment probability, the utterance alone as the premise">plain</th>' +
      '<th class="num" title="entailment probability with the context premise (previous user turn + slot description + utterance)">context</th><th>verdict</th></tr></thead><tbody>';
    e.a.forEach(function (a) {
      html += '<tr class="' + (a[5] ? 'entailed' : 'missed') + (a[7] ? ' alone' : '') + '"><td>' + esc(a[0] + (a[1] ? '(' + a[1] + ')' : '')) + '</td><td>' + esc(a[2]) +
        '</td><td class="num">' + prob(a[3]) + '</td><td class="num">' + prob(a[4]) + '</td><td class="verdict">' + esc(actionVerdict(a)) + '</td></tr>';
    });
    html += '</tbody></table></section>';
  });
  return html + '</div></article>';
}

function runsWithTurns(data) { return data.runs.filter(function (r) { return r.hasTurns; }).length; }
/** The list's first filter: the turns the runs disagree on with two or more runs' per-turn files, else the failing turns. */
function defaultFilter(data) {
  return Object.assign({}, DEFAULT_FILTER, { show: runsWithTurns(data) >= 2 ? 'disagree' : DEFAULT_FILTER.show });
}
function showOptions(data) { return runsWithTurns(data) >= 2 ? COMPARE_SHOW.concat(SHOW) : SHOW; }
function fails(e) { return e.why.indexOf('failing') >= 0; }
/** 'disagree': some run fails the turn and another run does not; 'both-fail': every run (two or more) fails it. */
function comparison(t) {
  if (t.runs.length < 2) return null;
  var n = t.runs.filter(fails).length;
  return n === t.runs.length ? 'both-fail' : n > 0 ? 'disagree' : null;
}

function turnMatches(t, f) {
  if (f.service && t.services.indexOf(f.service) < 0) return false;
  if (f.act && t.acts.indexOf(f.act) < 0) return false;
  var byComparison = f.show === 'disagree' || f.show === 'both-fail';
  if (byComparison && comparison(t) !== f.show) return false;
  var listed = byComparison ? t.runs.some(function (e) { return f.run === null || f.run === undefined || e.r === f.run; }) : t.runs.some(function (e) {
    if (f.run !== null && f.run !== undefined && e.r !== f.run) return false;
    return f.show === 'any' ? e.why.length > 0 : e.why.indexOf(f.show) >= 0;
  });
  if (!listed) return false;
  if (f.q) {
    // Built once per turn, on the first text search.
    if (t.hay === undefined) {
      t.hay = (t.id + ' ' + t.prev + ' ' + t.runs.map(function (e) { return e.u + ' ' + e.a.map(function (a) { return a[2]; }).join(' '); }).join(' ')).toLowerCase();
    }
    if (t.hay.indexOf(f.q.toLowerCase()) < 0) return false;
  }
  return true;
}
function filterTurns(turns, f) { return turns.filter(function (t) { return turnMatches(t, f); }); }

function turnListHtml(matching, runs, page) {
  return matching.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE).map(function (t) { return turnCardHtml(t, runs); }).join('');
}
function pageCount(matching) { return Math.max(1, Math.ceil(matching.length / PAGE_SIZE)); }
function statusText(matching, total, page) {
  return matching.length.toLocaleString('en-US') + ' of ' + total.toLocaleString('en-US') + ' listed turns match · page ' + (page + 1) + ' of ' + pageCount(matching);
}
/**
 * The list's counts in one sentence whose parts add up: the listed turns split by what the runs do
 * with them (disagree + all fail + no run fails = listed), then each run's failing turns.
 */
function turnCountsText(counts, turns) {
  if (counts.length === 0) return 'No per-turn files were given (--turns): only the tables and charts are shown.';
  var n = function (x) { return x.toLocaleString('en-US'); };
  var totals = counts.map(function (c) { return c.total; });
  var same = totals.every(function (x) { return x === totals[0]; });
  var of = same ? 'the ' + n(totals[0]) + ' turns' : 'the turns (' + counts.map(function (c) { return c.run + ' ' + n(c.total); }).join(', ') + ')';
  var failing = counts.map(function () { return 0; });
  var disagree = 0, allFail = 0;
  turns.forEach(function (t) {
    t.runs.forEach(function (e) { if (fails(e)) failing[e.r] = (failing[e.r] || 0) + 1; });
    var c = comparison(t);
    if (c === 'disagree') disagree++;
    else if (c === 'both-fail') allFail++;
  });
  var perRun = counts.map(function (c, i) { return c.run + ' ' + n(c.failing !== undefined ? c.failing : failing[i] || 0); });
  if (counts.length === 1) {
    var f = counts[0].failing;
    return n(turns.length) + ' of ' + of + ' of ' + counts[0].run + ' are listed: ' + n(f) + ' it fails, ' + n(turns.length - f) + ' excluded by validation or rescued by context only.';
  }
  return n(turns.length) + ' of ' + of + ' are listed because some run fails, excludes or rescues them: the runs disagree on ' + n(disagree) + ', ' +
    (counts.length === 2 ? 'both' : 'all ' + counts.length) + ' fail ' + n(allFail) + ', and no run fails the other ' + n(turns.length - disagree - allFail) +
    ' (excluded or rescued only). Failing turns per run: ' + perRun.join(', ') + '.';
}

// ---- exports: one row per turn and run (CSV), one line per turn (JSONL) ----
var CSV_HEADER = ['turn', 'services', 'acts', 'previous_user_turn', 'run', 'verdict', 'validation', 'exclusion_reasons', 'faithful',
  'utterance', 'failed_actions', 'context_rescued_actions', 'context_alone_actions'];
function csvCell(v) {
  var s = v === null || v === undefined ? '' : String(v);
  // A cell a spreadsheet would run as a formula is written as text.
  if (/^[=+\-@\t\r]/.test(s)) s = "'" + s;
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}
function actionText(a) { return a[0] + (a[1] ? '(' + a[1] + ')' : '') + ': ' + a[2]; }
function turnsCsv(turns, runs) {
  // The sentences' column only when a run has them: turn-level exports stay as they were.
  var withSentences = runs.some(function (r) { return r.sentences; });
  var rows = [(withSentences ? CSV_HEADER.concat(['unsupported_sentences']) : CSV_HEADER).join(',')];
  turns.forEach(function (t) {
    t.runs.forEach(function (e) {
      rows.push([
        t.id, t.services.join(' '), t.acts.join(' '), t.prev, runs[e.r].name,
        verdictBadges(e).map(function (b) { return b.text; }).join('; '), e.v, (e.ex || []).join(' '),
        e.faithful === null ? '' : String(e.faithful), e.u,
        e.a.filter(function (a) { return !a[5]; }).map(actionText).join(' | '),
        e.a.filter(function (a) { return a[5] && a[6]; }).map(actionText).join(' | '),
        e.a.filter(function (a) { return a[7]; }).map(actionText).join(' | ')
      ].concat(withSentences ? [unsupportedText(e)] : []).map(csvCell).join(','));
    });
  });
  return rows.join('\r\n') + '\r\n';
}
function turnsJsonl(turns, runs) {
  return turns.map(function (t) {
    return JSON.stringify({
      id: t.id, services: t.services, acts: t.acts, previousUserUtterance: t.prev,
      runs: t.runs.map(function (e) {
        return Object.assign({
          run: runs[e.r].name, verdict: verdictBadges(e).map(function (b) { return b.text; }), validation: e.v, exclusionReasons: e.ex || [],
          faithful: e.faithful, outcome: e.o, utterance: e.u,
          actions: e.a.map(function (a) {
            return { act: a[0], slot: a[1], reference: a[2], plainEntailment: a[3], contextEntailment: a[4], entailed: !!a[5], contextUsed: !!a[6], contextOnly: !!a[7] };
          })
        }, e.s ? { unsupportedSentences: e.s.map(function (x) { return { text: e.u.slice(x[0], x[1]), verdict: x[2] ? 'contradicted' : 'unsupported' }; }) } : {});
      })
    }) + '\n';
  }).join('');
}
`;

/** The views, callable from Node: the same functions the page runs. */
export interface Views {
  PAGE_SIZE: number;
  DEFAULT_FILTER: TurnFilter;
  SHOW: { value: string; text: string }[];
  defaultFilter(data: Pick<PageData, 'runs'>): TurnFilter;
  showOptions(data: Pick<PageData, 'runs'>): { value: string; text: string }[];
  esc(s: unknown): string;
  runsTableHtml(runs: PageRun[], columns: RunColumn[], sort: { key: string; dir: 1 | -1 } | null): string;
  turnListHtml(matching: PageTurn[], runs: PageRun[], page: number): string;
  filterTurns(turns: PageTurn[], f: TurnFilter): PageTurn[];
  statusText(matching: PageTurn[], total: number, page: number): string;
  turnCountsText(counts: PageData['turnCounts'], turns: PageTurn[]): string;
  turnsCsv(turns: PageTurn[], runs: PageRun[]): string;
  turnsJsonl(turns: PageTurn[], runs: PageRun[]): string;
}

export interface TurnFilter {
  run: number | null;
  service: string;
  act: string;
  /** A TurnReason, 'any', or (two or more runs) 'disagree' / 'both-fail'. */
  show: string;
  q: string;
}

let compiled: Views | undefined;

export function views(): Views {
  compiled ??= new Function(
    `${VIEW_SCRIPT}\nreturn { PAGE_SIZE: PAGE_SIZE, DEFAULT_FILTER: DEFAULT_FILTER, SHOW: SHOW, defaultFilter: defaultFilter, showOptions: showOptions, esc: esc, runsTableHtml: runsTableHtml, turnListHtml: turnListHtml, ` +
      'filterTurns: filterTurns, statusText: statusText, turnCountsText: turnCountsText, turnsCsv: turnsCsv, turnsJsonl: turnsJsonl };',
  )() as Views;
  return compiled;
}

/** The turns `todeval report --csv` writes: every failing turn (the "failing" list, no other filter), as the page's CSV button gives it. */
export function defaultTurnsCsv(data: PageData): string {
  const v = views();
  return v.turnsCsv(v.filterTurns(data.turns, v.DEFAULT_FILTER), data.runs);
}
