import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadDataset, type DatasetName } from '../../adapters/load.js';
import { findDataDir, resolveDataDir } from '../../data/data-dir.js';
import { loadCanonicalMap, MULTIWOZ_CANONICAL_MAP, type CanonicalMap } from '../../metrics/canonical-map.js';
import { comparePredictionIds, loadPredictions } from '../../metrics/predictions.js';
import { computeSer, serIsCategorical, type SerReport } from '../../metrics/ser.js';
import { formatSignature, makeSignature } from '../../report/signature.js';

interface SerFlags {
  dataset: DatasetName;
  dataDir?: string;
  split: string;
  input?: string;
  schema?: string;
  predictions?: string;
  robust?: boolean;
  canonicalMap?: string;
  json?: string;
  skipInvalid?: boolean;
  limit?: number;
  showErrors: number;
}

function positiveInt(flag: string, allowZero = false) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) throw new InvalidArgumentError(`${flag} must be a ${allowZero ? 'non-negative' : 'positive'} integer`);
    return n;
  };
}

function fileDigest(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 12);
}

export function register(program: Command): void {
  program
    .command('ser')
    .description('slot error rate: share of utterances missing a non-categorical slot value of their actions (overall and per service)')
    .addOption(new Option('--dataset <name>', 'dataset the turns come from').choices(['sgd', 'multiwoz', 'generic']).makeOptionMandatory())
    .option('--data-dir <dir>', 'data directory (default: $TODEVAL_DATA, ./data, ../shared/data)')
    .option('--split <split>', 'dataset split', 'test')
    .option('--input <file>', 'your own dialogues file/folder instead of the data dir')
    .option('--schema <file>', 'schema for --input (decides which slots are categorical)')
    .option('--predictions <file>', 'system outputs: JSONL {"id","utterance"}, a JSON array of those, or a JSON object id -> utterance (default: the ground truth)')
    .option('--robust', 'also report the robust variant: canonical-map paraphrases, 12/24-hour times, punctuation-insensitive')
    .option('--canonical-map <file>', 'paraphrase map for --robust (MultiWOZ default: <data-dir>/gcdf1/resources/multiwoz21_canonical_map.json)')
    .option('--json <file>', 'write the full report (every erroneous slot value) as JSON')
    .option('--skip-invalid', 'list invalid dialogues/predictions and go on')
    .option('--limit <n>', 'only the first N system turns', positiveInt('--limit'))
    .option('--show-errors <n>', 'print the first N erroneous slot values', positiveInt('--show-errors', true), 5)
    .action((flags: SerFlags) => runSer(flags));
}

function runSer(flags: SerFlags): void {
  const ownData = flags.input !== undefined && flags.schema !== undefined;
  const dataDir = ownData && !flags.dataDir ? findDataDir()?.dir : resolveDataDir(flags.dataDir).dir;
  const data = loadDataset({
    dataset: flags.dataset,
    dataDir,
    split: flags.split,
    input: flags.input,
    schemaFile: flags.schema,
    skipInvalid: flags.skipInvalid,
    limit: flags.limit,
  });
  for (const e of data.invalid) process.stderr.write(`todeval: skipped invalid input: ${e.oneLine()}\n`);

  const isCategorical = serIsCategorical(flags.dataset, data.schema);
  const schemaSource = data.schema.source;

  let predictions: Map<string, string> | undefined;
  if (flags.predictions) {
    const loaded = loadPredictions(flags.predictions, { skipInvalid: flags.skipInvalid });
    for (const e of loaded.invalid) process.stderr.write(`todeval: skipped invalid prediction: ${e.oneLine()}\n`);
    predictions = loaded.byId;
  }

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

  if (predictions) {
    const { extra } = comparePredictionIds(predictions, data.turns.map((t) => t.id));
    if (extra.length > 0) {
      process.stderr.write(`todeval: ${extra.length} prediction ids match no turn of ${data.source} (first: ${extra.slice(0, 3).join(', ')})\n`);
    }
    if (report.missingIds.length > 0) {
      process.stderr.write(
        `todeval: ${report.missingIds.length} turns have no prediction (first: ${report.missingIds.slice(0, 3).join(', ')}); ` +
          `${report.missingWithValues} of them had slot values and are left out of the SER\n`,
      );
    }
  }

  const signature = makeSignature({
    metric: 'ser',
    dataset: data.source,
    schema: path.basename(schemaSource),
    predictions: flags.predictions ? `${path.basename(flags.predictions)}@${fileDigest(flags.predictions)}` : 'ground-truth',
    match: 'substring-ci',
    robust: flags.robust === true,
    canonicalMap: flags.robust ? (canonicalMap ? `${path.basename(canonicalMap.source)}@${fileDigest(canonicalMap.source)}` : 'none') : undefined,
    limit: flags.limit,
    invalidSkipped: data.invalid.length,
  });

  process.stdout.write(formatReport(report, flags.showErrors));
  process.stdout.write(`signature: ${formatSignature(signature)}\n`);

  if (flags.json) {
    writeFileSync(
      flags.json,
      `${JSON.stringify(
        { signature, signatureText: formatSignature(signature), report, invalid: data.invalid.map((e) => e.oneLine()) },
        null,
        2,
      )}\n`,
    );
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
