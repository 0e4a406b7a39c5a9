import { MIN_BOOTSTRAP_UNITS } from '../../metrics/significance/units.js';
import type { RunSignificance } from '../stats/run-significance.js';

/** What the significance columns hold, run by run, and what they lack (on stdout; the page says the same). */
export function formatSignificanceLines(s: RunSignificance, names: readonly string[], standin: boolean): string {
  const test = s.test === 'bs' ? `paired bootstrap, ${s.n} resamples` : `approximate randomization, ${s.n} trials`;
  const compared = s.runs.filter((r) => r.pValues !== null).length;
  const runs = names.length;
  const name = standin && s.metric.startsWith('sgsacc') ? `${s.metric} (a stand-in model's: not SGSAcc)` : s.metricName;
  const width = Math.max(...names.map((n) => n.length));
  const lines = [
    `significance: ${name}: ± of ${s.runs.filter((r) => r.confidence !== null).length} of ${runs} runs` +
      (runs > 1 ? `, p-values of ${compared} of ${runs - 1} against the first (${test}, alpha ${s.alpha})` : '') +
      `; seed ${s.seed}, by ${s.unit}`,
    ...s.runs.map((r, k) => {
      const c = r.confidence?.[s.metric];
      const p = r.pValues?.[s.metric];
      const ci = c ? `${c.score.toFixed(2).padStart(6)} ± ${c.ci.toFixed(2)}` : '     –';
      const low = c?.lowUnits || r.lowUnits?.includes(s.metric);
      const vs = k === s.baseline ? (runs > 1 ? '  baseline' : '') : p === undefined ? '  p –' : `  p = ${p.toFixed(4)}${p <= s.alpha ? ' *' : ''}`;
      return `  ${names[k].padEnd(width)}  ${ci}${vs}${low ? ' †' : ''}`;
    }),
    ...lowUnitsLine(s),
    ...s.notes.map((n) => `significance: ${n}`),
  ];
  return lines.join('\n') + '\n';
}

/** One line for the runs whose ± or p-value rests on too few units (marked † above), if any. */
function lowUnitsLine(s: RunSignificance): string[] {
  const low = s.runs.find((r) => r.confidence?.[s.metric]?.lowUnits || r.lowUnits?.includes(s.metric));
  if (!low) return [];
  const c = s.runs.map((r) => r.confidence?.[s.metric]).find((x) => x !== undefined);
  const units = c ? `${c.units} ${c.unit}${c.units === 1 ? '' : 's'}` : 'these units';
  return [
    `significance: † ${units}: too few for a bootstrap (fewer than ${MIN_BOOTSTRAP_UNITS}): its ± and p-values claim more than they show (docs/significance.md); --paired-ar counts every swap pattern on so few`,
  ];
}
