import type { Command } from 'commander';
import { addInputOption } from './options.js';

/** -i/--input (old name --predictions) and --allow-missing, for the commands that score a system's outputs (ser, score). */
export function addPredictionsOptions(cmd: Command): Command {
  return addInputOption(
    cmd,
    'system outputs: JSONL {"id","utterance"}, a JSON array of those, or a JSON object id -> utterance (default: the ground truth)',
    { predictionsAlias: true },
  ).option('--allow-missing', 'score only the turns that have a prediction (missing ids are still listed)');
}
