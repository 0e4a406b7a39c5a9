import path from 'node:path';
import { MIN_BOOTSTRAP_UNITS } from '../../metrics/significance/units.js';
import { turnOutcome } from '../../metrics/sgsacc/outcome.js';
import { COLUMN_METRICS, significanceCaption, type RunSignificance } from '../stats/run-significance.js';
import { systemsNotComparable } from '../../util/signature.js';
import { RUN_COLUMNS, type RunColumn } from './columns.js';
import type { ReportRun, TurnLine, TurnsFile } from './runs.js';

/**
 * Why a run lists a turn: it fails it (unfaithful, validated or not), the ground truth failed
 * validation (excluded), an action was credited through the context premise (rescued), or an
 * action's context rescue is one the context alone entails (context-only). With sentence
 * granularity, a sentence no fact supports also makes the turn failing (unsupported-sentence).
 */
export type TurnReason = 'failing' | 'excluded' | 'rescued' | 'context-only' | 'unsupported-sentence';

/**
 * One action as the page shows it: [act, slot, reference, entailment plain, entailment with
 * context (or null), entailed 0/1, the context premise decided 0/1, the context alone entails 0/1].
 */
export type PageAction = [string, string, string, number | null, number | null, 0 | 1, 0 | 1, 0 | 1];

/** One run's view of one turn, compact: the page holds thousands of these. */
export interface TurnEntry {
  /** Index of the run in PageData.runs. */
  r: number;
  /** Reasons this run lists the turn (may be empty when another run lists it). */
  why: TurnReason[];
  /** validated / excluded / unchecked, and the exclusion reasons. */
  v: string;
  ex?: string[];
  faithful: boolean | null;
  /** The turn's outcome in this run (turnOutcome): faithful, unfaithful, context-only, unscorable, excluded. */
  o: string;
  /** The scored system utterance. */
  u: string;
  a: PageAction[];
  /**
   * With sentence granularity: the sentences no fact supports, as [start, end, contradicted 0/1]
   * offsets into `u` (the page highlights them).
   */
  s?: [number, number, 0 | 1][];
}

export interface PageTurn {
  id: string;
  services: string[];
  acts: string[];
  /** The previous user turn (the same for every run). */
  prev: string;
  runs: TurnEntry[];
}

/** A run's row of the runs table: its values keyed by RunColumn.key, plus what every row needs. */
export interface PageRun {
  name: string;
  file: string;
  kind: ReportRun['kind'];
  signatureText: string;
  model: string | null;
  standin: boolean;
  hasTurns: boolean;
  /** The run withdrew context-only rescues (`--context-control`). */
  contextControl: boolean;
  /** Its per-turn file has sentence verdicts (`score --granularity sentence`); absent otherwise. */
  sentences?: true;
  values: Record<string, number | string | null>;
}

export interface PageData {
  title: string;
  /** The runs table's columns: the main ones, then those shown in each run's detail row. */
  columns: RunColumn[];
  runs: PageRun[];
  warnings: string[];
  turns: PageTurn[];
  /** Turns each run's per-turn file holds, and how many of them it lists. */
  /** Per run with a per-turn file, in run order: its turns, those listed, those it fails. */
  turnCounts: { run: string; total: number; listed: number; failing: number }[];
  /** What the ± and "vs baseline" columns are (test, n, seed, unit, level), and why a run lacks them. */
  significance: { caption: string; notes: string[] } | null;
}

export function signatureWarnings(runs: ReportRun[]): string[] {
  const warnings: string[] = [];
  const standins = runs.filter((r) => r.standin);
  if (standins.length > 0) {
    warnings.push(
      `${standins.map((r) => r.name).join(', ')} ${standins.length === 1 ? 'uses' : 'use'} a stand-in NLI model ` +
        `(${[...new Set(standins.map((r) => r.model))].join(', ')}), not a language model: ${standins.length === 1 ? 'its' : 'their'} numbers are NOT SGSAcc.`,
    );
  }
  // compare's rule (util/signature.ts): by content, apart from the keys that name each run's system.
  const [first, ...rest] = runs;
  for (const r of rest) {
    const why = systemsNotComparable(first, r);
    if (why !== null) warnings.push(`${r.name} and ${first.name} differ in signature (${why}): their scores are not comparable with each other.`);
  }
  return warnings;
}

function reasonsOf(t: TurnLine): TurnReason[] {
  const why: TurnReason[] = [];
  if (t.faithful === false) why.push('failing');
  if (t.validation === 'excluded') why.push('excluded');
  if (t.actions.some((a) => a.contextUsed && a.entailed)) why.push('rescued');
  if (t.actions.some((a) => a.contextUsed && a.contextOnly === true)) why.push('context-only');
  if (t.sentences && t.sentences.unsupported.length > 0) {
    if (!why.includes('failing')) why.unshift('failing');
    why.push('unsupported-sentence');
  }
  return why;
}

function entry(r: number, t: TurnLine): TurnEntry {
  const e: TurnEntry = {
    r,
    why: reasonsOf(t),
    v: t.validation,
    faithful: t.faithful,
    o: turnOutcome(t).kind,
    u: t.utterance ?? '',
    a: t.actions.map((a) => [
      a.act,
      a.slot,
      a.reference,
      a.plainEntailment ?? (a.contextUsed ? null : a.entailment),
      a.contextEntailment ?? (a.contextUsed ? a.entailment : null),
      a.entailed ? 1 : 0,
      a.contextUsed ? 1 : 0,
      a.contextUsed && a.contextOnly === true ? 1 : 0,
    ]),
  };
  if (t.exclusionReasons && t.exclusionReasons.length > 0) e.ex = t.exclusionReasons;
  if (t.sentences) {
    e.s = t.sentences.sentences
      .filter((x) => x.verdict === 'unsupported' || x.verdict === 'contradicted')
      .map((x): [number, number, 0 | 1] => [x.start, x.end, x.verdict === 'contradicted' ? 1 : 0]);
  }
  return e;
}

/** The runs table's values of a run, keyed by column. */
function runValues(r: ReportRun): PageRun['values'] {
  const c = r.counts;
  return {
    validated: r.sgsacc?.validated?.all ?? null,
    validatedSeen: r.sgsacc?.validated?.seen ?? null,
    validatedUnseen: r.sgsacc?.validated?.unseen ?? null,
    unvalidated: r.sgsacc?.unvalidated?.all ?? null,
    ser: r.ser?.ser ?? null,
    bleu: r.bleu,
    inform: r.inform,
    success: r.success,
    model: r.model,
    richness: r.richness?.num_trigrams ?? null,
    turns: c?.turns ?? null,
    evaluated: c?.evaluated ?? null,
    excluded: c?.excluded ?? null,
    rescued: c?.contextRescued ?? null,
    contextOnly: c?.contextOnly ?? null,
    contextControl: r.sgsacc ? (r.contextControl ? 'on: context-only rescues withdrawn' : 'off: counted, not withdrawn') : null,
  };
}

const SGSACC_METRICS = new Set(['sgsacc', 'sgsacc-all']);

/** "μ = 95.07 ± 0.60 (95% [94.45, 95.66]); p = 0.0020 *", one metric of one run for its detail row. */
function figureText(s: RunSignificance, run: number, id: string, standin: boolean): string | null {
  const c = s.runs[run].confidence?.[id];
  const p = s.runs[run].pValues?.[id];
  const parts: string[] = [];
  const low = s.runs[run].lowUnits?.includes(id) === true;
  if (c) parts.push(`μ = ${c.mean.toFixed(2)} ± ${c.ci.toFixed(2)} (95% [${c.low.toFixed(2)}, ${c.high.toFixed(2)}])${c.lowUnits ? ' †' : ''}`);
  if (run === s.baseline && s.runs.length > 1) parts.push('baseline');
  else if (p !== undefined) parts.push(`p = ${p.toFixed(4)}${p <= s.alpha ? ' *' : ''}${low ? ' †' : ''}`);
  if (parts.length === 0) return null;
  if (c?.lowUnits || low) parts.push(`† ${c?.units ?? ''} ${c?.unit ?? 'unit'}s: too few for a bootstrap (fewer than ${MIN_BOOTSTRAP_UNITS}; docs/significance.md)`.replace('†  ', '† '));
  return parts.join('; ') + (standin && SGSACC_METRICS.has(id) ? ' (stand-in model: not SGSAcc)' : '');
}

/** The significance's metric as the table names it (its column's label), else its own name. */
function metricLabel(s: RunSignificance, columns: RunColumn[]): string {
  const key = COLUMN_METRICS.find(([, id]) => id === s.metric)?.[0];
  return columns.find((c) => c.key === key)?.label ?? s.metricName;
}

/**
 * The ± and "vs baseline" columns of the significance's metric, placed right after that metric's
 * column (at the end when it has none), and a detail entry per metric with every run's figures.
 */
function significanceColumns(s: RunSignificance, runs: ReportRun[], rows: PageRun[], columns: RunColumn[]): RunColumn[] {
  const base = runs[s.baseline].name;
  const sgsacc = SGSACC_METRICS.has(s.metric);
  const test = s.test === 'bs' ? `paired bootstrap, ${s.n} resamples` : `paired approximate randomization, ${s.n} trials`;
  // What this metric resampled: dialogue-level metrics resample dialogues whatever --unit says.
  const level = s.runs.map((r) => r.confidence?.[s.metric]?.unit).find((u) => u !== undefined) ?? s.unit;
  const added: RunColumn[] = [
    { key: 'ci', label: '± 95%', digits: 2, format: 'pm', sgsacc, title: `${metricLabel(s, columns)}: half the width of the 95% bootstrap interval (${s.confidenceN} resamples, seed ${s.seed}, by ${level})` },
  ];
  if (runs.length > 1) {
    added.push({ key: 'pValue', label: 'vs baseline', format: 'pvalue', alpha: s.alpha, baseline: base, sgsacc, title: `${metricLabel(s, columns)}: p-value against ${base} (${test}, seed ${s.seed}, by ${level}); * marks p ≤ ${s.alpha}` });
  }
  const lowNote = `too few units for a bootstrap (fewer than ${MIN_BOOTSTRAP_UNITS}): it claims more than it shows (docs/significance.md)`;
  rows.forEach((r, i) => {
    const c = s.runs[i].confidence?.[s.metric];
    r.values.ci = c?.ci ?? null;
    // † on the table's own cells too, not only in the detail row: the figure most read is the one marked.
    r.values.ciLow = c?.lowUnits ? `${c.units} ${c.unit}s: ${lowNote}` : null;
    if (runs.length > 1) {
      r.values.pValue = s.runs[i].pValues?.[s.metric] ?? null;
      r.values.pValueLow = s.runs[i].lowUnits?.includes(s.metric) ? `${c?.units ?? ''} ${c?.unit ?? 'unit'}s: ${lowNote}`.trim() : null;
    }
  });
  const ids = [...new Set(s.runs.flatMap((r) => [...Object.keys(r.confidence ?? {}), ...Object.keys(r.pValues ?? {})]))];
  const order = COLUMN_METRICS.map(([, id]) => id);
  ids.sort((a, b) => (order.indexOf(a) < 0 ? 99 : order.indexOf(a)) - (order.indexOf(b) < 0 ? 99 : order.indexOf(b)));
  const details: RunColumn[] = ids.map((id) => {
    const name = s.runs.map((r) => r.confidence?.[id]?.metric).find((x) => x !== undefined) ?? id;
    rows.forEach((r, i) => (r.values[`sig:${id}`] = figureText(s, i, id, runs[i].standin)));
    return { key: `sig:${id}`, label: name, detail: true };
  });
  const column = COLUMN_METRICS.find(([, id]) => id === s.metric)?.[0];
  const main = columns.filter((c) => !c.detail);
  const at = column ? main.findIndex((c) => c.key === column) : -1;
  const withSig = at >= 0 ? [...main.slice(0, at + 1), ...added, ...main.slice(at + 1)] : [...main, ...added];
  return [...withSig, ...columns.filter((c) => c.detail), ...details];
}

/**
 * What the page embeds: the runs' numbers and every turn that some run lists (fails, excludes,
 * rescues by context, or credits through the context alone), with each run's view side by side.
 */
export function buildPageData(runs: ReportRun[], turnsByRun: Map<number, TurnsFile>, title: string, significance: RunSignificance | null = null): PageData {
  const byId = new Map<string, PageTurn>();
  const order: string[] = [];
  const turnCounts: PageData['turnCounts'] = [];
  const lines = new Map<number, Map<string, TurnLine>>();
  for (const [r, tf] of turnsByRun) lines.set(r, new Map(tf.turns.map((t) => [t.id, t])));
  for (const [r, tf] of [...turnsByRun].sort((a, b) => a[0] - b[0])) {
    let listed = 0;
    let failing = 0;
    for (const t of tf.turns) {
      const why = reasonsOf(t);
      if (why.length === 0) continue;
      listed++;
      if (why.includes('failing')) failing++;
      if (byId.has(t.id)) continue;
      const runsView: TurnEntry[] = [];
      for (const [r2, m] of [...lines].sort((a, b) => a[0] - b[0])) {
        const t2 = m.get(t.id);
        if (t2) runsView.push(entry(r2, t2));
      }
      byId.set(t.id, {
        id: t.id,
        services: t.services,
        acts: [...new Set(t.actions.map((a) => a.act))],
        prev: t.previousUserUtterance ?? '',
        runs: runsView,
      });
      order.push(t.id);
    }
    turnCounts.push({ run: runs[r].name, total: tf.turns.length, listed, failing });
  }
  const rows = runs.map((r, i) => ({
    name: r.name,
    file: path.basename(r.file),
    kind: r.kind,
    signatureText: r.signatureText,
    model: r.model,
    standin: r.standin,
    hasTurns: turnsByRun.has(i),
    contextControl: r.contextControl,
    ...(turnsByRun.get(i)?.turns.some((t) => t.sentences !== undefined) ? { sentences: true as const } : {}),
    values: runValues(r),
  }));
  // A column no run has a value for (Inform and Success of score runs) only takes width.
  const columns = RUN_COLUMNS.filter((c) => c.detail || rows.some((r) => r.values[c.key] !== null && r.values[c.key] !== undefined));
  return {
    title,
    columns: significance ? significanceColumns(significance, runs, rows, columns) : columns,
    runs: rows,
    warnings: signatureWarnings(runs),
    turns: order.map((id) => byId.get(id)!),
    turnCounts,
    significance: significance
      ? {
          caption:
            significanceCaption(significance, runs[significance.baseline].name, runs.length > 1, metricLabel(significance, columns)) +
            (SGSACC_METRICS.has(significance.metric) && runs.some((r) => r.standin) ? ' For runs with a stand-in model these are not SGSAcc figures.' : ''),
          notes: significance.notes,
        }
      : null,
  };
}
