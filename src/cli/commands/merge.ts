import type { Command } from 'commander';
import { formatGcdf1Report } from '../../report/text/gcdf1-text.js';
import { formatSgsaccReport } from '../../metrics/sgsacc/report.js';
import { formatRerankReport } from '../../rerank/summary.js';
import { refuseWeakerReport, scoreReportCoverage } from '../../pipeline/report-guard.js';
import { mergeRunShards } from '../../shard/run-merge.js';
import { formatEvaluation } from '../../report/text/evaluate-text.js';
import { addTurnsOption, jsonToStdout } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';
import { holdRunLocks } from '../../util/run-lock.js';

interface MergeFlags {
  output: string;
  turns?: string;
  references?: string;
  perDialogue?: string;
  json?: boolean;
  force?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('merge')
    .description('join the reports of a run split with --shard K/N into the report of the whole run')
    .argument('<shard...>', 'the shard reports (score, rerank, evaluate or gcdf1 -o files), one per shard, any order')
    .requiredOption('-o, --output <file>', 'the merged report (JSON)')
    .option('--json', 'print the merged report as JSON on stdout instead of the tables')
    .option('--force', 'replace a complete score report at -o with one of fewer turns or less of the ground truth');
  addTurnsOption(cmd, "the merged per-turn (score) or per-item (rerank) records: the shards' --turns files joined").option(
    '--references <file>',
    "the shards' references files joined into one (score run with --references)",
  ).option('--per-dialogue <file>', "each dialogue's GCDF1 scores and behaviours for the whole run (gcdf1 shards), as gcdf1 --per-dialogue writes them");
  cmd.action((files: string[], flags: MergeFlags) => {
    refuseOutputOverInput(
      { '-o/--output': flags.output, '--turns': flags.turns, '--references': flags.references, '--per-dialogue': flags.perDialogue },
      Object.fromEntries(files.map((f, i) => [`shard report ${i + 1}`, f])),
    );
    // merge appends to --turns and --references stores as a run does: one writer at a time.
    holdRunLocks([flags.output, flags.turns, flags.references]);
    const merged = mergeRunShards(files, {
      output: flags.output,
      turns: flags.turns,
      references: flags.references,
      perDialogue: flags.perDialogue,
      beforeWrite: (run) => {
        if (run.kind === 'score') refuseWeakerReport(flags.output, scoreReportCoverage(run.report), flags.force);
      },
    });
    if (jsonToStdout(flags)) process.stdout.write(JSON.stringify(merged.report, null, 2) + '\n');
    else if (merged.kind === 'score') process.stdout.write(formatSgsaccReport(merged.report));
    else if (merged.kind === 'rerank') process.stdout.write(formatRerankReport(merged.report));
    else if (merged.kind === 'gcdf1') {
      process.stdout.write(formatGcdf1Report(merged.report));
    } else process.stdout.write(formatEvaluation(merged.report));
    process.stderr.write(`todeval: merged ${files.length} shards into ${flags.output}\n`);
  });
}
