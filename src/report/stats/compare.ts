/**
 * `todeval compare` as a library call: sacreBLEU's paired tests of systems against a baseline on
 * every metric their per-item outputs support, resampling dialogues (or turns) and never re-running
 * a model: runs must share a signature apart from what names the system, and the same items.
 */
import { selectItems, type MetricItems } from '../../metrics/significance/items.js';
import { lowUnitsNote, resamplingUnits } from '../../metrics/significance/confidence.js';
import { pairedApproximateRandomizationSteps, pairedBootstrapSteps } from '../../metrics/significance/paired.js';
import type { Seed } from '../../metrics/significance/pcg64.js';
import { resampleSpec, testSignature, type ResampleSpec, type ResampleUnit } from '../../metrics/significance/spec.js';
import { runSteps, type Steps } from '../../metrics/significance/steps.js';
import type { SystemResult } from '../../metrics/significance/types.js';
import { lowUnitsField } from '../../metrics/significance/units.js';
import { InputError } from '../../util/errors.js';
import type { ItemSource } from './item-files.js';
import { formatComparable, formatProvenance, sharedSignature, systemsNotComparable } from '../../util/signature.js';

export interface CompareOptions {
  /** 'bs' paired bootstrap (default), 'ar' approximate randomization. */
  test?: 'bs' | 'ar';
  /** Resamples (bs, 1000) or trials (ar, 10000). */
  samples?: number;
  seed?: Seed;
  /** Resampling unit of turn-level metrics (default dialogue; dialogue-level metrics always resample dialogues). */
  unit?: ResampleUnit;
  /** Compare on the items every run has, instead of refusing runs whose items differ. */
  commonItems?: boolean;
  /** Metric ids to compare (default: every metric all runs have). */
  metrics?: readonly string[];
}

/** One metric compared: the shape of `todeval bleu --json`, plus what was resampled. */
export interface MetricComparison {
  metric: string;
  /** The metric's id (`--metric`): sgsacc, sgsacc-all, hallucination, ser, bleu, inform, ... */
  id: string;
  test: 'bs' | 'ar';
  n: number;
  seed: number | string;
  /** The test's settings, sacreBLEU-style: `bs:1000|seed:12345|unit:dialogue`. */
  signature: string;
  unit: 'turn' | 'dialogue' | 'item';
  /** Units resampled (dialogues, turns or items). */
  units: number;
  /** Randomization over so few units that all 2^units swap patterns were counted: an exact test. */
  exact?: true;
  /** A bootstrap over fewer units than a 95% interval needs (units.ts): its p-value and ± claim too much. */
  lowUnits?: true;
  /** With commonItems: items of each system left out because another run lacks them. */
  dropped?: Record<string, number>;
  systems: ({ name: string } & SystemResult)[];
}

/** The JSON of `todeval compare --json` (docs/significance.md; keep it stable). */
export interface CompareResult {
  test: 'bs' | 'ar';
  n: number;
  seed: number | string;
  unit: ResampleUnit;
  baseline: string;
  systems: string[];
  /** The runs' shared signature as compared (by content), without the keys that name each system. */
  signature: string;
  /** Where each run's inputs came from (paths, how the data directory was found): shown, never compared. */
  provenance: Record<string, string>;
  comparisons: MetricComparison[];
}

/** "a score-turns", "an evaluate-items": the kind of output with its article. */
function aKind(kind: string): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

/** Refuses runs that are not comparable: another kind of output, or another configuration. */
function checkComparable(sources: readonly ItemSource[]): void {
  const [base, ...rest] = sources;
  for (const s of rest) {
    if (s.kind !== base.kind) throw new InputError(`is ${aKind(s.kind)} output, the baseline (${base.file}) ${aKind(base.kind)} one: compare runs of the same command`, { file: s.file });
    // By content: the same bytes compare from any folder, however the data directory was found.
    const diff = systemsNotComparable(base, s);
    if (diff !== null) throw new InputError(`signature differs from the baseline's (${base.file}) apart from the system: ${diff}`, { file: s.file });
  }
}

function describeUnit(m: MetricItems, n: number): string {
  return `${n} ${m.level === 'dialogue' ? 'dialogue' : m.level}${n === 1 ? '' : 's'}`;
}

/** Every system's items of one metric on the same ids, in the baseline's order. */
function alignItems(id: string, sources: readonly ItemSource[], perSystem: MetricItems[], commonItems: boolean): { aligned: MetricItems[]; dropped?: Record<string, number> } {
  const base = perSystem[0];
  const same = perSystem.every((m) => m.ids.length === base.ids.length && m.ids.every((x, i) => x === base.ids[i]));
  if (same) return { aligned: perSystem };
  const sets = perSystem.map((m) => new Set(m.ids));
  const common = base.ids.filter((x) => sets.every((s) => s.has(x)));
  // The same items in another order are the same items.
  if (perSystem.every((m) => m.ids.length === common.length)) return { aligned: perSystem.map((m) => selectItems(m, common)) };
  if (!commonItems) {
    const k = Math.max(1, perSystem.findIndex((m, i) => i > 0 && (m.ids.length !== common.length || base.ids.length !== common.length)));
    const other = perSystem[k];
    const onlyBase = base.ids.filter((x) => !sets[k].has(x)).length;
    const onlyHere = other.ids.filter((x) => !sets[0].has(x)).length;
    throw new InputError(
      `${id}: ${describeUnit(other, other.ids.length)}, the baseline ${sources[0].file} has ${base.ids.length} ` +
        `(${onlyBase} only in the baseline, ${onlyHere} only here): pass --common-items to compare on the ${common.length} all runs have`,
      { file: sources[k].file },
    );
  }
  if (common.length === 0) throw new InputError(`${id}: the runs have no item in common`, { file: sources[1].file });
  return {
    aligned: perSystem.map((m) => selectItems(m, common)),
    dropped: Object.fromEntries(perSystem.map((m, i) => [sources[i].name, m.ids.length - common.length])),
  };
}

/** Names as given, made unique with a numeric suffix. */
function uniqueNames(sources: readonly ItemSource[]): string[] {
  const seen = new Map<string, number>();
  return sources.map((s) => {
    const n = (seen.get(s.name) ?? 0) + 1;
    seen.set(s.name, n);
    return n > 1 ? `${s.name} (${n})` : s.name;
  });
}

/** The resample spec of compareRuns' options (or the spec itself, its seed already drawn). */
function compareSpec(opts: CompareOptions & { spec?: ResampleSpec }): ResampleSpec {
  // compare's tests come with no intervals of their own (its bootstrap gives them anyway).
  return opts.spec ? { ...opts.spec, confidenceN: null } : resampleSpec({ test: opts.test ?? 'bs', samples: opts.samples, seed: opts.seed, unit: opts.unit });
}

export function compareRuns(sources: readonly ItemSource[], opts: CompareOptions & { spec?: ResampleSpec } = {}): CompareResult {
  return runSteps(compareRunsSteps(sources, opts));
}

export function* compareRunsSteps(sources: readonly ItemSource[], opts: CompareOptions & { spec?: ResampleSpec } = {}): Steps<CompareResult> {
  if (sources.length < 2) throw new InputError('compare needs a baseline and at least one system');
  checkComparable(sources);
  const spec = compareSpec(opts);
  const test = spec.test!;
  const n = spec.n!;
  const seed = spec.seed;
  const unit = spec.unit;
  const names = uniqueNames(sources);
  const available = Object.keys(sources[0].items).filter((id) => sources.every((s) => s.items[id]));
  const unknown = (opts.metrics ?? []).filter((id) => !available.includes(id));
  if (unknown.length > 0) {
    throw new InputError(`--metric ${unknown.join(',')}: not in every run (these runs have: ${available.join(', ') || 'none'})`);
  }
  const ids = opts.metrics ? available.filter((id) => opts.metrics!.includes(id)) : available;
  if (ids.length === 0) throw new InputError('the runs have no metric in common to compare', { file: sources[1].file });
  const comparisons: MetricComparison[] = [];
  for (const id of ids) {
    const { aligned, dropped } = alignItems(id, sources, sources.map((s) => s.items[id]), opts.commonItems === true);
    const units = aligned.map((m) => resamplingUnits(m, unit));
    const metric = units[0].metric;
    const [base, ...rest] = units.map((m) => m.stats);
    const r = test === 'bs' ? yield* pairedBootstrapSteps(base, rest, metric, { samples: n, seed }) : yield* pairedApproximateRandomizationSteps(base, rest, metric, { trials: n, seed });
    const level = units[0].level;
    comparisons.push({
      metric: metric.name,
      id,
      test,
      n,
      seed: spec.seedLabel,
      signature: testSignature(spec, level),
      unit: level,
      units: r.units,
      ...(r.exact ? { exact: true as const } : {}),
      ...lowUnitsField(r.units, test === 'bs'),
      ...(dropped ? { dropped } : {}),
      systems: [r.baseline, ...r.systems].map((x, i) => ({ name: names[i], ...x })),
    });
  }
  return {
    test,
    n,
    seed: spec.seedLabel,
    unit,
    baseline: names[0],
    systems: names,
    signature: formatComparable(sharedSignature(sources[0].signature, sources[0].kind)),
    provenance: Object.fromEntries(sources.map((s, i) => [names[i], formatProvenance(s.signature)])),
    comparisons,
  };
}

const fmt = (x: number | null, digits = 2) => (x === null || !Number.isFinite(x) ? '' : x.toFixed(digits));

/** The text table: one block per metric, the baseline first, significant p-values marked. */
export function formatComparison(r: CompareResult, opts: { alpha?: number } = {}): string {
  const alpha = opts.alpha ?? 0.05;
  const what = r.test === 'bs' ? `paired bootstrap, ${r.n} resamples` : `paired approximate randomization, ${r.n} trials`;
  const rows: string[][] = [['metric', 'unit', 'system', 'score', 'mean ± 95% CI', 'p']];
  for (const c of r.comparisons) {
    c.systems.forEach((s, i) => {
      const ci = s.mean === null || s.ci === null ? '' : `${fmt(s.mean)} ± ${fmt(s.ci)}`;
      const p = s.pValue === null ? '(baseline)' : `${s.pValue.toFixed(4)}${s.pValue <= alpha ? ' *' : ''}${c.lowUnits ? ' †' : ''}`;
      rows.push([i === 0 ? c.metric : '', i === 0 ? `${c.units} ${c.unit}${c.units === 1 ? '' : 's'}` : '', s.name, fmt(s.score), ci, p]);
    });
  }
  const widths = rows[0].map((_, k) => Math.max(...rows.map((row) => row[k].length)));
  const lines = rows.map((row) => row.map((cell, k) => (k === 3 ? cell.padStart(widths[k]) : cell.padEnd(widths[k]))).join('  ').trimEnd());
  const dropped = r.comparisons
    .filter((c) => c.dropped && Object.values(c.dropped).some((v) => v > 0))
    .map((c) => `${c.metric}: ${Object.entries(c.dropped!).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  const exact = r.comparisons.filter((c) => c.exact).map((c) => `${c.metric} (${2 ** c.units} patterns)`);
  const low = lowUnitsNote(r.comparisons.filter((c) => c.lowUnits));
  const notes = [
    `${what}, seed ${r.seed}, resampling ${r.unit === 'dialogue' ? 'dialogues' : 'turns'} (dialogue-level metrics always by dialogue); * marks p <= ${alpha} against the baseline ${r.baseline}`,
    ...(dropped.length > 0 ? [`compared on the items every run has; items left out (turns, dialogues or items of each metric): ${dropped.join('; ')}`] : []),
    ...(exact.length > 0 ? [`exact randomization (every swap pattern counted, as few units allow no more): ${exact.join(', ')}`] : []),
    ...(low ? [`† ${low}; --paired-ar counts every swap pattern on so few units`] : []),
    `signature (shared): ${r.signature}`,
    ...Object.entries(r.provenance ?? {})
      .filter(([, v]) => v !== '')
      .map(([name, v]) => `provenance of ${name} (not compared): ${v}`),
  ];
  return [...lines, '', ...notes].join('\n') + '\n';
}
