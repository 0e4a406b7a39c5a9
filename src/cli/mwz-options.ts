import { Option, type Command } from 'commander';
import type { GroundTruthSource } from '../metrics/mwz/ground-truth.js';

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
