import { setImmediate as nextTurn } from 'node:timers/promises';
import { resolveDataDir } from '../data/data-dir.js';
import type { Evaluator, EvaluatorOptions } from '../metrics/mwz/evaluator.js';
import { runStepsAsync } from '../metrics/significance/steps.js';
import { compareRunsSteps, type CompareOptions, type CompareResult } from '../report/stats/compare.js';
import { loadItemSource, type ItemSource } from '../report/stats/item-files.js';
import { mwzEvaluator, type MwzHooks, type MwzReadOptions } from './mwz-evaluator.js';

export interface ComparePipelineOptions extends CompareOptions, MwzReadOptions {
  /** The baseline's per-item output, then each system's (what `loadItemSource` reads). */
  runs: readonly string[];
  /** For mwzeval predictions among the runs: where `multiwoz/` is (default: as resolveDataDir finds it). */
  dataDir?: string;
  /**
   * sacreBLEU's chrF (true: chrF2; or its options) and TER of mwzeval predictions among the runs,
   * over BLEU's strings (per-item files carry them when evaluate wrote them).
   */
  chrf?: EvaluatorOptions['chrf'];
  ter?: boolean;
  hooks?: CompareHooks;
}

/** Warnings and skipped dialogues of mwzeval predictions among the runs. */
export type CompareHooks = MwzHooks;

/**
 * The runs' per-item outputs read (mwzeval predictions evaluated with one Evaluator, whose ground
 * truth is loaded only if a run needs it, and then once).
 */
export function loadCompareRuns(o: Omit<ComparePipelineOptions, keyof CompareOptions>): ItemSource[] {
  return o.runs.map(compareRunReader(o));
}

/** Reads one run's per-item output; the Evaluator for predictions is made at the first that needs it and shared. */
function compareRunReader(o: Omit<ComparePipelineOptions, keyof CompareOptions>): (file: string) => ItemSource {
  let evaluator: Evaluator | undefined;
  const lazyEvaluator = (): Evaluator => {
    if (!evaluator) {
      evaluator = mwzEvaluator(o, resolveDataDir(o.dataDir), o.hooks);
    }
    return evaluator;
  };
  return (file) => loadItemSource(file, { evaluator: lazyEvaluator, textMetrics: { chrf: o.chrf, ter: o.ter } });
}

/**
 * `todeval compare` as a library call: the runs read, then sacreBLEU's paired tests of each system
 * against the baseline on every metric all runs have. The resampling yields to the event loop
 * every few milliseconds (runStepsAsync), so a signal handler (Ctrl-C, SIGTERM) still runs within
 * a second of arriving; `compareRuns` is the synchronous form over runs already read.
 */
export async function runComparePipeline(o: ComparePipelineOptions): Promise<CompareResult> {
  // One run at a time, the event loop given a turn between: a run of mwzeval predictions is
  // evaluated (a second or two of CPU each with chrF and TER), and reading all of them in one piece
  // held a server's other requests, a signal handler or a test worker's RPC for all of them together.
  const read = compareRunReader(o);
  const sources: ItemSource[] = [];
  for (const file of o.runs) {
    if (sources.length > 0) await nextTurn();
    sources.push(read(file));
  }
  return runStepsAsync(
    compareRunsSteps(sources, { test: o.test, samples: o.samples, seed: o.seed, unit: o.unit, commonItems: o.commonItems, metrics: o.metrics }),
  );
}
