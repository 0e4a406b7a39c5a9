import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadDataset, type LoadDatasetOptions } from '../adapters/load.js';
import { loadCanonicalMap, MULTIWOZ_CANONICAL_MAP, type CanonicalMap } from '../metrics/canonical-map.js';
import { comparePredictionIds } from '../metrics/predictions-file.js';
import { computeSer, serIsCategorical, type SerReport } from '../metrics/ser.js';
import { writeJsonAtomic } from '../util/atomic-write.js';
import { fileSignature, formatSignature, makeSignature, type Signature } from '../util/signature.js';
import type { PipelineHooks } from './hooks.js';
import { checkPredictionIds, readPredictions } from './predictions-check.js';

export interface SerPipelineOptions extends Omit<LoadDatasetOptions, 'limit'> {
  /** The system's outputs (a predictions file); none: the ground truth's utterances. */
  predictions?: string;
  /** Also the robust variant: canonical-map paraphrases, 12/24-hour times, punctuation-insensitive. */
  robust?: boolean;
  /** Paraphrase map for `robust` (MultiWOZ default: the data dir's GCDF1 map). */
  canonicalMap?: string;
  /** The first N system turns (the dataset is loaded whole: prediction ids beyond N still match a turn). */
  limit?: number;
  /** Score the turns that have a prediction; missing ids are listed, not refused. */
  allowMissing?: boolean;
  /** Write the document here (JSON, atomically). */
  reportFile?: string;
  hooks?: PipelineHooks;
}

/** What `todeval ser --json` prints and `-o` writes. */
export interface SerDocument {
  signature: Signature;
  signatureText: string;
  report: SerReport;
  /** The invalid dialogues/turns skipped, one line each. */
  invalid: string[];
}

/** The canonical map of `robust`: the one given, else MultiWOZ's in the data dir (a notice when it is not there). */
function robustCanonicalMap(o: SerPipelineOptions): CanonicalMap | undefined {
  if (!o.robust) return undefined;
  // The bundled map is MultiWOZ's; on other datasets it would only be noise unless asked for.
  const file = o.canonicalMap ?? (o.dataDir && o.dataset === 'multiwoz' ? path.join(o.dataDir, ...MULTIWOZ_CANONICAL_MAP) : undefined);
  if (o.canonicalMap || (file && existsSync(file))) return loadCanonicalMap(file!);
  if (file) o.hooks?.notice?.(`no canonical map at ${file} (run \`todeval data pull --only gcdf1\` or pass --canonical-map); robust SER uses normalisation and time variants only`);
  return undefined;
}

/**
 * `todeval ser` as a library call: the slot error rate of a system's outputs (or the ground
 * truth's) over a dataset's system turns, overall and per service, with its signature.
 */
export function runSerPipeline(o: SerPipelineOptions): SerDocument {
  // Loaded whole and then sliced: prediction ids beyond --limit are not ids that match no turn.
  const data = loadDataset({ dataset: o.dataset, dataDir: o.dataDir, split: o.split, input: o.input, schemaFile: o.schemaFile, skipInvalid: o.skipInvalid });
  const allIds = data.turns.map((t) => t.id);
  if (o.limit !== undefined) data.turns = data.turns.slice(0, o.limit);
  o.hooks?.skipped?.('input', data.invalid);
  const predictions = o.predictions ? readPredictions(o.predictions, o.skipInvalid, o.hooks) : undefined;
  const canonicalMap = robustCanonicalMap(o);
  const report = computeSer(data.turns, { predictions, isCategorical: serIsCategorical(o.dataset, data.schema), robust: o.robust, canonicalMap });
  if (o.predictions) {
    report.extraIds = comparePredictionIds(predictions!, allIds).extra;
    const { missingIds: missing, extraIds: extra } = report;
    checkPredictionIds({ file: o.predictions, missing, extra, source: data.source, validIds: allIds, matched: data.turns.length - missing.length, limit: o.limit, allowMissing: o.allowMissing, skipInvalid: o.skipInvalid }, o.hooks);
    if (missing.length > 0) {
      o.hooks?.notice?.(`${missing.length} turns have no prediction (first: ${missing.slice(0, 3).join(', ')}); ${report.missingWithValues} of them had slot values and are left out of the SER`);
    }
  }
  const signature = serSignature({
    dataset: o.dataset,
    data: data.source,
    schema: fileSignature(data.schema.source, o.dataDir),
    predictions: o.predictions ? fileSignature(o.predictions, o.dataDir) : 'ground-truth',
    robust: o.robust === true,
    canonicalMap: o.robust ? (canonicalMap ? fileSignature(canonicalMap.source, o.dataDir) : 'none') : undefined,
    limit: o.limit,
    skipped: data.invalid.length,
    missingPredictions: report.missingIds.length > 0 ? report.missingIds.length : undefined,
  });
  const doc = { signature, signatureText: formatSignature(signature), report, invalid: data.invalid.map((e) => e.oneLine()) };
  if (o.reportFile) writeJsonAtomic(o.reportFile, doc);
  return doc;
}

/** What decides `todeval ser`'s numbers: the data, the schema and the predictions (files by content), and how values are matched. */
export interface SerSigned {
  dataset: string;
  data: string;
  schema: string;
  /** The predictions file (fileSignature), or `ground-truth`. */
  predictions: string;
  robust: boolean;
  /** With `robust`: the canonical map (fileSignature) or `none`. */
  canonicalMap?: string;
  limit?: number;
  skipped: number;
  missingPredictions?: number;
}

/** The signature of `todeval ser`: its one builder. */
export function serSignature(s: SerSigned): Signature {
  return makeSignature({
    metric: 'ser',
    dataset: s.dataset,
    data: s.data,
    schema: s.schema,
    predictions: s.predictions,
    match: 'substring-ci',
    robust: s.robust,
    canonicalMap: s.canonicalMap,
    limit: s.limit,
    skipped: s.skipped,
    missingPredictions: s.missingPredictions,
  });
}
