/**
 * Each report run's per-item statistics, for the significance columns: a score run's from its
 * per-turn file (already read for the failing turns), an evaluate run's from the `--items` file
 * evaluate wrote beside it.
 */
import type { MetricItems } from '../../metrics/significance/items.js';
import type { TurnScore } from '../../metrics/sgsacc/types.js';
import { InputError } from '../../util/errors.js';
import { loadItemSource, scoreTurnsItemSource, type ItemSource } from '../stats/item-files.js';
import type { ReportRun, TurnsFile } from './runs.js';

function fullScore(m: MetricItems): number {
  const w = m.metric.width;
  const sums = new Float64Array(w);
  for (let i = 0; i < m.stats.length; i++) sums[i % w] += m.stats[i];
  return m.metric.score(sums, 0);
}

/**
 * Whether an items file holds the statistics of this evaluate run. Its signature is the run's plus
 * the predictions file (the run's own report does not name it), so the signature alone cannot tell
 * two systems apart: the numbers must agree too. BLEU is the same sum of the same statistics (equal
 * up to the order of additions); Inform and Success are printed rounded to one decimal, so they
 * agree within 0.05; SGSAcc/SER are rates of the same counts.
 */
function holdsRun(src: ItemSource, run: ReportRun): boolean {
  for (const [k, v] of Object.entries(run.signature)) if (JSON.stringify(v) !== JSON.stringify(src.signature[k])) return false;
  const pairs: [string, number | null | undefined, number][] = [
    ['bleu', run.bleu, 1e-9 * Math.max(1, Math.abs(run.bleu ?? 0))],
    ['inform', run.inform, 0.05 + 1e-9],
    ['success', run.success, 0.05 + 1e-9],
    ['sgsacc', run.sgsacc?.validated?.all, 0.05 + 1e-9],
    ['sgsacc-all', run.sgsacc?.unvalidated?.all, 0.05 + 1e-9],
    ['ser', run.ser?.ser, 0.05 + 1e-9],
  ];
  let checked = 0;
  for (const [id, value, tolerance] of pairs) {
    if (value === null || value === undefined) continue;
    const m = src.items[id];
    if (!m) return false;
    if (Math.abs(fullScore(m) - value) > tolerance) return false;
    checked++;
  }
  return checked > 0;
}

/**
 * The statistics of every run, or null where none was given. `itemFiles` are evaluate's `--items`
 * files, each matched to the evaluate run whose signature and numbers it reproduces, whatever the
 * order: refused, in one line, when it matches none, or when it fits several runs that no other
 * file settles (two systems with the same signature and figures within mwzeval's rounding), since
 * taking the first would give one run the other's ± and p-values.
 */
export function runItemSources(runs: readonly ReportRun[], turnsByRun: ReadonlyMap<number, TurnsFile>, itemFiles: readonly string[]): (ItemSource | null)[] {
  const out: (ItemSource | null)[] = runs.map((_, i) => {
    const tf = turnsByRun.get(i);
    return tf ? scoreTurnsItemSource(tf.file, tf.signature, tf.turns as unknown as TurnScore[]) : null;
  });
  const sources = itemFiles.map((file) => {
    const src = loadItemSource(file);
    if (src.kind !== 'evaluate-items') {
      throw new InputError(`is a ${src.kind} file: --items takes the files evaluate --items writes (score's per-turn files go to --turns)`, { file });
    }
    const fits = runs.flatMap((r, i) => (r.kind === 'evaluate' && holdsRun(src, r) ? [i] : []));
    if (fits.length === 0) {
      throw new InputError("matches no evaluate run given: its signature or its numbers (BLEU, Inform, Success) differ from every evaluate report's", { file });
    }
    return { src, fits };
  });
  // A file that fits one free run only takes it; that may leave another file one, and so on.
  const runOf = new Map<number, number>();
  const taken = new Set<number>();
  for (let settled = true; settled; ) {
    settled = false;
    for (const [k, { src, fits }] of sources.entries()) {
      if (runOf.has(k)) continue;
      const free = fits.filter((i) => !taken.has(i));
      if (free.length === 0) throw new InputError(`matches only ${fits.map((i) => runs[i].file).join(' and ')}, whose statistics another --items file holds`, { file: src.file });
      if (free.length === 1) {
        runOf.set(k, free[0]);
        taken.add(free[0]);
        settled = true;
      }
    }
  }
  for (const [k, { src, fits }] of sources.entries()) {
    if (runOf.has(k)) continue;
    const free = fits.filter((i) => !taken.has(i));
    throw new InputError(
      `matches ${free.map((i) => runs[i].file).join(' and ')} alike (the same signature, their figures within mwzeval's rounding): the report cannot tell whose statistics it holds; report these runs one at a time, or compare their items files with todeval compare`,
      { file: src.file },
    );
  }
  for (const [k, i] of runOf) out[i] = { ...sources[k].src, name: runs[i].name };
  return out;
}
