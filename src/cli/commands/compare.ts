import type { Command } from 'commander';
import { InputError } from '../../util/errors.js';
import { lowUnitsNote } from '../../metrics/significance/confidence.js';
import { runComparePipeline } from '../../pipeline/compare.js';
import { formatComparison } from '../../report/stats/compare.js';
import { addDataDirOption, reportSkipped } from '../options.js';
import { addMwzInputOptions, chrfFrom, chrfWordOrderOption, GROUND_TRUTH_SOURCES, type MwzInputFlags } from '../mwz-options.js';
import { addPairedTestOptions, seedFrom, unitOption, type SignificanceFlags } from '../significance-options.js';

interface CompareFlags extends Omit<SignificanceFlags, 'confidence' | 'confidenceN'>, MwzInputFlags {
  unit: 'turn' | 'dialogue';
  commonItems?: boolean;
  metric?: string;
  chrfWordOrder?: number;
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
    .option('--metric <ids>', 'comma-separated metric ids to compare (default: every metric all runs have; chrf and ter, which mwzeval predictions get only when named here)')
    .addOption(chrfWordOrderOption())
    .option('--json', 'print {test, n, seed, unit, baseline, systems, signature, comparisons} as JSON');
  addPairedTestOptions(cmd, true);
  addMwzInputOptions(addDataDirOption(cmd));
  cmd.action((runs: string[], flags: CompareFlags) => runCompare(runs, flags));
}

async function runCompare(runs: string[], flags: CompareFlags): Promise<void> {
  const metrics = flags.metric?.split(',').map((m) => m.trim()).filter(Boolean);
  // The word order is how chrF of mwzeval predictions is computed, which only --metric chrf asks for.
  if (flags.chrfWordOrder !== undefined && !metrics?.includes('chrf')) throw new InputError('--chrf-word-order sets the chrF computed for mwzeval predictions: name chrf in --metric (e.g. --metric chrf)');
  const result = await runComparePipeline({
    runs,
    test: flags.pairedAr ? 'ar' : 'bs',
    samples: flags.pairedAr ? flags.pairedArN : flags.pairedBsN,
    seed: seedFrom(flags.seed),
    unit: flags.unit,
    commonItems: flags.commonItems === true,
    metrics,
    dataDir: flags.dataDir,
    groundTruth: GROUND_TRUTH_SOURCES[flags.groundTruth],
    strict: flags.strict,
    skipInvalid: flags.skipInvalid,
    domainsFromSlots: flags.domainsFromSlots,
    // chrF and TER are not mwzeval's metrics (and each costs about twice BLEU's time): computed for predictions when named.
    chrf: metrics?.includes('chrf') ? chrfFrom({ chrf: true, chrfWordOrder: flags.chrfWordOrder }) : false,
    ter: metrics?.includes('ter') === true,
    hooks: { warn: (m) => process.stderr.write(`todeval: warning: ${m}\n`), skipped: (e) => reportSkipped('input', [e]) },
  });
  const low = lowUnitsNote(result.comparisons);
  if (low && flags.json) process.stderr.write(`todeval: ${low}\n`);
  process.stdout.write(flags.json ? JSON.stringify(result, null, 2) + '\n' : formatComparison(result, { alpha: flags.alpha }));
}
