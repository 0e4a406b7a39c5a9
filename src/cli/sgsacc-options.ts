import { Option, type Command } from 'commander';
import type { Granularity, ReferenceSelection } from '../metrics/sgsacc/index.js';
import { REFERENCE_SELECTIONS } from '../metrics/sgsacc/types.js';
import type { SgsaccSettings } from '../pipeline/sgsacc.js';

/** --reference-selection: how the entailment reference is chosen (docs/sgsacc.md, step 1). */
export function referenceSelectionOption(): Option {
  return new Option(
    '--reference-selection <rule>',
    "entailment reference: highest entailment among the candidates the ground truth entails (entailed), or the paper's literal highest entailment (paper)",
  )
    .choices(REFERENCE_SELECTIONS)
    .default('entailed');
}

/**
 * --context-control / --no-context-control (docs/sgsacc.md, the context-only control): withdraw
 * credit the context alone earns. Both spellings on every command that has it; the default is the
 * command's (off for score and evaluate, so SGSAcc stays the paper's method; on for rerank and serve,
 * where a generator could learn to win through the context).
 */
export function addContextControlOptions(cmd: Command, defaultOn: boolean): Command {
  return cmd
    .addOption(new Option('--context-control', 'where only the context premise entails, check the context alone too and give no credit when it entails').default(defaultOn))
    .addOption(new Option('--no-context-control', 'credit context rescues even when the context alone entails (they are still counted)'));
}

/** The SGSAcc flags score and serve share (--no-validation, --no-context, --reference-selection, --hallucination, --granularity, --context-control). */
export interface SgsaccCliFlags {
  validation: boolean;
  context: boolean;
  referenceSelection: ReferenceSelection;
  hallucination?: boolean;
  granularity?: Granularity;
  contextControl: boolean;
}

/** The pipeline's SGSAcc settings from those flags (granularity only when sentence: turn-level runs keep their signatures). */
export function sgsaccSettingsFrom(flags: SgsaccCliFlags): SgsaccSettings {
  return {
    validation: flags.validation,
    context: flags.context,
    referenceSelection: flags.referenceSelection,
    hallucination: flags.hallucination === true,
    ...(flags.granularity === 'sentence' ? { granularity: flags.granularity } : {}),
    contextControl: flags.contextControl,
  };
}
