import { existsSync } from 'node:fs';
import path from 'node:path';
import { findDataDir } from '../data/data-dir.js';
import { MULTIWOZ_CANONICAL_MAP } from '../metrics/canonical-map.js';
import { loadCanonicalValues } from '../metrics/gcdf1/canonical-values.js';
import { loadConfig } from '../metrics/gcdf1/config.js';
import { evaluateDialogue, loadDialogues, makeEvaluator } from '../metrics/gcdf1/evaluate.js';
import type { DialogueRecord } from '../metrics/gcdf1/record.js';
import { gcdf1Report, perDialogueDocument, type Gcdf1Report } from '../metrics/gcdf1/report.js';
import type { Gcdf1ShardReport } from '../shard/gcdf1-merge.js';
import { shardBlock, shardLabel, shardPositions, type ShardSpec } from '../shard/spec.js';
import { writeJsonAtomic } from '../util/atomic-write.js';
import { InputError, MissingResourceError } from '../util/errors.js';
import { inputPath } from '../util/input-label.js';
import { fileSignature, type Signature } from '../util/signature.js';
import { whileSynchronous } from '../util/sync-signals.js';
import { gcdf1Signature } from '../metrics/gcdf1/signature.js';
import type { PipelineHooks } from './hooks.js';

export interface Gcdf1PipelineOptions {
  /** Folder of dialogues_*.json conversations, each with a `goal`. */
  dialogues: string;
  /** Evaluator configuration in the reference's YAML shape (default: the published settings). */
  config?: string;
  /** Value paraphrase map; undefined: the data dir's MultiWOZ 2.1 map; false: goal values only. */
  canonicalMap?: string | false;
  /** The data dir (findDataDir's lookup when absent): where the default map is, and what signatures name paths relative to. */
  dataDir?: string;
  skipInvalid?: boolean;
  /** The first N dialogues (in file and id order). */
  limit?: number;
  /** Only part K of N of the dialogues; its report carries what `todeval merge` needs. */
  shard?: ShardSpec;
  /** Write the report here (JSON, atomically); a shard's report adds its records and positions. */
  output?: string;
  /** Write each dialogue's scores and behaviours here. */
  perDialogue?: string;
  hooks?: Pick<PipelineHooks, 'skipped'> & {
    /** `done` of `total` dialogues evaluated; called with 0 first. */
    progress?(done: number, total: number): void;
  };
}

export interface Gcdf1Result {
  /** The report as written to `output` (a shard's without its shard block). */
  report: Gcdf1Report;
  records: DialogueRecord[];
  signature: Signature;
}

/** `canonicalMap`, else the MultiWOZ 2.1 map of the data dir; false (or a config without maps): none. */
function resolveCanonicalMap(o: Gcdf1PipelineOptions, wanted: boolean): string | undefined {
  if (o.canonicalMap === false || !wanted) return undefined;
  if (typeof o.canonicalMap === 'string') return o.canonicalMap;
  const data = findDataDir(o.dataDir);
  const file = data ? path.join(data.dir, ...MULTIWOZ_CANONICAL_MAP) : undefined;
  if (file && existsSync(file)) return file;
  // Name the file looked for: with --data-dir given, "set --data-dir" alone would be no help.
  throw new MissingResourceError(
    `no canonical value map${file ? ` at ${file}` : ''}: pass --canonical-map FILE (multiwoz21_canonical_map.json from the GCDF1 release), ` +
      `${file ? 'run `todeval data pull --only gcdf1`, ' : 'set --data-dir, '}or use --no-canonical-map to match against goal values only`,
  );
}

/**
 * `todeval gcdf1` as a library call: I-GCDF1 and R-GCDF1 of a user model from its conversations,
 * with counts, behaviours and the signature; a shard's report carries its records for `todeval merge`.
 */
export function runGcdf1Pipeline(o: Gcdf1PipelineOptions): Gcdf1Result {
  // Synchronous for many seconds and writing nothing until it is done: Ctrl-C and SIGTERM must still
  // end the run at once (src/util/sync-signals.ts; before, SIGTERM ended a 1,000-dialogue run only
  // once it had finished, 9 s later, with 143).
  const { config, cmapFile, loaded, positions, records } = whileSynchronous(() => evaluateAll(o));
  // Inputs are named relative to the data dir when they lie in it, so the signature is the same wherever it runs.
  const dataDir = findDataDir(o.dataDir)?.dir;
  const signature = gcdf1Signature({
    config,
    configFile: o.config ? fileSignature(o.config, dataDir) : 'published-defaults',
    canonicalMap: cmapFile ? fileSignature(cmapFile, dataDir) : 'none',
    data: `${inputPath(o.dialogues, dataDir)}@${loaded.digest.slice(0, 12)}`,
    dialogues: records.length,
    skipped: loaded.invalid.length,
    limit: o.limit,
    shard: o.shard ? shardLabel(o.shard) : undefined,
  });
  const report = gcdf1Report(records, signature, loaded.invalid, config);
  if (o.shard && o.output) {
    // What todeval merge needs to rebuild the run's report: this shard's records and where they stand.
    const block = { ...shardBlock(o.shard, o.output, {}), positions: positions!, records: records.map((r) => ({ dialogueId: r.dialogueId, scores: r.scores, behaviours: r.behaviours })) };
    writeJsonAtomic(o.output, { ...report, shard: block } satisfies Gcdf1ShardReport);
  } else if (o.output) writeJsonAtomic(o.output, report);
  if (o.perDialogue) writeJsonAtomic(o.perDialogue, perDialogueDocument(records, signature));
  return { report, records, signature };
}

/** Everything before the report: configuration, map, dialogues (the shard's), each one evaluated. */
function evaluateAll(o: Gcdf1PipelineOptions) {
  const config = loadConfig(o.config);
  const cmapFile = resolveCanonicalMap(o, config.igcd_f1.value_matching.use_canonical_map);
  const evaluator = makeEvaluator(config, cmapFile ? loadCanonicalValues(cmapFile) : undefined);
  const loaded = loadDialogues(o.dialogues, o.skipInvalid);
  o.hooks?.skipped?.('input', loaded.invalid.map((bad) => new InputError(bad.message, bad)));
  const selected = o.limit !== undefined ? loaded.dialogues.slice(0, o.limit) : loaded.dialogues;
  // Every dialogue is its own unit: shard K takes the K-th contiguous run of the (limited) dialogues.
  const positions = o.shard ? shardPositions(selected, (d) => d.dialogue_id, o.shard) : undefined;
  const dialogues = positions ? positions.map((i) => selected[i]) : selected;
  o.hooks?.progress?.(0, dialogues.length);
  const records = dialogues.map((dialogue, i) => {
    const record = evaluateDialogue(dialogue, evaluator);
    o.hooks?.progress?.(i + 1, dialogues.length);
    return record;
  });
  return { config, cmapFile, loaded, positions, records };
}
