import path from 'node:path';
import { dataFile } from '../data/data-dir.js';
import { loadSchemaFile, type SchemaIndex } from '../schema/schema-index.js';
import { InputError, MissingResourceError } from '../util/errors.js';
import { contentDigest, inputLabel, inputsContentDigest, ReadDigests } from '../util/input-label.js';
import { InvalidCollector } from './collect.js';
import { readGenericTurns } from './generic.js';
import { readMultiwozTurns } from './multiwoz.js';
import { findDialogActsFile, readMultiwoz22Turns } from './multiwoz22.js';
import { addMultiwozPseudoSlots, loadSlotMap } from './multiwoz-slots.js';
import { readSgdTurns, sgdDialogueFiles } from './sgd.js';
import type { Turn } from './types.js';

export type DatasetName = 'sgd' | 'multiwoz' | 'generic';

export interface LoadDatasetOptions {
  dataset: DatasetName;
  /** Data dir (resolveDataDir); not needed when both input and schemaFile are given. */
  dataDir?: string;
  split?: string;
  /** User's own dialogues: an SGD dialogues file or folder, a ConvLab file, or generic JSONL. */
  input?: string;
  schemaFile?: string;
  /** List invalid dialogues/turns in `invalid` and go on, instead of throwing the first. */
  skipInvalid?: boolean;
  /** Stop after this many system turns (tests, quick looks). */
  limit?: number;
}

export interface LoadedDataset {
  turns: Turn[];
  schema: SchemaIndex;
  invalid: InputError[];
  /**
   * What was read, for signatures: `sgd:test`, `multiwoz:convlab_mwz21_test.json`, or the user's
   * own dialogues by path (relative to the data dir or the working directory) and content digest,
   * `sgd:my/dialogues.json@3f2a9c0b1d4e` (inputLabel).
   */
  source: string;
  /** The user's own schema file (--schema) as inputLabel names it; undefined for the data dir's. */
  schemaLabel?: string;
  /** The schema file read (the data dir's or --schema), for a signature that names it by content. */
  schemaFile: string;
}

function needDataDir(opts: LoadDatasetOptions): string {
  if (!opts.dataDir) throw new MissingResourceError(`--dataset ${opts.dataset} needs a data directory (or --dialogues and --schema)`);
  return opts.dataDir;
}

export const MULTIWOZ_CONVLAB_TEST = 'convlab_mwz21_test.json';

/**
 * The dataset's system turns. None at all is an error rather than a score over nothing: a file
 * whose speakers are spelt differently, or where every item was skipped, would otherwise print
 * "SER 0.00%" and exit 0.
 */
export function loadDataset(opts: LoadDatasetOptions): LoadedDataset {
  const loaded = readDataset(opts);
  if (opts.schemaFile) loaded.schemaLabel = inputLabel(opts.schemaFile, opts.dataDir);
  if (loaded.turns.length === 0) {
    const why = loaded.invalid.length > 0 ? `all ${loaded.invalid.length} invalid items were skipped` : 'no system turns found';
    throw new InputError(`nothing to evaluate: ${why}`, { file: opts.input ?? loaded.source });
  }
  return loaded;
}

function readDataset(opts: LoadDatasetOptions): LoadedDataset {
  const split = opts.split ?? 'test';
  const collector = new InvalidCollector(opts.skipInvalid === true);
  switch (opts.dataset) {
    case 'sgd': {
      const schemaFile = opts.schemaFile ?? dataFile(needDataDir(opts), 'sgd', split, 'schema.json');
      // What the source is signed by (below) is hashed from the bytes the readers read: the split
      // folder (which holds its schema) by the path dataFile checks after the schema is read.
      const reads = new ReadDigests([opts.input ?? (opts.dataDir && path.join(opts.dataDir, 'sgd', split)), schemaFile]);
      const schema = loadSchemaFile(schemaFile, reads.read);
      const splitDir = opts.input ?? dataFile(needDataDir(opts), 'sgd', split);
      const files = sgdDialogueFiles(splitDir);
      const turns = readSgdTurns(files, schema, collector, opts.limit, reads.read);
      reads.finish();
      // The data dir's split is named by content too (its folder holds the dialogues and the
      // schema; a --schema of one's own is signed apart): a changed byte there must not pass as the same `sgd:test`.
      const source = opts.input ? `sgd:${inputLabel(opts.input, opts.dataDir)}` : `sgd:${split}@${contentDigest(splitDir)}`;
      return { turns, schema, invalid: collector.invalid, source, schemaFile };
    }
    case 'multiwoz': {
      const schemaFile = opts.schemaFile ?? dataFile(needDataDir(opts), 'multiwoz', 'schema.json');
      const convlab = split === 'test' && opts.dataDir ? path.join(opts.dataDir, 'multiwoz', MULTIWOZ_CONVLAB_TEST) : undefined;
      const reads = new ReadDigests([opts.input ?? convlab, schemaFile]);
      const schema = loadSchemaFile(schemaFile, reads.read);
      addMultiwozPseudoSlots(schema, loadSlotMap());
      let input = opts.input;
      if (!input) {
        if (split !== 'test') {
          throw new MissingResourceError(`only the MultiWOZ test split ships as a ConvLab file; pass --dialogues for split "${split}"`);
        }
        input = dataFile(needDataDir(opts), 'multiwoz', MULTIWOZ_CONVLAB_TEST);
      }
      // A MultiWOZ 2.2 folder/file (dialog_acts.json beside it) or the 2.1 ConvLab file.
      const actsFile = opts.input ? findDialogActsFile(opts.input) : undefined;
      const turns = actsFile
        ? readMultiwoz22Turns(input, actsFile, schema, collector, opts.limit, reads.read)
        : readMultiwozTurns(input, schema, collector, opts.limit, reads.read);
      reads.finish();
      return {
        turns,
        schema,
        invalid: collector.invalid,
        schemaFile,
        source: opts.input ? `multiwoz:${inputLabel(opts.input, opts.dataDir)}` : `multiwoz:${path.basename(input)}@${inputsContentDigest([input, schemaFile])}`,
      };
    }
    case 'generic': {
      if (!opts.input || !opts.schemaFile) {
        throw new InputError('--dataset generic needs --dialogues <turns.jsonl> and --schema <schema.json>');
      }
      const reads = new ReadDigests([opts.input, opts.schemaFile]);
      const schema = loadSchemaFile(opts.schemaFile, reads.read);
      const turns = readGenericTurns(opts.input, schema, collector, opts.limit, reads.read);
      reads.finish();
      return { turns, schema, invalid: collector.invalid, source: `generic:${inputLabel(opts.input, opts.dataDir)}`, schemaFile: opts.schemaFile };
    }
    default:
      throw new InputError(`unknown dataset "${String((opts as { dataset: unknown }).dataset)}" (sgd, multiwoz or generic)`);
  }
}
