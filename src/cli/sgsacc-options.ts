import { Option } from 'commander';
import { REFERENCE_SELECTIONS } from '../metrics/sgsacc/types.js';

/** --reference-selection: how the entailment reference is chosen (docs/sgsacc.md, step 1). */
export function referenceSelectionOption(): Option {
  return new Option(
    '--reference-selection <rule>',
    "entailment reference: highest entailment among the candidates the ground truth entails (entailed), or the paper's literal highest entailment (paper)",
  )
    .choices(REFERENCE_SELECTIONS)
    .default('entailed');
}
