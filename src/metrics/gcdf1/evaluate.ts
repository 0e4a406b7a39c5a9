/**
 * GCDF1 over a set of conversations: each dialogue is scored on its own (I-GCDF1 first, because it
 * drops the requests of domains that failed for lack of database results, then R-GCDF1), and every
 * per-domain and combined score is the mean over the dialogues that have it (macro over dialogues;
 * within a dialogue the combined score pools all domains), as in the reference evaluator.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../../util/errors.js';
import { duplicateTopLevelKey, parseJsonText, readJsonFile, readTextFile } from '../../util/json-file.js';
import type { CanonicalValues } from './canonical-values.js';
import type { Gcdf1Config } from './config.js';
import { cloneGoal } from './goal.js';
import { computeIgcdf1 } from './igcdf1.js';
import { DialogueRecord, type F1Scores, type MetricName } from './record.js';
import { computeRgcdf1 } from './rgcdf1.js';
import type { Dialogue } from './types.js';
import { validateDialogue } from './validate.js';

export interface Gcdf1Evaluator {
  config: Gcdf1Config;
  canonicalMap?: CanonicalValues;
  /** token_sort_ratio matches against whole canonical tables, memoized across dialogues */
  cache: Map<string, string | undefined>;
}

export function makeEvaluator(config: Gcdf1Config, canonicalMap?: CanonicalValues): Gcdf1Evaluator {
  if (!config.use_lowercase) {
    throw new InputError('use_lowercase: false is not supported (the MultiWOZ 2.1 evaluation lowercases acts and goals)');
  }
  return { config, canonicalMap, cache: new Map() };
}

export function evaluateDialogue(dialogue: Dialogue, ev: Gcdf1Evaluator): DialogueRecord {
  const record = new DialogueRecord(dialogue.dialogue_id);
  const goal = cloneGoal(dialogue.goal);
  const cmap = ev.config.igcd_f1.value_matching.use_canonical_map ? ev.canonicalMap : undefined;
  computeIgcdf1(dialogue, goal, ev.config.igcd_f1, { lowercase: true, cmap, cache: ev.cache }, record);
  computeRgcdf1(dialogue, goal, ev.config.rgcd_f1, record);
  return record;
}

export type ScoreTable = Record<string, number>;

export interface Gcdf1Scores {
  igcd_f1: ScoreTable;
  igcd_precision: ScoreTable;
  igcd_recall: ScoreTable;
  rgcd_f1: ScoreTable;
  rgcd_precision: ScoreTable;
  rgcd_recall: ScoreTable;
  /** dialogues behind each mean, by metric and domain */
  counts: Record<MetricName, Record<string, number>>;
}

const PARTS: [keyof F1Scores, string][] = [
  ['f1', 'f1'],
  ['precision', 'precision'],
  ['recall', 'recall'],
];

/** Mean of each per-dialogue score over the dialogues that have it; keys sorted like the reference's JSON. */
export function aggregate(records: DialogueRecord[]): Gcdf1Scores {
  const out = { counts: { igcd_f1: {}, rgcd_f1: {} } } as unknown as Gcdf1Scores;
  for (const metric of ['igcd_f1', 'rgcd_f1'] as MetricName[]) {
    const prefix = metric.slice(0, 4);
    const sums: Record<string, F1Scores> = {};
    const counts: Record<string, number> = {};
    for (const r of records) {
      for (const [key, s] of Object.entries(r.scores[metric])) {
        const acc = (sums[key] ??= { f1: 0, precision: 0, recall: 0 });
        acc.f1 += s.f1;
        acc.precision += s.precision;
        acc.recall += s.recall;
        counts[key] = (counts[key] ?? 0) + 1;
      }
    }
    const keys = Object.keys(sums).sort();
    for (const [part, name] of PARTS) {
      const table: ScoreTable = {};
      for (const k of keys) table[k] = sums[k][part] / counts[k];
      (out as unknown as Record<string, ScoreTable>)[`${prefix}_${name}`] = table;
    }
    out.counts[metric] = Object.fromEntries(keys.map((k) => [k, counts[k]]));
  }
  return out;
}

/** Behaviour name -> number of observations over all dialogues, per metric (for the summary). */
export function behaviourCounts(records: DialogueRecord[]): Record<MetricName, Record<string, number>> {
  const out: Record<MetricName, Record<string, number>> = { igcd_f1: {}, rgcd_f1: {} };
  for (const r of records) {
    for (const metric of ['igcd_f1', 'rgcd_f1'] as MetricName[]) {
      for (const [behaviour, byDomain] of Object.entries(r.behaviours[metric])) {
        if (behaviour.startsWith('preprocessed_')) continue;
        const n = Object.values(byDomain).reduce((a, l) => a + l.length, 0);
        out[metric][behaviour] = (out[metric][behaviour] ?? 0) + n;
      }
    }
  }
  for (const metric of ['igcd_f1', 'rgcd_f1'] as MetricName[]) {
    out[metric] = Object.fromEntries(Object.entries(out[metric]).sort(([a], [b]) => a.localeCompare(b)));
  }
  return out;
}

export interface InvalidDialogue {
  file: string;
  where?: string;
  message: string;
}

export interface LoadedDialogues {
  dialogues: Dialogue[];
  files: string[];
  invalid: InvalidDialogue[];
  /** sha256 over the files' names and bytes, to sign the data source */
  digest: string;
}

/** Services of the directory's schema.json, when it has one (accepted in frames). */
function schemaServices(dir: string): string[] {
  const file = path.join(dir, 'schema.json');
  if (!existsSync(file)) return [];
  const schema = readJsonFile<unknown>(file);
  if (!Array.isArray(schema)) return [];
  return schema.flatMap((s) => (s && typeof s === 'object' && typeof (s as { service_name?: unknown }).service_name === 'string' ? [(s as { service_name: string }).service_name] : []));
}

/**
 * Every `dialogues_*.json` of the directory in name order (a list of dialogues, or an object keyed
 * by dialogue id). A dialogue id seen twice is refused (the reference silently kept the later one,
 * dropping a dialogue from the scores); with `skipInvalid` the later copy is listed and left out,
 * like malformed dialogues.
 */
export function loadDialogues(dir: string, skipInvalid = false): LoadedDialogues {
  if (!existsSync(dir)) throw new InputError('dialogue directory does not exist', { file: dir });
  if (!statSync(dir).isDirectory()) throw new InputError('not a directory (expected a folder of dialogues_*.json files)', { file: dir });
  const files = readdirSync(dir)
    .filter((f) => /^dialogues_.*\.json$/.test(f) && f !== 'dialogues_and_metrics.json')
    .sort()
    .map((f) => path.join(dir, f));
  if (!files.length) throw new InputError('no dialogues_*.json files', { file: dir });
  const extra = schemaServices(dir);
  const byId = new Map<string, Dialogue>();
  const fileOf = new Map<string, string>();
  const invalid: InvalidDialogue[] = [];
  const hash = createHash('sha256');
  for (const file of files) {
    const text = readTextFile(file);
    hash.update(path.basename(file)).update(text);
    const data = parseJsonText<unknown>(text, file);
    const items = Array.isArray(data) ? data : data && typeof data === 'object' ? Object.values(data) : undefined;
    if (!items) throw new InputError('expected a list of dialogues', { file });
    // An object keyed by id that names an id twice: JSON.parse kept the later copy without a word.
    // Refused even under skipInvalid, the first copy being already gone.
    if (!Array.isArray(data)) {
      const repeated = duplicateTopLevelKey(text);
      if (repeated !== undefined) throw new InputError(`duplicate dialogue id (first in ${file})`, { file, where: repeated });
    }
    items.forEach((raw, i) => {
      try {
        const d = validateDialogue(raw, file, i, extra);
        const first = fileOf.get(d.dialogue_id);
        if (first !== undefined) throw new InputError(`duplicate dialogue id (first in ${first})`, { file, where: d.dialogue_id });
        fileOf.set(d.dialogue_id, file);
        byId.set(d.dialogue_id, d);
      } catch (e) {
        if (!(e instanceof InputError) || !skipInvalid) throw e;
        invalid.push({ file, where: e.where, message: e.message });
      }
    });
  }
  if (byId.size === 0) {
    // An empty table with exit 0 would read as a result.
    const why = invalid.length > 0 ? `all ${invalid.length} invalid dialogues were skipped` : 'no dialogues in the files';
    throw new InputError(`nothing to evaluate: ${why}`, { file: dir });
  }
  return { dialogues: [...byId.values()], files, invalid, digest: hash.digest('hex').slice(0, 16) };
}
