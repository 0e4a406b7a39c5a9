import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeJsonAtomic } from '../../util/atomic-write.js';
import path from 'node:path';
import type { Command } from 'commander';
import { findDataDir } from '../../data/data-dir.js';
import { MULTIWOZ_CANONICAL_MAP } from '../../metrics/canonical-map.js';
import { loadCanonicalValues, type CanonicalValues } from '../../metrics/gcdf1/canonical-values.js';
import { loadConfig } from '../../metrics/gcdf1/config.js';
import {
  aggregate,
  behaviourCounts,
  evaluateDialogue,
  loadDialogues,
  makeEvaluator,
} from '../../metrics/gcdf1/evaluate.js';
import type { DialogueRecord } from '../../metrics/gcdf1/record.js';
import { formatSummary } from '../../metrics/gcdf1/summary.js';
import { progressBar, progressOption, type ProgressMode } from '../../report/progress.js';
import { fileSignature, formatSignature, makeSignature } from '../../util/signature.js';
import { inputPath } from '../../util/input-label.js';
import { InputError, MissingResourceError } from '../../util/errors.js';
import { addDataDirOption, addLimitOption, reportSkipped } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';

interface Gcdf1Flags {
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
  addLimitOption(cmd, 'dialogues (in file and id order)')
    .addOption(progressOption())
    .action((flags: Gcdf1Flags) => {
      runGcdf1(flags);
    });
}

export function runGcdf1(flags: Gcdf1Flags): void {
  refuseOutputOverInput(
    { '-o/--output': flags.output, '--per-dialogue': flags.perDialogue },
    { '-d/--dialogues': flags.dialogues, '--config': flags.config, '--canonical-map': typeof flags.canonicalMap === 'string' ? flags.canonicalMap : undefined },
  );
  const config = loadConfig(flags.config);
  const cmapFile = resolveCanonicalMap(flags, config.igcd_f1.value_matching.use_canonical_map);
  const cmap: CanonicalValues | undefined = cmapFile ? loadCanonicalValues(cmapFile) : undefined;
  const evaluator = makeEvaluator(config, cmap);
  const loaded = loadDialogues(flags.dialogues, flags.skipInvalid);
  reportSkipped('input', loaded.invalid.map((bad) => new InputError(bad.message, bad)));

  const bar = progressBar('gcdf1 {bar} {value}/{total} dialogues', { clearOnComplete: true }, flags.progress);
  const dialogues = flags.limit !== undefined ? loaded.dialogues.slice(0, flags.limit) : loaded.dialogues;
  bar?.start(dialogues.length, 0);
  const records: DialogueRecord[] = [];
  for (const dialogue of dialogues) {
    records.push(evaluateDialogue(dialogue, evaluator));
    bar?.increment();
  }
  bar?.stop();

  const scores = aggregate(records);
  const behaviours = behaviourCounts(records);
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
  });
  const { counts, ...tables } = scores;
  const output = {
    ...tables,
    metadata: {
      signature,
      signature_string: formatSignature(signature),
      counts,
      behaviour_counts: behaviours,
      invalid: loaded.invalid,
      evaluation_config: config,
    },
  };
  if (flags.output) writeJsonAtomic(flags.output, output);
  if (flags.perDialogue) {
    const perDialogue = Object.fromEntries(
      records.map((r) => [r.dialogueId, { scores: r.scores, behaviours: r.behaviours }]),
    );
    writeJsonAtomic(flags.perDialogue, { signature, dialogues: perDialogue });
  }
  if (flags.json) {
    process.stdout.write(JSON.stringify(output, null, 2) + '\n');
  } else {
    process.stdout.write(`GCDF1 over ${records.length} dialogues\n${formatSummary(scores, behaviours)}\n`);
    process.stdout.write(`\nsignature: ${formatSignature(signature)}\n`);
  }
}
