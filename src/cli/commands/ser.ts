import type { Command } from 'commander';
import type { DatasetName } from '../../adapters/load.js';
import { findDataDir } from '../../data/data-dir.js';
import { runSerPipeline } from '../../pipeline/ser.js';
import { formatSerReport } from '../../report/text/ser-text.js';
import { stderrHooks } from '../hooks.js';
import { addPredictionsOptions } from '../predictions-options.js';
import { addDatasetOptions, addLimitOption, addReportFileOption, datasetDataDir, datasetLoadOptions, jsonToStdout, positiveInt, reportFileFrom, type DatasetFlags } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';

interface SerFlags extends DatasetFlags {
  dataset: DatasetName;
  input?: string;
  robust?: boolean;
  canonicalMap?: string;
  output?: string;
  json?: string | boolean;
  limit?: number;
  showErrors: number;
  allowMissing?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('ser')
    .description('slot error rate: share of utterances missing a non-categorical slot value of their actions (overall and per service)');
  addDatasetOptions(cmd, {
    schemaHelp: 'schema for --dialogues (decides which slots are categorical)',
    skipInvalidHelp: 'list invalid dialogues/predictions on stderr and go on',
    inputAlias: false, // -i/--input names the predictions
  });
  addPredictionsOptions(cmd)
    .option('--robust', 'also report the robust variant: canonical-map paraphrases, 12/24-hour times, punctuation-insensitive')
    .option('--canonical-map <file>', 'paraphrase map for --robust (MultiWOZ default: <data-dir>/gcdf1/resources/multiwoz21_canonical_map.json)');
  addReportFileOption(cmd, 'write the full report (every erroneous slot value) as JSON');
  addLimitOption(cmd, 'system turns')
    .option('--show-errors <n>', 'print the first N erroneous slot values', positiveInt('--show-errors', true), 5)
    .action((flags: SerFlags) => runSer(flags));
}

/** Flags -> the SER pipeline -> the tables (or JSON) on stdout. */
function runSer(flags: SerFlags): void {
  const reportFile = reportFileFrom(flags);
  refuseOutputOverInput(
    { '-o/--output': reportFile },
    { '-i/--input': flags.input, '--dialogues': flags.dialogues, '--schema': flags.schema, '--canonical-map': flags.canonicalMap },
  );
  // Own files need no data dir, but --robust still looks for the MultiWOZ canonical map in one.
  const dataDir = datasetDataDir(flags) ?? findDataDir()?.dir;
  const doc = runSerPipeline({
    ...datasetLoadOptions(flags, dataDir),
    predictions: flags.input,
    robust: flags.robust,
    canonicalMap: flags.canonicalMap,
    limit: flags.limit,
    allowMissing: flags.allowMissing,
    reportFile,
    hooks: stderrHooks,
  });
  if (jsonToStdout(flags)) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  else process.stdout.write(`${formatSerReport(doc.report, flags.showErrors)}signature: ${doc.signatureText}\n`);
}
