import type { Command } from 'commander';
import { loadPredictions } from '../metrics/predictions.js';
import { InputError } from '../util/errors.js';
import { addInputOption, reportSkipped } from './options.js';

/** -i/--input (old name --predictions) and --allow-missing, for the commands that score a system's outputs (ser, score). */
export function addPredictionsOptions(cmd: Command): Command {
  return addInputOption(
    cmd,
    'system outputs: JSONL {"id","utterance"}, a JSON array of those, or a JSON object id -> utterance (default: the ground truth)',
    { predictionsAlias: true },
  ).option('--allow-missing', 'score only the turns that have a prediction (missing ids are still listed)');
}

/** The --predictions file by turn id; with --skip-invalid, bad records are listed on stderr and left out. */
export function readPredictionsFlag(file: string, skipInvalid: boolean | undefined): Map<string, string> {
  const loaded = loadPredictions(file, { skipInvalid });
  reportSkipped('prediction', loaded.invalid);
  return loaded.byId;
}

/**
 * Scores over fewer turns than the reference set are not comparable, so missing predictions stop
 * the run unless --allow-missing; this refusal comes before any notice so it is the only line.
 * Ids that match no turn (a typo, another split) are worth a notice but not a refusal.
 */
export function checkPredictionIds(c: { file: string; missing: string[]; extra: string[]; source: string; allowMissing?: boolean }): void {
  if (c.missing.length > 0 && !c.allowMissing) {
    throw new InputError(
      `${c.missing.length} turns have no prediction (first: ${c.missing.slice(0, 3).join(', ')}); pass --allow-missing to score the others`,
      { file: c.file },
    );
  }
  if (c.extra.length > 0) {
    process.stderr.write(`todeval: ${c.extra.length} prediction ids match no turn of ${c.source} (first: ${c.extra.slice(0, 3).join(', ')})\n`);
  }
}
