import type { Command } from 'commander';
import { runGcdf1Pipeline } from '../../pipeline/gcdf1.js';
import { formatGcdf1Report } from '../../report/text/gcdf1-text.js';
import { barProgress, progressBar, progressOption, type ProgressMode } from '../../util/progress/bar.js';
import { stderrHooks } from '../hooks.js';
import { addShardOptions, applySlurmArrayShard, requireShardOutput, type ShardFlags } from '../shard-options.js';
import { addDataDirOption, addLimitOption } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';

interface Gcdf1Flags extends ShardFlags {
  dialogues: string;
  config?: string;
  canonicalMap?: string | false;
  output?: string;
  perDialogue?: string;
  dataDir?: string;
  skipInvalid?: boolean;
  json?: boolean;
  limit?: number;
  progress: ProgressMode;
}

export function register(program: Command): void {
  const cmd = program
    .command('gcdf1')
    .description('I-GCDF1 and R-GCDF1 of a user model from its conversations (SGD format with goal and NLU per turn)')
    .requiredOption('-d, --dialogues <dir>', 'directory of dialogues_*.json conversations, each with a `goal`')
    .option('-c, --config <file>', "evaluator configuration in the reference's YAML shape (default: the published settings)")
    .option('--canonical-map <file>', 'value paraphrase map (default: gcdf1/resources/multiwoz21_canonical_map.json in the data dir)')
    .option('--no-canonical-map', 'no paraphrase map: values are fuzzy-matched against the goal values only')
    .option('-o, --output <file>', "write the scores (reference JSON structure) with counts, behaviours and signature")
    .option('--per-dialogue <file>', 'write each dialogue\'s scores and detected behaviours as JSON');
  addDataDirOption(cmd)
    .option('--skip-invalid', 'list malformed dialogues and evaluate the rest')
    .option('--json', 'print the report as JSON on stdout instead of the tables');
  addLimitOption(cmd, 'dialogues (in file and id order)').addOption(progressOption());
  addShardOptions(cmd, 'dialogues', { workers: false }).action((flags: Gcdf1Flags) => {
    // In a Slurm array task with no --shard, the task's shard (src/shard/spec.ts shardFromSlurmArray).
    applySlurmArrayShard(flags);
    runGcdf1(flags);
  });
}

/** Flags -> the GCDF1 pipeline -> the tables (or JSON) on stdout. */
function runGcdf1(flags: Gcdf1Flags): void {
  refuseOutputOverInput(
    { '-o/--output': flags.output, '--per-dialogue': flags.perDialogue },
    { '-d/--dialogues': flags.dialogues, '--config': flags.config, '--canonical-map': typeof flags.canonicalMap === 'string' ? flags.canonicalMap : undefined },
  );
  requireShardOutput(flags, flags.output);
  const bar = progressBar('gcdf1 {bar} {value}/{total} dialogues', { clearOnComplete: true }, flags.progress);
  try {
    const { report } = runGcdf1Pipeline({
      ...flags,
      hooks: { skipped: stderrHooks.skipped, progress: barProgress(bar) },
    });
    bar?.stop();
    process.stdout.write(flags.json ? JSON.stringify(report, null, 2) + '\n' : formatGcdf1Report(report));
  } finally {
    bar?.stop();
  }
}
