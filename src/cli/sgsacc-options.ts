import { Option, type Command } from 'commander';
import type { Granularity, ReferenceSelection, SgsaccSettings } from '../metrics/sgsacc/index.js';
import { REFERENCE_SELECTIONS } from '../metrics/sgsacc/types.js';

/** --reference-selection: how the entailment reference is chosen (docs/sgsacc.md, step 1); the default is the product's (SGSACC_DEFAULTS). */
export function referenceSelectionOption(defaultRule: ReferenceSelection): Option {
  return new Option(
    '--reference-selection <rule>',
    "entailment reference: highest entailment among the candidates the ground truth entails (entailed), or the paper's literal highest entailment (paper)",
  )
    .choices(REFERENCE_SELECTIONS)
    .default(defaultRule);
}

/**
 * --context-control / --no-context-control (docs/sgsacc.md, the context-only control): withdraw
 * credit the context alone earns. Both spellings on every command that has it; the default is the
 * product's (SGSACC_DEFAULTS, RERANK_DEFAULTS), which the command passes in.
 */
export function addContextControlOptions(cmd: Command, defaultOn: boolean): Command {
  return cmd
    .addOption(new Option('--context-control', 'where only the context premise entails, check the context alone too and give no credit when it entails').default(defaultOn))
    .addOption(new Option('--no-context-control', 'credit context rescues even when the context alone entails (they are still counted)'));
}

/** The SGSAcc flags score, evaluate and serve have (each its own subset: evaluate has no --no-validation, --no-context, --hallucination). */
export interface SgsaccCliFlags {
  validation?: boolean;
  context?: boolean;
  referenceSelection?: ReferenceSelection;
  hallucination?: boolean;
  granularity?: Granularity;
  contextControl?: boolean;
}

/** The SGSAcc settings the flags give, as given: the pipeline resolves them under its product's defaults. */
export function sgsaccSettingsOf(flags: SgsaccCliFlags): SgsaccSettings {
  const { validation, context, referenceSelection, hallucination, granularity, contextControl } = flags;
  return { validation, context, referenceSelection, hallucination, granularity, contextControl };
}
