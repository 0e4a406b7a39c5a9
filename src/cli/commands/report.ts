import path from 'node:path';
import type { Command } from 'commander';
import { checkReportOutputs, runReportPipeline } from '../../pipeline/report.js';
import { formatSignificanceLines } from '../../report/text/significance-text.js';
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

/** Flags -> the report pipeline -> where the page went (and the significance columns) on stdout. */
async function runReport(runs: string[], flags: ReportFlags, defaultOutput: boolean): Promise<void> {
  const output = flags.output ?? 'report.html';
  const turns = [...(flags.turns ?? []), ...(flags.out ?? [])];
  const inputs: Record<string, string> = {};
  runs.forEach((r, i) => (inputs[`run ${i + 1}`] = r));
  turns.forEach((t, i) => (inputs[`--turns ${i + 1}`] = t));
  (flags.items ?? []).forEach((t, i) => (inputs[`--items ${i + 1}`] = t));
  refuseOutputOverInput({ '-o/--output': output, ...(flags.csv ? { '--csv': flags.csv } : {}) }, inputs);
  // Before --seed none draws (and prints) a seed.
  checkReportOutputs(output, flags.csv);
  const r = await runReportPipeline({
    runs,
    turns,
    items: flags.items,
    title: flags.title,
    allowPartial: flags.allowPartial === true,
    output,
    csv: flags.csv,
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
  });
  // Without -o the page lands in the working folder under a name the user never typed: say where.
  const where = defaultOutput ? `${path.resolve(output)} (no -o given: report.html in the working folder)` : output;
  process.stdout.write(
    `report: ${where} (${(r.bytes / 2 ** 20).toFixed(2)} MiB; ${runs.length} run${runs.length === 1 ? '' : 's'}, ` +
      `${r.listedTurns.toLocaleString('en-US')} listed turns; ${r.seconds.toFixed(2)} s)\n`,
  );
  if (r.significance) process.stdout.write(formatSignificanceLines(r.significance, r.runs.map((run) => run.name), r.standinRuns));
  if (r.csv) process.stdout.write(`csv: ${r.csv.file} (${r.csv.rows.toLocaleString('en-US')} rows: failing turns, one row per turn and run)\n`);
}
