import { statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { runStepsAsync } from '../../metrics/significance/steps.js';
import { buildHtmlReportSteps, defaultTurnsCsv } from '../../report/html/index.js';
import { MIN_BOOTSTRAP_UNITS } from '../../metrics/significance/units.js';
import type { RunSignificance } from '../../report/run-significance.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { InputError } from '../../util/errors.js';
import { positiveInt } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';
import { addPairedTestOptions, seedFrom, unitOption, type SignificanceFlags } from '../significance-options.js';

interface ReportFlags extends Omit<SignificanceFlags, 'confidence'> {
  output?: string;
  turns?: string[];
  out?: string[];
  items?: string[];
  title?: string;
  csv?: string;
  significance: boolean;
  significanceMetric?: string;
  unit: 'dialogue' | 'turn';
  commonItems?: boolean;
  allowPartial?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('report')
    .description('one self-contained HTML report of runs: comparison table, signatures, charts, failing turns (opens offline)')
    .argument('<runs...>', 'run reports: the JSON of todeval score -o or todeval evaluate -o')
    .option('-o, --output <file>', 'the HTML file to write', 'report.html')
    .option('--turns <files...>', "per-turn JSONL files of the runs (todeval score's --turns/--out), for the failing turns and the SGSAcc/SER agreement")
    .option('--out <files...>', 'alias of --turns')
    .option('--title <text>', 'page title', 'todeval report')
    .option('--csv <file>', "also write the failing turns as CSV (the page's CSV button with no filter set)")
    .option('--items <files...>', "evaluate runs' per-item statistics (todeval evaluate --items), for their ± and vs-baseline columns")
    .option('--no-significance', 'leave out the ± and vs-baseline columns (computed when some run has per-item statistics)')
    .option('--significance-metric <id>', 'the metric of the ± and vs-baseline columns, a todeval compare metric id (default: the first column that has statistics)')
    .option('--confidence-n <n>', 'bootstrap resamples of each run\'s 95% interval, the ±', positiveInt('--confidence-n'), 1000)
    .addOption(unitOption())
    .option('--common-items', 'compare a run with the baseline on the items both have, instead of leaving it without a p-value')
    .option('--allow-partial', 'accept a --turns file that covers fewer turns than its run report, its statistics marked partial (refused otherwise)');
  addPairedTestOptions(cmd, true);
  cmd.action((runs: string[], flags: ReportFlags, command: Command) => runReport(runs, flags, command.getOptionValueSource('output') === 'default'));
}

async function runReport(runs: string[], flags: ReportFlags, defaultOutput: boolean): Promise<void> {
  const output = flags.output ?? 'report.html';
  const turns = [...(flags.turns ?? []), ...(flags.out ?? [])];
  const inputs: Record<string, string> = {};
  runs.forEach((r, i) => (inputs[`run ${i + 1}`] = r));
  turns.forEach((t, i) => (inputs[`--turns ${i + 1}`] = t));
  (flags.items ?? []).forEach((t, i) => (inputs[`--items ${i + 1}`] = t));
  refuseOutputOverInput({ '-o/--output': output, ...(flags.csv ? { '--csv': flags.csv } : {}) }, inputs);
  if (!output.toLowerCase().endsWith('.html') && !output.toLowerCase().endsWith('.htm')) {
    throw new InputError('-o/--output must name an .html file', { file: output });
  }
  if (flags.csv && path.resolve(flags.csv) === path.resolve(output)) throw new InputError('--csv and -o/--output name the same file', { file: flags.csv });
  const started = performance.now();
  // Resampled between turns of the event loop: Ctrl-C or SIGTERM ends the run within a second.
  const { html, listedTurns, data, significance, runs: loaded } = await runStepsAsync(buildHtmlReportSteps({
    runs,
    turns,
    items: flags.items,
    title: flags.title,
    allowPartial: flags.allowPartial === true,
    significance: flags.significance
      ? {
          test: flags.pairedAr ? 'ar' : 'bs',
          samples: flags.pairedAr ? flags.pairedArN : flags.pairedBsN,
          confidenceSamples: flags.confidenceN,
          seed: seedFrom(flags.seed),
          unit: flags.unit,
          alpha: flags.alpha,
          commonItems: flags.commonItems === true,
          metric: flags.significanceMetric,
        }
      : false,
  }));
  // Written to a temporary file and renamed: an interrupted run never leaves half a report.
  writeFileAtomic(output, html);
  const bytes = statSync(output).size;
  // Without -o the page lands in the working folder under a name the user never typed: say where.
  const where = defaultOutput ? `${path.resolve(output)} (no -o given: report.html in the working folder)` : output;
  const standinRuns = loaded.some((r) => r.standin);
  process.stdout.write(
    `report: ${where} (${(bytes / 2 ** 20).toFixed(2)} MiB; ${runs.length} run${runs.length === 1 ? '' : 's'}, ` +
      `${listedTurns.toLocaleString('en-US')} listed turns; ${((performance.now() - started) / 1000).toFixed(2)} s)\n`,
  );
  if (significance) process.stdout.write(significanceLine(significance, loaded.map((r) => r.name), standinRuns));
  if (flags.csv) {
    const csv = defaultTurnsCsv(data);
    writeFileAtomic(flags.csv, csv);
    const rows = csv.split('\r\n').length - 2;
    process.stdout.write(`csv: ${flags.csv} (${rows.toLocaleString('en-US')} rows: failing turns, one row per turn and run)\n`);
  }
}

/** What the significance columns hold, run by run, and what they lack (on stdout; the page says the same). */
function significanceLine(s: RunSignificance, names: readonly string[], standin: boolean): string {
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
