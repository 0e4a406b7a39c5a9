import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Seed } from '../metrics/significance/pcg64.js';
import { DEFAULT_AR_TRIALS, DEFAULT_BOOTSTRAP_SAMPLES, DEFAULT_SEED, resolveSeed, type ResampleUnit } from '../metrics/significance/spec.js';
import { InputError } from '../util/errors.js';
import { positiveInt } from './options.js';

/** The flags of sacreBLEU's statistical tests, as `bleu` and `compare` take them. */
export interface SignificanceFlags {
  pairedBs?: boolean;
  pairedAr?: boolean;
  pairedBsN: number;
  pairedArN: number;
  confidence?: boolean;
  confidenceN: number;
  seed: SeedFlag;
  alpha: number;
}

/**
 * `--seed`'s value: a seed, or 'none' (to be drawn by seedFrom). Not null: commander turns a
 * parser's null into '' (how `--seed none` once signed `seed:` with nothing after it).
 */
export type SeedFlag = Exclude<Seed, null> | 'none';

/** `--seed N|none`: a non-negative integer (as NumPy takes it), or none for OS entropy. */
export function parseSeed(v: string): SeedFlag {
  if (v.toLowerCase() === 'none') return 'none';
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError('--seed must be a non-negative integer or none');
  const n = BigInt(v);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

function parseAlpha(v: string): number {
  const a = Number(v);
  if (!/^(0?\.\d+|1(\.0*)?)$/.test(v) || !(a > 0 && a <= 1)) throw new InvalidArgumentError('--alpha must be a number in (0, 1]');
  return a;
}

/** --seed: every resampling flag set has it (the paired tests' and the run intervals'). */
function seedOption(): Option {
  return new Option('--seed <n|none>', "NumPy seed of the resampling (sacreBLEU's); none draws one, prints it and signs it").argParser(parseSeed).default(DEFAULT_SEED);
}

/** --seed and --alpha, the flags every resampling command shares. */
export function addSeedOptions(cmd: Command): Command {
  return cmd
    .addOption(seedOption())
    .option('--alpha <p>', 'significance level: p-values at or below it are marked *', parseAlpha, 0.05);
}

/** --confidence [--confidence-n N]: bootstrap 95% intervals. */
export function addConfidenceOptions(cmd: Command, help = 'bootstrap 95% confidence intervals (sacreBLEU --confidence)'): Command {
  return cmd
    .option('--confidence', help)
    .option('--confidence-n <n>', 'bootstrap resamples for --confidence', positiveInt('--confidence-n'), DEFAULT_BOOTSTRAP_SAMPLES)
    .hook('preAction', (c) => requireSwitch(c, 'confidenceN', '--confidence-n', 'confidence', '--confidence'));
}

/** A count flag typed without the switch it counts for is refused, not ignored without a word. */
function requireSwitch(cmd: Command, count: string, countFlag: string, sw: string, swFlag: string, alsoWhen?: () => boolean): void {
  if (cmd.getOptionValueSource(count) !== 'cli') return;
  if (cmd.getOptionValue(sw) === true || alsoWhen?.()) return;
  throw new InputError(`${countFlag} has no effect without ${swFlag}: add ${swFlag}, or leave ${countFlag} out`);
}

/**
 * sacreBLEU's paired-test flags: --paired-bs | --paired-ar, their sample counts, --seed, --alpha.
 * `bsByDefault`: the command runs the bootstrap when neither test is named (compare, report), so
 * --paired-bs-n alone counts; elsewhere (bleu) a count without its test is refused.
 */
export function addPairedTestOptions(cmd: Command, bsByDefault = false): Command {
  cmd
    .addOption(new Option('--paired-bs', 'paired bootstrap resampling test against the first system (the baseline)').conflicts('pairedAr'))
    .addOption(new Option('--paired-ar', 'paired approximate randomization test against the first system (the baseline); exact (every swap pattern) when 2^units is at most its trials').conflicts('pairedBs'))
    .option('--paired-bs-n <n>', 'resamples of --paired-bs', positiveInt('--paired-bs-n'), DEFAULT_BOOTSTRAP_SAMPLES)
    .option('--paired-ar-n <n>', 'trials of --paired-ar', positiveInt('--paired-ar-n'), DEFAULT_AR_TRIALS)
    .hook('preAction', (c) => {
      requireSwitch(c, 'pairedBsN', '--paired-bs-n', 'pairedBs', '--paired-bs', () => bsByDefault && c.getOptionValue('pairedAr') !== true);
      requireSwitch(c, 'pairedArN', '--paired-ar-n', 'pairedAr', '--paired-ar');
    });
  return addSeedOptions(cmd);
}

/**
 * The seed flag's value as a run uses it: `--seed none` draws one here, says which on stderr (the
 * signature carries it too), so that the run can be repeated with `--seed <it>`.
 */
export function seedFrom(seed: SeedFlag): Exclude<Seed, null> {
  if (seed !== 'none') return seed;
  const r = resolveSeed(null);
  process.stderr.write(`todeval: --seed none: drew seed ${r.label} (repeat this run with --seed ${r.label})\n`);
  return r.seed;
}

/** The test the flags ask for, with its sample count. */
export function pairedTestFrom(flags: SignificanceFlags): { test: 'bs' | 'ar' | null; samples?: number } {
  if (flags.pairedBs) return { test: 'bs', samples: flags.pairedBsN };
  if (flags.pairedAr) return { test: 'ar', samples: flags.pairedArN };
  return { test: null };
}

/** A resampling unit flag: whole dialogues (default) or single turns. */
export function unitOption(): Option {
  return new Option('--unit <unit>', 'what turn-level metrics resample: whole dialogues (turns within one are correlated) or single turns')
    .choices(['dialogue', 'turn'])
    .default('dialogue');
}

/** The flags of a run's own intervals (score, evaluate): --confidence, --confidence-n, --seed, --unit. */
export interface RunConfidenceFlags {
  confidence?: boolean;
  confidenceN: number;
  seed: SeedFlag;
  unit: ResampleUnit;
}

export function addRunConfidenceOptions(cmd: Command): Command {
  return addConfidenceOptions(cmd, "bootstrap 95% intervals of the report's metrics, resampling --unit (docs/significance.md)")
    .addOption(seedOption())
    .addOption(unitOption());
}

/** What runConfidence takes, from the flags; undefined without --confidence. */
export function runConfidenceFrom(flags: RunConfidenceFlags): { samples: number; seed: Seed; unit: ResampleUnit } | undefined {
  return flags.confidence ? { samples: flags.confidenceN, seed: seedFrom(flags.seed), unit: flags.unit } : undefined;
}
