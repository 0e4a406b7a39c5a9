import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadDataset, type LoadDatasetOptions, type LoadedDataset } from '../../adapters/load.js';
import type { Turn } from '../../adapters/types.js';
import { Expander } from '../../rules/expand.js';
import { loadRules } from '../../rules/load.js';
import { buildValueIndex } from '../../rules/value-index.js';
import { serIsCategorical } from '../ser.js';
import { sgdTrainServices } from '../../schema/sgd.js';
import type { SchemaIndex } from '../../schema/schema-index.js';
import { stageClock } from '../../util/stage-clock.js';
import { makeUnseenTest } from './domains.js';
import { toSgsaccTurns } from './from-turns.js';
import type { SgsaccTurn } from './types.js';

export interface SgsaccData {
  loaded: LoadedDataset;
  rulesHash: string;
  /** Expand a slice of the loaded turns into SGSAcc turns (rules + negatives from the whole data). */
  expand(turns: Turn[]): SgsaccTurn[];
  isUnseen(service: string): boolean;
  isCategorical(service: string, slot: string): boolean | undefined;
  schema: SchemaIndex;
}

/**
 * The seen/unseen split of the services: SGD's, from the domains of sgd/train/schema.json. A file
 * there that cannot be read or parsed is an error naming it (exit 2), as is a data-dir split whose
 * train schema is missing: either would silently count every service as seen. Only a user's own
 * SGD-format dialogues (--dialogues) with no SGD train schema in the data dir have no unseen split,
 * as other datasets have none.
 */
function unseenTest(opts: Omit<LoadDatasetOptions, 'limit'>): (service: string) => boolean {
  if (opts.dataset !== 'sgd' || !opts.dataDir) return () => false;
  if (opts.input && !existsSync(path.join(opts.dataDir, 'sgd', 'train', 'schema.json'))) return () => false;
  return makeUnseenTest(sgdTrainServices(opts.dataDir));
}

/**
 * Everything SGSAcc needs from the data side: turns, the rule engine bound to the dataset's
 * schema, and the seen/unseen test (SGD: domain absent from train/schema.json; others: all seen).
 */
export function loadSgsaccData(opts: Omit<LoadDatasetOptions, 'limit'>): SgsaccData {
  stageClock.enter('load');
  const loaded = loadDataset(opts);
  const rules = loadRules(opts.dataset);
  // The negatives' value pool comes from all loaded turns so a --limit slice gets the same negatives.
  const expander = new Expander(loaded.schema, rules, buildValueIndex(loaded.turns));
  const isUnseen = unseenTest(opts);
  return {
    loaded,
    rulesHash: rules.hash,
    schema: loaded.schema,
    expand: (turns) => {
      const previous = stageClock.enter('rules');
      const expanded = toSgsaccTurns(turns, (t) => expander.expandTurn(t));
      stageClock.enter(previous === 'rules' ? 'other' : previous);
      return expanded;
    },
    isUnseen,
    isCategorical: serIsCategorical(opts.dataset, loaded.schema),
  };
}
