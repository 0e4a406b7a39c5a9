import { describeUnmatchedIds, loadPredictions } from '../metrics/predictions-file.js';
import { tallyPlaceholders } from '../metrics/placeholders.js';
import { InputError } from '../util/errors.js';
import type { PipelineHooks } from './hooks.js';

/** A predictions file by turn id; with `skipInvalid`, bad records go to `hooks.skipped` and are left out. */
export function readPredictions(file: string, skipInvalid: boolean | undefined, hooks: PipelineHooks = {}): Map<string, string> {
  const loaded = loadPredictions(file, { skipInvalid });
  hooks.skipped?.('prediction', loaded.invalid);
  for (const note of loaded.oversize.slice(0, 3)) hooks.warn?.(`${file}: ${note} (the NLI model reads 512 tokens)`);
  if (loaded.oversize.length > 3) hooks.warn?.(`${file}: ${loaded.oversize.length - 3} more utterances cut`);
  refuseDelexicalized(file, loaded.byId);
  return loaded.byId;
}

/**
 * SGSAcc and SER (score, ser) judge whether values were said: an utterance holding a
 * delexicalization placeholder ([value_name]) cannot be judged, and its turn would count as a
 * wrong one. Refused in one line with the count; leaving those turns out of the file and passing
 * --allow-missing scores the others (signed as missingPredictions).
 */
function refuseDelexicalized(file: string, byId: Map<string, string>): void {
  const t = tallyPlaceholders(byId.values());
  if (t.withPlaceholders === 0) return;
  const n = (x: number) => x.toLocaleString('en-US');
  throw new InputError(
    `${n(t.withPlaceholders)} of ${n(t.total)} utterances hold delexicalization placeholders (${t.examples.join(', ')}): SGSAcc and SER score lexicalized text. ` +
      'Give the lexicalized utterances, or leave those turns out of the file and pass --allow-missing to score the others',
    { file },
  );
}

/**
 * Scores over fewer turns than the reference set are not comparable, so missing predictions stop
 * the run unless `allowMissing`; ids that match no turn (a typo, another split, ids numbered by
 * system-turn order) stop it too unless `allowMissing` or `skipInvalid`, with the first few, the
 * nearest valid ids and what the ids should look like. The refusal comes before any notice so it is
 * the only line. Whatever the flags, predictions of which none names a turn to score are refused:
 * that is a wrong file or id scheme, never a score (it used to give a 0-turn report and exit 0).
 */
export function checkPredictionIds(
  c: {
    file: string;
    missing: string[];
    extra: string[];
    source: string;
    validIds: readonly string[];
    /** Turns in the slice that have a prediction (what would be scored). */
    matched: number;
    /** `--limit N`, to say where the turns were looked for. */
    limit?: number;
    allowMissing?: boolean;
    skipInvalid?: boolean;
  },
  hooks: Pick<PipelineHooks, 'notice'> = {},
): void {
  if (c.matched === 0) {
    const limit = c.limit !== undefined ? ` (--limit ${c.limit})` : '';
    const why = c.extra.length > 0 ? `: ${c.extra.length} prediction ids match no turn of ${c.source} (${describeUnmatchedIds(c.extra, c.validIds)})` : '';
    throw new InputError(`all ${c.missing.length} turns${limit} of ${c.source} have no prediction, nothing to score${why}`, { file: c.file });
  }
  if (c.extra.length > 0 && !c.allowMissing && !c.skipInvalid) {
    const alsoMissing = c.missing.length > 0 ? `; ${c.missing.length} turns have no prediction` : '';
    throw new InputError(
      `${c.extra.length} prediction ids match no turn of ${c.source} (${describeUnmatchedIds(c.extra, c.validIds)})${alsoMissing}; ` +
        'pass --allow-missing or --skip-invalid to score the others',
      { file: c.file },
    );
  }
  if (c.missing.length > 0 && !c.allowMissing) {
    throw new InputError(
      `${c.missing.length} turns have no prediction (first: ${c.missing.slice(0, 3).join(', ')}); pass --allow-missing to score the others`,
      { file: c.file },
    );
  }
  if (c.extra.length > 0) hooks.notice?.(`${c.extra.length} prediction ids match no turn of ${c.source} (first: ${c.extra.slice(0, 3).join(', ')})`);
}
