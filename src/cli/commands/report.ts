import { statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { buildHtmlReport, defaultTurnsCsv } from '../../report/html/index.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { InputError } from '../../util/errors.js';
import { refuseOutputOverInput } from '../output-guard.js';

interface ReportFlags {
  output?: string;
  turns?: string[];
  out?: string[];
  title?: string;
  csv?: string;
}

export function register(program: Command): void {
  program
    .command('report')
    .description('one self-contained HTML report of runs: comparison table, signatures, charts, failing turns (opens offline)')
    .argument('<runs...>', 'run reports: the JSON of todeval score -o or todeval evaluate -o')
    .option('-o, --output <file>', 'the HTML file to write', 'report.html')
    .option('--turns <files...>', "per-turn JSONL files of the runs (todeval score's --turns/--out), for the failing turns and the SGSAcc/SER agreement")
    .option('--out <files...>', 'alias of --turns')
    .option('--title <text>', 'page title', 'todeval report')
    .option('--csv <file>', "also write the failing turns as CSV (the page's CSV button with no filter set)")
    .action((runs: string[], flags: ReportFlags, cmd: Command) => runReport(runs, flags, cmd.getOptionValueSource('output') === 'default'));
}

function runReport(runs: string[], flags: ReportFlags, defaultOutput: boolean): void {
  const output = flags.output ?? 'report.html';
  const turns = [...(flags.turns ?? []), ...(flags.out ?? [])];
  const inputs: Record<string, string> = {};
  runs.forEach((r, i) => (inputs[`run ${i + 1}`] = r));
  turns.forEach((t, i) => (inputs[`--turns ${i + 1}`] = t));
  refuseOutputOverInput({ '-o/--output': output, ...(flags.csv ? { '--csv': flags.csv } : {}) }, inputs);
  if (!output.toLowerCase().endsWith('.html') && !output.toLowerCase().endsWith('.htm')) {
    throw new InputError('-o/--output must name an .html file', { file: output });
  }
  if (flags.csv && path.resolve(flags.csv) === path.resolve(output)) throw new InputError('--csv and -o/--output name the same file', { file: flags.csv });
  const started = performance.now();
  const { html, listedTurns, data } = buildHtmlReport({ runs, turns, title: flags.title });
  // Written to a temporary file and renamed: an interrupted run never leaves half a report.
  writeFileAtomic(output, html);
  const bytes = statSync(output).size;
  // Without -o the page lands in the working folder under a name the user never typed: say where.
  const where = defaultOutput ? `${path.resolve(output)} (no -o given: report.html in the working folder)` : output;
  process.stdout.write(
    `report: ${where} (${(bytes / 2 ** 20).toFixed(2)} MiB; ${runs.length} run${runs.length === 1 ? '' : 's'}, ` +
      `${listedTurns.toLocaleString('en-US')} listed turns; ${((performance.now() - started) / 1000).toFixed(2)} s)\n`,
  );
  if (flags.csv) {
    const csv = defaultTurnsCsv(data);
    writeFileAtomic(flags.csv, csv);
    const rows = csv.split('\r\n').length - 2;
    process.stdout.write(`csv: ${flags.csv} (${rows.toLocaleString('en-US')} rows: failing turns, one row per turn and run)\n`);
  }
}
