import type { ResolvedDataDir } from '../data/data-dir.js';
import { Evaluator, type EvaluatorOptions } from '../metrics/mwz/evaluator.js';
import type { InputError } from '../util/errors.js';

/** How mwzeval predictions are read and against which ground truth: what evaluate and compare share. */
export interface MwzReadOptions {
  /** Which ground truth (undefined: the one the data dir has, as --ground-truth auto). */
  groundTruth?: EvaluatorOptions['groundTruth'];
  strict?: boolean;
  skipInvalid?: boolean;
  domainsFromSlots?: boolean;
  /** Build the ground truth again rather than reuse its cache. */
  rebuildGroundTruth?: boolean;
}

export interface MwzHooks {
  warn?(message: string): void;
  /** An invalid dialogue skipped under `skipInvalid` (without this hook: a warning line). */
  skipped?(error: InputError): void;
}

/** The mwzeval evaluator of the pipelines, with their hooks as its callbacks. */
export function mwzEvaluator(o: MwzReadOptions, data: ResolvedDataDir, hooks: MwzHooks | undefined, metrics: Pick<EvaluatorOptions, 'bleu' | 'success' | 'richness' | 'dst' | 'chrf' | 'ter'> = {}): Evaluator {
  return new Evaluator({
    ...metrics,
    dataDir: data.dir,
    dataDirSource: data.source,
    groundTruth: o.groundTruth,
    strict: o.strict,
    skipInvalid: o.skipInvalid,
    noCache: o.rebuildGroundTruth,
    domainsFromSlots: o.domainsFromSlots,
    onWarning: (m) => hooks?.warn?.(m),
    onSkipped: hooks?.skipped ? (e) => hooks.skipped!(e) : undefined,
  });
}
