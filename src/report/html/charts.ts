import type { ReportRun, TurnsFile } from './runs.js';

/** A Vega-Lite spec as plain JSON (rendered in the page by vega-embed). */
export type VegaLiteSpec = Record<string, unknown>;

export interface ReportChart {
  id: string;
  title: string;
  /** Why the chart is absent, when it is. */
  note?: string;
  spec?: VegaLiteSpec;
}

/** The label of a run in charts: a stand-in run says so in every legend. */
export function runLabel(r: ReportRun): string {
  return r.standin ? `${r.name} (stand-in, not SGSAcc)` : r.name;
}

function groupChart(runs: ReportRun[], id: string, what: 'service' | 'act', title: string): ReportChart {
  const pick = (r: ReportRun) => (what === 'service' ? r.sgsacc?.perService : r.sgsacc?.perAct) ?? {};
  // Validated SGSAcc when any run has it; otherwise every run falls back to unvalidated.
  const useValidated = runs.some((r) => Object.values(pick(r)).some((g) => g.validated !== null));
  const values = runs.flatMap((r) =>
    Object.entries(pick(r))
      .map(([key, g]) => ({
        run: runLabel(r),
        [what]: key,
        sgsacc: useValidated ? g.validated : g.unvalidated,
        n: useValidated ? g.validatedN : g.unvalidatedN,
      }))
      .filter((v) => v.sgsacc !== null),
  );
  if (values.length === 0) return { id, title, note: 'no run has per-' + what + ' SGSAcc' };
  const measure = `${useValidated ? 'validated' : 'unvalidated'} SGSAcc (%)`;
  return {
    id,
    title,
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { text: `${title} (${useValidated ? 'validated' : 'unvalidated'})`, anchor: 'start' },
      data: { values },
      // A group per service/act, as wide as fits a page (at least 10 px a bar).
      width: { step: Math.max(10 * runs.length, Math.min(60, Math.floor(1080 / Math.max(1, new Set(values.map((v) => v[what])).size)))) },
      height: 220,
      mark: { type: 'bar', tooltip: true },
      encoding: {
        x: { field: what, type: 'nominal', sort: 'ascending', axis: { labelAngle: -40, title: null } },
        xOffset: { field: 'run', type: 'nominal' },
        y: { field: 'sgsacc', type: 'quantitative', title: measure, scale: { domain: [0, 100] } },
        color: { field: 'run', type: 'nominal', legend: { orient: 'bottom', title: null, labelLimit: 400 } },
        tooltip: [
          { field: 'run', type: 'nominal' },
          { field: what, type: 'nominal' },
          { field: 'sgsacc', type: 'quantitative', format: '.2f', title: measure },
          { field: 'n', type: 'quantitative', title: what === 'service' ? 'turns' : 'actions' },
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
    spec: {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: { text: title, anchor: 'start', subtitle: 'SGSAcc: unfaithful among all scored turns; SER: turns missing a non-categorical value' },
      data: { values },
      width: 520,
      height: { step: 28 },
      mark: { type: 'bar', tooltip: true },
      encoding: {
        y: { field: 'run', type: 'nominal', title: null, axis: { labelLimit: 300 } },
        x: { field: 'turns', type: 'quantitative', title: 'turns', stack: 'zero', axis: { tickMinStep: 1, format: 'd' } },
        color: {
          field: 'flagged',
          type: 'nominal',
          title: null,
          sort: ['SGSAcc only (unfaithful)', 'both', 'SER only (value missing)'],
          scale: { range: ['#d62728', '#9467bd', '#1f77b4'] },
          legend: { orient: 'bottom' },
        },
        order: { field: 'order', type: 'quantitative' },
        tooltip: [
          { field: 'run', type: 'nominal' },
          { field: 'flagged', type: 'nominal' },
          { field: 'turns', type: 'quantitative' },
        ],
      },
    },
  };
}

export function reportCharts(runs: ReportRun[], turnsByRun: Map<number, TurnsFile>): ReportChart[] {
  return [
    groupChart(runs, 'per-service', 'service', 'SGSAcc per service'),
    groupChart(runs, 'per-act', 'act', 'SGSAcc per act'),
    agreementChart(runs, turnsByRun),
  ];
}
