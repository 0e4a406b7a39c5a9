import { makeSignature, type Signature } from '../util/signature.js';
import { modelSignatureFields, type NliModelSignature } from './types.js';

/** What an NLI runner's probabilities depend on: the model (its revision, dtype, and family and pair encoding where not RoBERTa's), the length it truncates to, the device. */
export interface NliRunnerIdentity {
  readonly modelSignature: NliModelSignature;
  readonly maxLength: number;
  readonly device: string;
}

/** The signature of pair probabilities, shared by `todeval nli` and serve's /v1/nli. */
export function nliSignature(runner: NliRunnerIdentity): Signature {
  const s = runner.modelSignature;
  return makeSignature({ ...modelSignatureFields(s), maxLength: runner.maxLength, device: runner.device });
}
