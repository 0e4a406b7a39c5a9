import { contextControlOn } from './context-control.js';
import { contextControlSignature } from './signature.js';
import type { Granularity } from './sentence-check.js';
import { DEFAULT_REFERENCE_SELECTION, type ReferenceSelection, type SgsaccOptions } from './types.js';

/**
 * The one place SGSAcc settings become a run's configuration. Every edge (the CLI's flags, a
 * library call, a serve start, the Python client through either) hands what it was given to
 * resolveSgsaccConfig with its product, and every consumer takes the SgsaccConfig it returns:
 * defaults, implications and signature fields are decided here and nowhere else.
 */

/** The products that run SGSAcc; each has its own defaults (SGSACC_DEFAULTS). */
export type SgsaccProduct = 'score' | 'evaluate' | 'serve';

/** SGSAcc settings as a caller gives them: anything left out takes the product's default. */
export interface SgsaccSettings {
  validation?: boolean;
  context?: boolean;
  referenceSelection?: ReferenceSelection;
  hallucination?: boolean;
  contextControl?: boolean;
  /** 'sentence': each sentence is also checked against the facts (needs, so turns on, the hallucination direction). */
  granularity?: Granularity;
}

type Defaults = Required<Omit<SgsaccSettings, 'granularity'>>;

/**
 * Each product's defaults. The context-only control is off where SGSAcc is reported as the paper's
 * method (score, evaluate) and on in the service, whose callers are generation loops that could
 * learn to win through the context (docs/sgsacc.md).
 */
export const SGSACC_DEFAULTS: Readonly<Record<SgsaccProduct, Readonly<Defaults>>> = {
  score: { validation: true, context: true, referenceSelection: DEFAULT_REFERENCE_SELECTION, hallucination: false, contextControl: false },
  evaluate: { validation: true, context: true, referenceSelection: DEFAULT_REFERENCE_SELECTION, hallucination: false, contextControl: false },
  serve: { validation: true, context: true, referenceSelection: DEFAULT_REFERENCE_SELECTION, hallucination: false, contextControl: true },
};

/** A run's SGSAcc configuration: every option decided, and what the signatures record of it. */
export interface SgsaccConfig extends SgsaccOptions {
  readonly validation: boolean;
  readonly context: boolean;
  readonly referenceSelection: ReferenceSelection;
  readonly hallucination: boolean;
  /** On only with the context pass: without the context premise there is nothing for it to check. */
  readonly contextControl: boolean;
  /** 'sentence', or absent for turn level (so turn-level runs keep their signatures and digests). */
  readonly granularity?: 'sentence';
  /** What the references' signature records: the options the stored references depend on. */
  readonly referencesFields: { readonly validation: boolean; readonly context: boolean; readonly referenceSelection: ReferenceSelection };
  /**
   * What a result's signature adds over its references': the options that make scores differ over
   * the same references, each present only when on (files written before they existed stay valid).
   */
  readonly resultFields: { readonly hallucination?: true; readonly granularity?: 'sentence'; readonly contextControl?: true };
}

/** The configuration of `settings` under `product`'s defaults and SGSAcc's implications. */
export function resolveSgsaccConfig(settings: SgsaccSettings, product: SgsaccProduct): SgsaccConfig {
  const d = SGSACC_DEFAULTS[product];
  const validation = settings.validation ?? d.validation;
  const context = settings.context ?? d.context;
  const referenceSelection = settings.referenceSelection ?? d.referenceSelection;
  const sentence = settings.granularity === 'sentence';
  // Sentence granularity checks each sentence against the turn's facts: the facts => text premise,
  // which the hallucination direction computes.
  const hallucination = (settings.hallucination ?? d.hallucination) || sentence;
  const contextControl = contextControlOn(context, settings.contextControl ?? d.contextControl);
  return Object.freeze({
    validation,
    context,
    referenceSelection,
    hallucination,
    ...(sentence ? { granularity: 'sentence' as const } : {}),
    contextControl,
    referencesFields: Object.freeze({ validation, context, referenceSelection }),
    resultFields: Object.freeze({
      ...(hallucination ? { hallucination: true as const } : {}),
      ...(sentence ? { granularity: 'sentence' as const } : {}),
      ...(contextControlSignature(contextControl) ? { contextControl: true as const } : {}),
    }),
  });
}
