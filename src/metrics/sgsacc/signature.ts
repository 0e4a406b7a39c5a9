import { modelSignatureFields, type NliModelSignature } from '../../nli/types.js';
import { makeSignature, type Signature } from '../../util/signature.js';
import type { SgsaccOptions } from './types.js';

export interface ReferencesConfig extends SgsaccOptions {
  model: NliModelSignature;
  rulesHash: string;
  dataset: string;
  /** The loaded dataset's source (LoadedDataset.source): which dialogues the references are of. */
  source: string;
  /** The user's own schema (LoadedDataset.schemaLabel): its descriptions enter the references. */
  schema?: string;
}

/**
 * What stored references depend on: data, rules, model and options, never the system scored. Shared
 * by `todeval score` and the service, so a references file written by one is reused by the other.
 */
export function referencesSignature(c: ReferencesConfig): Signature {
  return makeSignature({
    metric: 'sgsacc-references',
    ...modelSignatureFields(c.model),
    rules: c.rulesHash,
    dataset: c.dataset,
    data: c.source,
    schema: c.schema,
    validation: c.validation,
    context: c.context,
    referenceSelection: c.referenceSelection,
    // Not contextControl: the references record the control's verdicts whether or not it is on, so
    // one references file serves both settings (score's default off and serve's default on).
  });
}

/**
 * The signature value of the control: `true` when on, absent when off, so files written before the
 * control existed (computed without it) keep their signatures and stay comparable with runs without it.
 */
export function contextControlSignature(on: boolean | undefined): true | undefined {
  return on ? true : undefined;
}
