import { turnOutcome } from '../../metrics/sgsacc/outcome.js';
import type { OutcomeCounts } from '../../metrics/sgsacc/aggregate.js';
import type { GroupPct, ReportRun, TurnsFile } from './runs.js';

/** A Vega-Lite spec as plain JSON (rendered in the page by vega-embed). */
export type VegaLiteSpec = Record<string, unknown>;

export interface ReportChart {
  id: string;
  title: string;
  /** Why the chart is absent (or what it leaves out), when it is. */
  note?: string;
  /** What the chart shows, in words (the figure's caption). */
  caption?: string;
  spec?: VegaLiteSpec;
  /** Orders the page can switch between: each replaces the y axis's sort. The first is the default. */
  sorts?: { key: string; label: string; order: string[] }[];
}

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
// Every chart is as wide as its box: readable at 420 px, no scrolling at 1,400 px.
// A fixed height (not a step: vega-lite warns when a step height meets a fitted width).
const FIT = { width: 'container', autosize: { type: 'fit-x', contains: 'padding' } };
// Run names in full where there is room; cut (the tooltip has them) where the plot would shrink to nothing.
const RUN_LABEL_LIMIT = { expr: 'containerSize()[0] < 640 ? 130 : 360' };
// Legends start under the plot, right of the axis labels: what is left of the box, at most 400 px.
const LEGEND_LABEL_LIMIT = { expr: 'clamp(containerSize()[0] - 190, 100, 400)' };

/** The label of a run in charts: a stand-in run says so in every legend. */
export function runLabel(r: ReportRun): string {
  return r.standin ? `${r.name} (stand-in, not SGSAcc)` : r.name;
}

interface GroupRow {
  run: string;
  group: string;
  /** The percentage shown, null when there is none (no validated turns, or the run lacks the group). */
  score: number | null;
  n: number;
  label: string;
  /** For the tooltip: the other measure and its n. */
  other: string;
}

/**
 * SGSAcc per service or per act as horizontal bars, one per run, sorted: every group any run has is
 * there, with its n beside the bar, and a group without validated turns says so instead of being
 * dropped (that is often exactly where a system fails).
 */
function groupChart(runs: ReportRun[], id: string, what: 'service' | 'act', title: string): ReportChart {
  const scored = runs.filter((r) => r.sgsacc);
  const pick = (r: ReportRun): Record<string, GroupPct> => (what === 'service' ? r.sgsacc?.perService : r.sgsacc?.perAct) ?? {};
  const groups = [...new Set(scored.flatMap((r) => Object.keys(pick(r))))].sort((a, b) => a.localeCompare(b));
  if (groups.length === 0) return { id, title, note: `no run has per-${what} SGSAcc` };
  // Validated SGSAcc when any run validated; otherwise every run falls back to unvalidated.
  const validated = scored.some((r) => r.sgsacc!.validated !== null);
  const unit = what === 'service' ? 'turns' : 'actions';
  const values: GroupRow[] = [];
  for (const r of scored) {
    for (const group of groups) {
      const g = pick(r)[group];
      const score = g ? (validated ? g.validated : g.unvalidated) : null;
      const n = g ? (validated ? g.validatedN : g.unvalidatedN) : 0;
      const label = !g ? 'not in this run' : score === null ? (validated ? `no validated ${unit}` : `no ${unit}`) : `n=${n.toLocaleString('en-US')}`;
      const other = g && validated ? `unvalidated ${g.unvalidated === null ? '–' : g.unvalidated.toFixed(2)} (n=${g.unvalidatedN.toLocaleString('en-US')})` : '';
      values.push({ run: runLabel(r), group, score, n, label, other });
    }
  }
  const measure = `${validated ? 'validated' : 'unvalidated'} SGSAcc (%)`;
  const labels = scored.map(runLabel);
  // The Order menu names runs plainly (their chart labels carry the stand-in note).
  const sorts = groupSorts(groups, values, labels, scored.map((r) => r.name));
  // Room for every run's bar in each group's band.
  const step = Math.max(18, 13 * labels.length + 6);
  const text = (filter: string, mark: Record<string, unknown>, x: Record<string, unknown>, color: string) => ({
    transform: [{ filter }],
    mark: { type: 'text', fontSize: 10, baseline: 'middle', ...mark },
    encoding: { x, text: { field: 'label' }, color: { value: color } },
  });
  const x = { field: 'score', type: 'quantitative' };
  return {
    id,
    title,
    caption:
      `${title}: ${measure}, one bar per run, n = validated ${unit} behind the bar. Sorted ${sorts[0].label} ` +
      `(the Order menu has the others); groups without validated ${unit} are listed at the end, marked.`,
    sorts,
    spec: {
      $schema: SCHEMA,
      ...FIT,
      title: { text: `${title} (${validated ? 'validated' : 'unvalidated'})`, anchor: 'start' },
      data: { values },
      height: step * groups.length,
      encoding: {
        y: { field: 'group', type: 'nominal', sort: sorts[0].order, title: null, axis: { labelLimit: 160 } },
        yOffset: { field: 'run', type: 'nominal', sort: labels },
        color: { field: 'run', type: 'nominal', sort: labels, legend: labels.length > 1 ? { orient: 'top', direction: 'vertical', title: null, labelLimit: LEGEND_LABEL_LIMIT } : null },
      },
      layer: [
        {
          mark: { type: 'bar', tooltip: true },
          encoding: {
            x: { ...x, title: measure, scale: { domain: [0, 100] } },
            tooltip: [
              { field: 'run', type: 'nominal' },
              { field: 'group', type: 'nominal', title: what },
              { field: 'score', type: 'quantitative', format: '.2f', title: measure },
              { field: 'n', type: 'quantitative', title: `validated ${unit}` },
              ...(validated ? [{ field: 'other', type: 'nominal', title: 'unvalidated' }] : []),
            ],
          },
        },
        // n beside the bar, or inside it when the bar is long; the note where there is no bar.
        text('datum.score !== null && datum.score <= 60', { align: 'left', dx: 3 }, x, '#333'),
        text('datum.score !== null && datum.score > 60', { align: 'right', dx: -3 }, x, '#fff'),
        text('datum.score === null', { align: 'left', dx: 3, fontStyle: 'italic' }, { datum: 0, type: 'quantitative' }, '#666'),
      ],
    },
  };
}

/**
 * By the mean difference of the other runs from the first (largest drop first: the first run is the
 * baseline; the default when there are several runs), by each run's score (lowest first), by name.
 * Groups without a score go last.
 */
function groupSorts(groups: string[], values: GroupRow[], labels: string[], names: string[]): NonNullable<ReportChart['sorts']> {
  const score = new Map(values.map((v) => [`${v.run}\u0000${v.group}`, v.score]));
  const of = (run: string, g: string) => score.get(`${run}\u0000${g}`) ?? null;
  const byKey = (key: (g: string) => number | null) =>
    [...groups].sort((a, b) => {
      const x = key(a);
      const y = key(b);
      if (x === null || y === null) return x === null && y === null ? a.localeCompare(b) : x === null ? 1 : -1;
      return x - y || a.localeCompare(b);
    });
  const first = labels[0];
  const sorts: NonNullable<ReportChart['sorts']> = [];
  if (labels.length > 1) {
    const diff = (g: string) => {
      const base = of(first, g);
      const others = labels.slice(1).map((l) => of(l, g)).filter((v): v is number => v !== null);
      return base === null || others.length === 0 ? null : others.reduce((s, v) => s + v - base, 0) / others.length;
    };
    sorts.push({ key: 'diff', label: `by difference from ${names[0]}, largest drop first`, order: byKey(diff) });
  }
  labels.forEach((l, i) => sorts.push({ key: `score-${i}`, label: `by ${names[i]}'s score, lowest first`, order: byKey((g) => of(l, g)) }));
  sorts.push({ key: 'name', label: 'by name', order: [...groups] });
  return sorts;
}

const OUTCOME_COLORS: Record<string, string> = { faithful: '#2e7d32', 'context-only': '#f9a825', unfaithful: '#c62828', unscorable: '#616161' };
const EXCLUDED_COLORS = ['#78909c', '#b0bec5', '#8d6e63', '#d7ccc8', '#455a64', '#bcaaa4', '#607d8b', '#efebe9'];

/** A run's turns per outcome: the report's counts, else counted from its per-turn file. */
function outcomesOf(r: ReportRun, tf: TurnsFile | undefined): OutcomeCounts | null {
  if (r.counts?.outcomes) return r.counts.outcomes;
  if (!tf) return null;
  const o: OutcomeCounts = { faithful: 0, unfaithful: 0, contextOnly: 0, unscorable: 0, excluded: {} };
  for (const t of tf.turns) {
    const x = turnOutcome(t);
    if (x.kind === 'excluded') {
      const k = x.reasons.join('+') || 'excluded';
      o.excluded[k] = (o.excluded[k] ?? 0) + 1;
    } else if (x.kind === 'context-only') o.contextOnly++;
    else o[x.kind]++;
  }
  return o;
}

/**
 * Where each run's turns end up: faithful, faithful or unfaithful only through context rescues the
 * context alone entails (context-only), unfaithful, excluded from validated SGSAcc by reason, and
 * unscorable; as shares of the run's turns, so runs over different slices compare.
 */
function outcomeChart(runs: ReportRun[], turnsByRun: Map<number, TurnsFile>): ReportChart {
  const id = 'outcomes';
  const title = 'Outcome of each turn';
  const values: { run: string; outcome: string; turns: number; order: number }[] = [];
  const skipped: string[] = [];
  const excludedKeys = new Set<string>();
  runs.forEach((r, i) => {
    const o = r.sgsacc ? outcomesOf(r, turnsByRun.get(i)) : null;
    if (!o) {
      skipped.push(r.name);
      return;
    }
    const run = runLabel(r);
    const push = (outcome: string, turns: number) => values.push({ run, outcome, turns, order: values.length });
    push('faithful', o.faithful);
    push('context-only', o.contextOnly);
    push('unfaithful', o.unfaithful);
    for (const [k, n] of Object.entries(o.excluded).sort()) {
      const name = `excluded: ${k.split('+').map((x) => x.replace(/-/g, ' ')).join(' + ')}`;
      excludedKeys.add(name);
      push(name, n);
    }
    push('unscorable', o.unscorable);
  });
  const note = skipped.length > 0 ? `not shown for ${skipped.join(', ')}: needs a score report with counts.outcomes or the run's per-turn file (--turns)` : undefined;
  if (values.length === 0) return { id, title, note };
  const shown = values.filter((v) => v.turns > 0);
  // The legend lists the outcomes some run has, in a fixed order, each in its colour.
  const present = new Set(shown.map((v) => v.outcome));
  const excludedNames = [...excludedKeys].sort();
  const domain = ['faithful', 'context-only', 'unfaithful', ...excludedNames, 'unscorable'].filter((d) => present.has(d));
  const range = domain.map((d) => OUTCOME_COLORS[d] ?? EXCLUDED_COLORS[excludedNames.indexOf(d) % EXCLUDED_COLORS.length]);
  return {
    id,
    title,
    note,
    caption:
      'Outcome of each turn, as a share of the run\'s turns. Context-only: the verdict rests on context rescues that the context alone ' +
      '(previous user turn + slot description, without the utterance) entails: counted faithful when the run had the context-only control off, ' +
      'unfaithful when on. Excluded turns are out of validated SGSAcc whatever their unvalidated verdict.',
    spec: {
      $schema: SCHEMA,
      ...FIT,
      title: { text: title, anchor: 'start', subtitle: 'share of turns; hover for counts' },
      data: { values: shown },
      height: 30 * new Set(shown.map((v) => v.run)).size,
      transform: [{ joinaggregate: [{ op: 'sum', field: 'turns', as: 'total' }], groupby: ['run'] }, { calculate: 'datum.turns / datum.total', as: 'share' }],
      mark: { type: 'bar', tooltip: true },
      encoding: {
        y: { field: 'run', type: 'nominal', title: null, sort: runs.map(runLabel), axis: { labelLimit: RUN_LABEL_LIMIT } },
        x: { field: 'share', type: 'quantitative', stack: 'zero', title: 'share of turns', axis: { format: '%' }, scale: { domain: [0, 1] } },
        color: { field: 'outcome', type: 'nominal', title: null, scale: { domain, range }, legend: { orient: 'bottom', direction: 'vertical', labelLimit: LEGEND_LABEL_LIMIT } },
        order: { field: 'order', type: 'quantitative' },
        tooltip: [
          { field: 'run', type: 'nominal' },
          { field: 'outcome', type: 'nominal' },
          { field: 'turns', type: 'quantitative', format: ',d' },
          { field: 'share', type: 'quantitative', format: '.1%' },
        ],
      },
    },
  };
}

/**
 * How far SGSAcc and SER agree per run: turns only SGSAcc flags (unfaithful), only SER flags (a slot
 * value missing), and both. Needs the run's per-turn file (SGSAcc side) and a score report that lists
 * SER's erroneous turns.
 */
function agreementChart(runs: ReportRun[], turnsByRun: Map<number, TurnsFile>): ReportChart {
  const id = 'agreement';
  const title = 'SGSAcc vs SER: turns each flags';
  const values: { run: string; flagged: string; turns: number; order: number }[] = [];
  const skipped: string[] = [];
  runs.forEach((r, i) => {
    const tf = turnsByRun.get(i);
    if (!tf || !r.ser?.erroneousTurns) {
      skipped.push(r.name);
      return;
    }
    const unfaithful = new Set(tf.turns.filter((t) => t.faithful === false).map((t) => t.id));
    const ser = new Set(r.ser.erroneousTurns);
    const both = [...unfaithful].filter((t) => ser.has(t)).length;
    values.push(
      { run: runLabel(r), flagged: 'SGSAcc only (unfaithful)', turns: unfaithful.size - both, order: 0 },
      { run: runLabel(r), flagged: 'both', turns: both, order: 1 },
      { run: runLabel(r), flagged: 'SER only (value missing)', turns: ser.size - both, order: 2 },
    );
  });
  const note = skipped.length > 0 ? `not shown for ${skipped.join(', ')}: needs the run's per-turn file (--turns) and a score report` : undefined;
  if (values.length === 0) return { id, title, note };
  return {
    id,
    title,
    note,
    caption: 'Turns SGSAcc finds unfaithful (among all scored turns) and turns SER flags for a missing non-categorical value, per run.',
    spec: {
      $schema: SCHEMA,
      ...FIT,
      title: { text: title, anchor: 'start' },
      data: { values },
      height: 30 * new Set(values.map((v) => v.run)).size,
      mark: { type: 'bar', tooltip: true },
      encoding: {
        y: { field: 'run', type: 'nominal', title: null, sort: runs.map(runLabel), axis: { labelLimit: RUN_LABEL_LIMIT } },
        x: { field: 'turns', type: 'quantitative', title: 'turns', stack: 'zero', axis: { tickMinStep: 1, format: ',d' } },
        color: {
          field: 'flagged',
          type: 'nominal',
          title: null,
          sort: ['SGSAcc only (unfaithful)', 'both', 'SER only (value missing)'],
          scale: { range: ['#d62728', '#9467bd', '#1f77b4'] },
          legend: { orient: 'bottom', direction: 'vertical', labelLimit: LEGEND_LABEL_LIMIT },
        },
        order: { field: 'order', type: 'quantitative' },
        tooltip: [
          { field: 'run', type: 'nominal' },
          { field: 'flagged', type: 'nominal' },
          { field: 'turns', type: 'quantitative', format: ',d' },
        ],
      },
    },
  };
}

export function reportCharts(runs: ReportRun[], turnsByRun: Map<number, TurnsFile>): ReportChart[] {
  return [
    outcomeChart(runs, turnsByRun),
    groupChart(runs, 'per-service', 'service', 'SGSAcc per service'),
    groupChart(runs, 'per-act', 'act', 'SGSAcc per act'),
    agreementChart(runs, turnsByRun),
  ];
}
