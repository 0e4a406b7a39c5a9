import type { Command } from 'commander';
import { resolveDataDir } from '../../data/data-dir.js';
import { Evaluator } from '../../metrics/mwz/evaluator.js';
import { lowUnitsNote } from '../../metrics/significance/confidence.js';
import { runStepsAsync } from '../../metrics/significance/steps.js';
import { compareRunsSteps, formatComparison } from '../../report/compare.js';
import { loadItemSource } from '../../report/item-files.js';
import { addDataDirOption, reportSkipped } from '../options.js';
import { addMwzInputOptions, GROUND_TRUTH_SOURCES, type MwzInputFlags } from '../mwz-options.js';
import { addPairedTestOptions, seedFrom, unitOption, type SignificanceFlags } from '../significance-options.js';

interface CompareFlags extends Omit<SignificanceFlags, 'confidence' | 'confidenceN'>, MwzInputFlags {
  unit: 'turn' | 'dialogue';
  commonItems?: boolean;
  metric?: string;
  json?: boolean;
  dataDir?: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('compare')
    .description("paired significance tests of systems against a baseline on every metric of the runs' per-item outputs (sacreBLEU's tests; no model is re-run)")
    .argument('<runs...>', "the baseline's per-item output, then each system's: score/rerank --turns files, evaluate --items files, gcdf1 --per-dialogue files, or mwzeval predictions")
    .addOption(unitOption())
    .option('--common-items', 'compare on the items every run has (each run says how many of its own it leaves out) instead of refusing runs whose items differ')
    .option('--metric <ids>', 'comma-separated metric ids to compare (default: every metric all runs have)')
    .option('--json', 'print {test, n, seed, unit, baseline, systems, signature, comparisons} as JSON');
  addPairedTestOptions(cmd, true);
  addMwzInputOptions(addDataDirOption(cmd));
  cmd.action((runs: string[], flags: CompareFlags) => runCompare(runs, flags));
}

async function runCompare(runs: string[], flags: CompareFlags): Promise<void> {
  let evaluator: Evaluator | undefined;
  // mwzeval predictions are evaluated here; the data (and its ground truth) is loaded once, if at all.
  const lazyEvaluator = (): Evaluator => {
    if (!evaluator) {
      const data = resolveDataDir(flags.dataDir);
      evaluator = new Evaluator({
        dataDir: data.dir,
        dataDirSource: data.source,
        groundTruth: GROUND_TRUTH_SOURCES[flags.groundTruth],
        strict: flags.strict,
        skipInvalid: flags.skipInvalid,
        domainsFromSlots: flags.domainsFromSlots,
        onWarning: (m) => process.stderr.write(`todeval: warning: ${m}\n`),
        onSkipped: (e) => reportSkipped('input', [e]),
      });
    }
    return evaluator;
  };
  const sources = runs.map((file) => loadItemSource(file, { evaluator: lazyEvaluator }));
  // Resampled between turns of the event loop: Ctrl-C or SIGTERM ends the run within a second.
  const result = await runStepsAsync(
    compareRunsSteps(sources, {
      test: flags.pairedAr ? 'ar' : 'bs',
      samples: flags.pairedAr ? flags.pairedArN : flags.pairedBsN,
      seed: seedFrom(flags.seed),
      unit: flags.unit,
      commonItems: flags.commonItems === true,
      metrics: flags.metric?.split(',').map((m) => m.trim()).filter(Boolean),
    }),
  );
  const low = lowUnitsNote(result.comparisons);
  if (low && flags.json) process.stderr.write(`todeval: ${low}\n`);
  process.stdout.write(flags.json ? JSON.stringify(result, null, 2) + '\n' : formatComparison(result, { alpha: flags.alpha }));
}
