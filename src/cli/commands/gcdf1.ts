import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeJsonAtomic } from '../../util/atomic-write.js';
import path from 'node:path';
import type { Command } from 'commander';
import { findDataDir } from '../../data/data-dir.js';
import { MULTIWOZ_CANONICAL_MAP } from '../../metrics/canonical-map.js';
import { loadCanonicalValues, type CanonicalValues } from '../../metrics/gcdf1/canonical-values.js';
import { loadConfig } from '../../metrics/gcdf1/config.js';
import { evaluateDialogue, loadDialogues, makeEvaluator } from '../../metrics/gcdf1/evaluate.js';
import type { DialogueRecord } from '../../metrics/gcdf1/record.js';
import { gcdf1Report, perDialogueDocument } from '../../metrics/gcdf1/report.js';
import type { Gcdf1ShardReport } from '../../shard/gcdf1-merge.js';
import { shardLabel, shardPositions } from '../../shard/spec.js';
import { formatSummary } from '../../metrics/gcdf1/summary.js';
import { progressBar, progressOption, type ProgressMode } from '../../report/progress.js';
import { fileSignature, formatSignature, makeSignature } from '../../util/signature.js';
import { addShardOptions, applySlurmArrayShard, shardBlock, type ShardFlags } from '../shard-options.js';
import { inputPath } from '../../util/input-label.js';
import { InputError, MissingResourceError } from '../../util/errors.js';
import { addDataDirOption, addLimitOption, reportSkipped } from '../options.js';
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

/** --canonical-map FILE, else the MultiWOZ 2.1 map of the data dir; --no-canonical-map matches goal values only. */
function resolveCanonicalMap(flags: Gcdf1Flags, wanted: boolean): string | undefined {
  if (flags.canonicalMap === false || !wanted) return undefined;
  if (typeof flags.canonicalMap === 'string') return flags.canonicalMap;
  const data = findDataDir(flags.dataDir);
  const file = data ? path.join(data.dir, ...MULTIWOZ_CANONICAL_MAP) : undefined;
  if (file && existsSync(file)) return file;
  // Name the file looked for: with --data-dir given, "set --data-dir" alone would be no help.
  throw new MissingResourceError(
    `no canonical value map${file ? ` at ${file}` : ''}: pass --canonical-map FILE (multiwoz21_canonical_map.json from the GCDF1 release), ` +
      `${file ? 'run `todeval data pull --only gcdf1`, ' : 'set --data-dir, '}or use --no-canonical-map to match against goal values only`,
  );
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

export function runGcdf1(flags: Gcdf1Flags): void {
  refuseOutputOverInput(
    { '-o/--output': flags.output, '--per-dialogue': flags.perDialogue },
    { '-d/--dialogues': flags.dialogues, '--config': flags.config, '--canonical-map': typeof flags.canonicalMap === 'string' ? flags.canonicalMap : undefined },
  );
  if (flags.shard && !flags.output) throw new InputError('--shard needs -o/--output: todeval merge joins the shard reports');
  const config = loadConfig(flags.config);
  const cmapFile = resolveCanonicalMap(flags, config.igcd_f1.value_matching.use_canonical_map);
  const cmap: CanonicalValues | undefined = cmapFile ? loadCanonicalValues(cmapFile) : undefined;
  const evaluator = makeEvaluator(config, cmap);
  const loaded = loadDialogues(flags.dialogues, flags.skipInvalid);
  reportSkipped('input', loaded.invalid.map((bad) => new InputError(bad.message, bad)));

  const bar = progressBar('gcdf1 {bar} {value}/{total} dialogues', { clearOnComplete: true }, flags.progress);
  const selected = flags.limit !== undefined ? loaded.dialogues.slice(0, flags.limit) : loaded.dialogues;
  // Every dialogue is its own unit: shard K takes the K-th contiguous run of the (limited) dialogues.
  const positions = flags.shard ? shardPositions(selected, (d) => d.dialogue_id, flags.shard) : undefined;
  const dialogues = positions ? positions.map((i) => selected[i]) : selected;
  bar?.start(dialogues.length, 0);
  const records: DialogueRecord[] = [];
  for (const dialogue of dialogues) {
    records.push(evaluateDialogue(dialogue, evaluator));
    bar?.increment();
  }
  bar?.stop();

  // Inputs are named relative to the data dir when they lie in it, so the signature is the same wherever it runs.
  const dataDir = findDataDir(flags.dataDir)?.dir;
  const signature = makeSignature({
    metric: 'gcdf1',
    config: createHash('sha256').update(JSON.stringify(config)).digest('hex').slice(0, 12),
    configFile: flags.config ? fileSignature(flags.config, dataDir) : 'published-defaults',
    canonicalMap: cmapFile ? fileSignature(cmapFile, dataDir) : 'none',
    data: `${inputPath(flags.dialogues, dataDir)}@${loaded.digest.slice(0, 12)}`,
    dialogues: records.length,
    skipped: loaded.invalid.length,
    limit: flags.limit,
    shard: flags.shard ? shardLabel(flags.shard) : undefined,
  });
  const output = gcdf1Report(records, signature, loaded.invalid, config);
  if (flags.shard && flags.output) {
    // What todeval merge needs to rebuild the run's report: this shard's records and where they stand.
    const block = { ...shardBlock(flags.shard, flags.output, {}), positions: positions!, records: records.map((r) => ({ dialogueId: r.dialogueId, scores: r.scores, behaviours: r.behaviours })) };
    writeJsonAtomic(flags.output, { ...output, shard: block } satisfies Gcdf1ShardReport);
  } else if (flags.output) writeJsonAtomic(flags.output, output);
  if (flags.perDialogue) writeJsonAtomic(flags.perDialogue, perDialogueDocument(records, signature));
  if (flags.json) {
    process.stdout.write(JSON.stringify(output, null, 2) + '\n');
  } else {
    const { metadata, ...tables } = output;
    process.stdout.write(`GCDF1 over ${records.length} dialogues\n${formatSummary({ ...tables, counts: metadata.counts }, metadata.behaviour_counts)}\n`);
    process.stdout.write(`\nsignature: ${formatSignature(signature)}\n`);
  }
}
