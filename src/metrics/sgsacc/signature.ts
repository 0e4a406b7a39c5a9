import { modelSignatureFields, type NliModelSignature } from '../../nli/types.js';
import { extendSignature, makeSignature, type Signature } from '../../util/signature.js';
import type { SgsaccConfig } from './config.js';
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

/** Who was scored, as a signature records it (score: the system and its predictions' digest). */
export interface ScoredSystem {
  system?: string;
  predictions?: string;
}

/**
 * A result's signature on top of its references' signature: the metric, the system, and the options
 * that make scores differ over the same references (the direction, the control), then `extra`.
 */
export function sgsaccResultSignature(references: Signature, metric: 'sgsacc' | 'sgsacc-turns', config: Pick<SgsaccConfig, 'resultFields'>, who: ScoredSystem & { limit?: number | null } = {}, extra: { missingPredictions?: number; shard?: string } = {}): Signature {
  return extendSignature(references, {
    metric,
    ...('limit' in who ? { limit: who.limit } : {}),
    ...('system' in who ? { system: who.system } : {}),
    ...('predictions' in who ? { predictions: who.predictions } : {}),
    // The references are shared by both directions, granularities and control settings; per-turn
    // results and reports are not.
    hallucination: config.resultFields.hallucination,
    granularity: config.resultFields.granularity,
    contextControl: config.resultFields.contextControl,
    ...('missingPredictions' in extra ? { missingPredictions: extra.missingPredictions } : {}),
    ...('shard' in extra ? { shard: extra.shard } : {}),
  });
}

/** The SGSAcc section of an `evaluate --sgsacc` run, as its signature records it. */
export interface EvaluateSgsaccSigned {
  /**
   * The rules' and the schema's digests: they decide the references SGSAcc and SER are scored
   * against; and `false` for validation or the context pass where a library call turned it off.
   */
  signed?: { rules?: string; schema?: string; validation?: boolean; context?: boolean };
  model: NliModelSignature;
  referenceSelection?: string;
  contextControl?: boolean;
  sentences?: unknown;
  skipDelexicalized?: boolean;
}

/** An `evaluate` signature with its `--sgsacc` section's fields: what decided the SGSAcc numbers beside mwzeval's. */
export function evaluateSgsaccSignature(evaluate: Signature, s: EvaluateSgsaccSigned): Signature {
  return extendSignature(evaluate, {
    // The rules and the schema decide the references SGSAcc and SER are scored against.
    rules: s.signed?.rules,
    schema: s.signed?.schema,
    ...modelSignatureFields(s.model),
    // Absent when on (evaluate's defaults, the only setting its CLI has), so those runs keep their
    // signatures; `false` as score signs it when a library call turned one off: without validation
    // every turn counts, without the context pass no rescue, and such a run compares with no default one.
    validation: s.signed?.validation === false ? false : undefined,
    context: s.signed?.context === false ? false : undefined,
    referenceSelection: s.referenceSelection,
    contextControl: contextControlSignature(s.contextControl),
    // Absent unless asked for, as in score's signature: evaluate --sgsacc keeps its digests.
    granularity: s.sentences ? 'sentence' : undefined,
    // Signed: the SGSAcc of a delexicalized system's placeholder-free turns is not the system's.
    delexicalized: s.skipDelexicalized ? 'skipped' : undefined,
  });
}
