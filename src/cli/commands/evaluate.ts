import { Option, type Command } from 'commander';
import { runEvaluatePipeline, type EvaluateResult } from '../../pipeline/evaluate.js';
import { barProgress, progressBar, progressOption, type ProgressMode } from '../../util/progress/bar.js';
import { formatEvaluation } from '../../report/text/evaluate-text.js';
import { addRunConfidenceOptions, runConfidenceFrom, type RunConfidenceFlags } from '../significance-options.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { addDataDirOption, addInputOption, addLimitOption, reportSkipped } from '../options.js';
// From the modules that define them, not the SGSAcc barrel (index.ts), which loads the whole SGSAcc
// run (datasets, rules, references, ...): a plain evaluate start compiled some 16 modules for nothing.
import { SGSACC_DEFAULTS } from '../../metrics/sgsacc/config.js';
import { GRANULARITIES, type Granularity } from '../../metrics/sgsacc/sentence-check.js';
import type { ReferenceSelection } from '../../metrics/sgsacc/types.js';
import { addContextControlOptions, referenceSelectionOption, sgsaccSettingsOf } from '../sgsacc-options.js';
import { addMwzInputOptions, chrfFrom, chrfWordOrderOption, GROUND_TRUTH_SOURCES } from '../mwz-options.js';
import { refuseOutputOverInput } from '../output-guard.js';
import { InputError } from '../../util/errors.js';
import { addShardOptions, applySlurmArrayShard, requireShardOutput, type ShardFlags } from '../shard-options.js';

interface EvaluateFlags extends NliCliFlags, ShardFlags, RunConfidenceFlags {
  items?: string;
  input: string;
  output?: string;
  bleu?: boolean;
  success?: boolean;
  richness?: boolean;
  dst?: boolean;
  chrf?: boolean;
  chrfWordOrder?: number;
  ter?: boolean;
  sgsacc?: boolean;
  dataDir?: string;
  groundTruth: 'auto' | 'mwz21' | 'mwz22';
  strict?: boolean;
  skipInvalid?: boolean;
  rebuildGroundTruth?: boolean;
  json?: boolean;
  limit?: number;
  domainsFromSlots?: boolean;
  referenceSelection: ReferenceSelection;
  contextControl: boolean;
  granularity?: Granularity;
  skipDelexicalized?: boolean;
  progress: ProgressMode;
}


export function register(program: Command): void {
  const cmd = program
    .command('evaluate')
    .description('MultiWOZ context-to-response metrics with mwzeval parity: BLEU, Inform & Success, lexical richness, DST');
  addInputOption(cmd, "predictions in mwzeval's format: dialogue id -> [{response, state?, active_domains?}]", { required: true, predictionsAlias: true })
    .option('-o, --output <file>', 'write the full results (mwzeval structure plus details and signature) as JSON')
    .option('-b, --bleu', 'BLEU against the delexicalized MultiWOZ references')
    .option('-s, --success', 'Inform and Success rates (standard and optimistic)')
    .option('-r, --richness', 'lexical richness (unique n-grams, entropies, MSTTR, length)')
    .option('--dst', 'dialogue state tracking: joint accuracy, slot precision/recall/F1')
    .option('--chrf', "sacreBLEU's chrF (chrF2) over the strings BLEU scores, beside mwzeval's metrics")
    .addOption(chrfWordOrderOption().implies({ chrf: true }))
    .option('--ter', "sacreBLEU's TER over the strings BLEU scores, beside mwzeval's metrics")
    .option('--sgsacc', 'also SGSAcc and SER for turns with lexicalized text ("utterance", or a response without placeholders)')
    .option('--skip-delexicalized', 'with --sgsacc: score only the turns without placeholders of an input whose other turns hold them (refused otherwise); signed');
  addMwzInputOptions(addDataDirOption(cmd))
    .option('--rebuild-ground-truth', 'rebuild the ground truth instead of reading the cached copy')
    .option('--json', 'print the report as JSON on stdout instead of the tables')
    .option('--items <file>', "write every metric's per-item sufficient statistics (JSON) for todeval compare and report");
  addRunConfidenceOptions(cmd);
  addLimitOption(cmd, 'dialogues of the input');
  // Only the SGSAcc scoring is split: the mwzeval metrics are cheap and every shard computes them whole.
  addShardOptions(cmd, 'dialogues scored for --sgsacc', { workers: false });
  cmd.addOption(referenceSelectionOption(SGSACC_DEFAULTS.evaluate.referenceSelection)).addOption(
    new Option('--granularity <unit>', "with --sgsacc: 'sentence' also checks each sentence of the lexicalized turns against the facts (the sentence-level rate)").choices(GRANULARITIES),
  );
  addContextControlOptions(cmd, SGSACC_DEFAULTS.evaluate.contextControl).addOption(progressOption());
  addNliOptions(cmd); // model flags for --sgsacc
  cmd.action(async (flags: EvaluateFlags) => {
    // In a Slurm array task with no --shard, the task's shard (src/shard/spec.ts shardFromSlurmArray),
    // but only for a run that can be a shard (--sgsacc -o FILE): any other evaluate in an array task
    // (a hyper-parameter sweep's, the Python Evaluator's) is a whole run, refused as a shard before.
    if (flags.sgsacc && flags.output) applySlurmArrayShard(flags);
    await runEvaluate(flags);
  });
}

/** Flags -> the evaluate pipeline -> the tables (or JSON) on stdout. */
async function runEvaluate(flags: EvaluateFlags): Promise<void> {
  refuseOutputOverInput({ '-o/--output': flags.output, '--items': flags.items, '--cache': flags.cache }, { '--input': flags.input });
  if (flags.skipDelexicalized && !flags.sgsacc) throw new InputError('--skip-delexicalized sets which turns --sgsacc scores: give --sgsacc');
  if (flags.granularity && !flags.sgsacc) throw new InputError('--granularity sets how --sgsacc checks the turns: give --sgsacc');
  if (flags.shard && !flags.sgsacc) throw new InputError('--shard splits the SGSAcc scoring of --sgsacc: give --sgsacc (the other metrics are not split)');
  requireShardOutput(flags, flags.output);
  // NLI scoring can take long on CPU: a progress bar on a terminal only; it starts on the first
  // report, as only the pipeline knows how many turns are lexicalized.
  const bar = flags.sgsacc ? progressBar('sgsacc |{bar}| {value}/{total} turns | ETA {eta_formatted}', {}, flags.progress) : undefined;
  let result: EvaluateResult;
  try {
    result = await runEvaluatePipeline({
      ...flags,
      groundTruth: GROUND_TRUTH_SOURCES[flags.groundTruth],
      chrf: chrfFrom(flags),
      sgsacc: flags.sgsacc ? { nli: nliOptionsFrom(flags), ...sgsaccSettingsOf(flags), shard: flags.shard, skipDelexicalized: flags.skipDelexicalized } : undefined,
      itemsFile: flags.items,
      confidence: runConfidenceFrom(flags),
      hooks: {
        warn: (m) => process.stderr.write(`todeval: warning: ${m}\n`),
        skipped: (e) => reportSkipped('input', [e]),
        progress: barProgress(bar),
      },
    });
  } finally {
    bar?.stop();
  }
  process.stdout.write(flags.json ? JSON.stringify(result, null, 2) + '\n' : formatEvaluation(result));
}
