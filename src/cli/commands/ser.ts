import { existsSync } from 'node:fs';
import { writeJsonAtomic } from '../../util/atomic-write.js';
import path from 'node:path';
import type { Command } from 'commander';
import { loadDataset, type DatasetName } from '../../adapters/load.js';
import { findDataDir } from '../../data/data-dir.js';
import { loadCanonicalMap, MULTIWOZ_CANONICAL_MAP, type CanonicalMap } from '../../metrics/canonical-map.js';
import { comparePredictionIds } from '../../metrics/predictions.js';
import { computeSer, serIsCategorical, type SerReport } from '../../metrics/ser.js';
import { fileSignature, formatSignature, makeSignature } from '../../util/signature.js';
import { addPredictionsOptions, checkPredictionIds, readPredictionsFlag } from '../predictions.js';
import { addDatasetOptions, addLimitOption, addReportFileOption, datasetDataDir, datasetLoadOptions, jsonToStdout, positiveInt, reportFileFrom, reportSkipped, type DatasetFlags } from '../options.js';
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

function runSer(flags: SerFlags): void {
  refuseOutputOverInput(
    { '-o/--output': reportFileFrom(flags) },
    { '-i/--input': flags.input, '--dialogues': flags.dialogues, '--schema': flags.schema, '--canonical-map': flags.canonicalMap },
  );
  // Own files need no data dir, but --robust still looks for the MultiWOZ canonical map in one.
  const dataDir = datasetDataDir(flags) ?? findDataDir()?.dir;
  // Loaded whole and then sliced: prediction ids beyond --limit are not ids that match no turn.
  const data = loadDataset(datasetLoadOptions(flags, dataDir));
  const allIds = data.turns.map((t) => t.id);
  if (flags.limit !== undefined) data.turns = data.turns.slice(0, flags.limit);
  reportSkipped('input', data.invalid);

  const isCategorical = serIsCategorical(flags.dataset, data.schema);
  const schemaSource = data.schema.source;

  const predictions = flags.input ? readPredictionsFlag(flags.input, flags.skipInvalid) : undefined;

  let canonicalMap: CanonicalMap | undefined;
  if (flags.robust) {
    // The bundled map is MultiWOZ's; on other datasets it would only be noise unless asked for.
    const file =
      flags.canonicalMap ??
      (dataDir && flags.dataset === 'multiwoz' ? path.join(dataDir, ...MULTIWOZ_CANONICAL_MAP) : undefined);
    if (flags.canonicalMap || (file && existsSync(file))) canonicalMap = loadCanonicalMap(file!);
    else if (file) {
      process.stderr.write(
        `todeval: no canonical map at ${file} (run \`todeval data pull --only gcdf1\` or pass --canonical-map); robust SER uses normalisation and time variants only\n`,
      );
    }
  }

  const report = computeSer(data.turns, { predictions, isCategorical, robust: flags.robust, canonicalMap });

  if (flags.input) {
    report.extraIds = comparePredictionIds(predictions!, allIds).extra;
    checkPredictionIds({
      file: flags.input,
      missing: report.missingIds,
      extra: report.extraIds,
      source: data.source,
      validIds: allIds,
      matched: data.turns.length - report.missingIds.length,
      limit: flags.limit,
      allowMissing: flags.allowMissing,
      skipInvalid: flags.skipInvalid,
    });
    if (report.missingIds.length > 0) {
      process.stderr.write(
        `todeval: ${report.missingIds.length} turns have no prediction (first: ${report.missingIds.slice(0, 3).join(', ')}); ` +
          `${report.missingWithValues} of them had slot values and are left out of the SER\n`,
      );
    }
  }

  const signature = makeSignature({
    metric: 'ser',
    dataset: flags.dataset,
    data: data.source,
    schema: fileSignature(schemaSource, dataDir),
    predictions: flags.input ? fileSignature(flags.input, dataDir) : 'ground-truth',
    match: 'substring-ci',
    robust: flags.robust === true,
    canonicalMap: flags.robust ? (canonicalMap ? fileSignature(canonicalMap.source, dataDir) : 'none') : undefined,
    limit: flags.limit,
    skipped: data.invalid.length,
    missingPredictions: report.missingIds.length > 0 ? report.missingIds.length : undefined,
  });

  const doc = { signature, signatureText: formatSignature(signature), report, invalid: data.invalid.map((e) => e.oneLine()) };
  const reportFile = reportFileFrom(flags);
  if (reportFile) writeJsonAtomic(reportFile, doc);
  if (jsonToStdout(flags)) {
    process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  } else {
    process.stdout.write(formatReport(report, flags.showErrors));
    process.stdout.write(`signature: ${formatSignature(signature)}\n`);
  }
}

function pct(x: number): string {
  return `${x.toFixed(2)}%`;
}

export function formatReport(r: SerReport, showErrors: number): string {
  const lines: string[] = [];
  const robust = r.robust;
  lines.push(
    `SER ${pct(r.ser)} (${r.errors} of ${r.utterancesWithValues} utterances with non-categorical values; ${r.turnsScored} system turns)` +
      (robust ? `   robust SER ${pct(robust.ser)} (${robust.errors})` : ''),
  );
  if (r.skippedValues.length > 0) lines.push(`values not checked (dontcare/?/none): ${r.skippedValues.length}`);
  const services = Object.keys(r.perService);
  const width = Math.max(7, ...services.map((s) => s.length));
  lines.push('');
  lines.push(`${'service'.padEnd(width)}  ${'utts'.padStart(6)}  ${'errors'.padStart(6)}  ${'SER'.padStart(7)}${robust ? `  ${'robust'.padStart(7)}` : ''}`);
  for (const s of services) {
    const c = r.perService[s];
    const rob = robust?.perService[s];
    lines.push(
      `${s.padEnd(width)}  ${String(c.total).padStart(6)}  ${String(c.errors).padStart(6)}  ${pct(c.ser).padStart(7)}` +
        (robust ? `  ${pct(rob?.ser ?? 0).padStart(7)}` : ''),
    );
  }
  if (showErrors > 0 && r.erroneous.length > 0) {
    lines.push('');
    lines.push(`first ${Math.min(showErrors, r.erroneous.length)} of ${r.erroneous.length} missing values:`);
    for (const e of r.erroneous.slice(0, showErrors)) lines.push(`  ${e.id}  ${e.service} ${e.act}(${e.slot}=${e.value})`);
  }
  return `${lines.join('\n')}\n`;
}
