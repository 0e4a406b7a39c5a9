import { Option, type Command } from 'commander';
import type { GroundTruthSource } from '../metrics/mwz/ground-truth.js';
import { positiveInt } from './options.js';

/** The flags that decide how mwzeval-format predictions are read and evaluated (evaluate, compare). */
export interface MwzInputFlags {
  groundTruth: 'auto' | 'mwz21' | 'mwz22';
  strict?: boolean;
  skipInvalid?: boolean;
  domainsFromSlots?: boolean;
}

/** --ground-truth's names for the sources: auto means MultiWOZ 2.2 files when present. */
export const GROUND_TRUTH_SOURCES: Record<MwzInputFlags['groundTruth'], GroundTruthSource | undefined> = {
  auto: undefined,
  mwz21: 'multiwoz21-convlab',
  mwz22: 'multiwoz22',
};

/** --chrf-word-order: sacreBLEU's -cw for the chrF of MultiWOZ responses (evaluate --chrf, compare --metric chrf). */
export function chrfWordOrderOption(): Option {
  return new Option('--chrf-word-order <n>', "word n-gram order of chrF (sacreBLEU's -cw; 2 is chrF++; default 0, chrF2)").argParser(positiveInt('--chrf-word-order', true));
}

/** chrF's options from --chrf-word-order: sacreBLEU's defaults unless a word order is given. */
export function chrfFrom(flags: { chrf?: boolean; chrfWordOrder?: number }): boolean | { wordOrder: number } {
  return flags.chrfWordOrder !== undefined ? { wordOrder: flags.chrfWordOrder } : flags.chrf === true;
}

/** --ground-truth, --strict, --skip-invalid, --domains-from-slots, worded alike in evaluate and compare. */
export function addMwzInputOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--ground-truth <source>', 'ground truth: MultiWOZ 2.2 files when present (auto), or force one')
        .choices(['auto', 'mwz21', 'mwz22'])
        .default('auto'),
    )
    .option('--strict', 'unknown slot placeholders and state slots are errors (default: warn; placeholders are dropped, as mwzeval)')
    .option('--skip-invalid', 'list invalid dialogues (unknown ids, wrong turn counts) and evaluate the rest')
    .option('--domains-from-slots', "active domains from placeholder names like [hotel_name] (mwzeval's add_slot_domains.py)");
}
