import type { ActionReferences } from '../../rules/types.js';

/**
 * SGSAcc works on system turns whose actions have already been expanded by the rule engine: the
 * rule engine's references minus the rule id (scoring never reads it), keyed by the action's
 * position in its turn rather than by the turn id.
 */
export interface SgsaccAction extends Omit<ActionReferences, 'id' | 'rule'> {
  /** Stable id of the action inside its turn (its index in the expanded turn). */
  id: string;
}

export interface SgsaccTurn {
  id: string;
  services: string[];
  /** Ground-truth system utterance: the premise for reference selection and validation. */
  utterance: string;
  previousUserUtterance: string;
  actions: SgsaccAction[];
}

export interface SgsaccOptions {
  /** Exclude turns whose ground truth fails validation (paper Sec. 2, Fig. 2 step 2). */
  validation: boolean;
  /** Retry non-entailed premises with previous user turn + slot description (paper Sec. 2.1). */
  context: boolean;
  /**
   * How the entailment reference is chosen among the candidates (see chooseReference):
   * 'entailed' (default) among those the ground truth entails, 'paper' the literal highest
   * entailment probability. Part of the references' signature.
   */
  referenceSelection?: ReferenceSelection;
}

export type ReferenceSelection = 'entailed' | 'paper';
export const REFERENCE_SELECTIONS: readonly ReferenceSelection[] = ['entailed', 'paper'];

export const DEFAULT_SGSACC_OPTIONS: SgsaccOptions = { validation: true, context: true, referenceSelection: 'entailed' };

/** Why an action (and so its turn) is left out of validated SGSAcc. */
export type ExclusionReason =
  | 'no-candidates' // the rules produced nothing to check against
  | 'no-ground-truth' // the turn has no gold utterance to select a reference with
  | 'no-candidate-entailed' // the gold utterance entails none of the candidates
  | 'negative-entailed'; // the gold utterance entails a tampered (wrong-value) reference

/** Reference selection + validation outcome for one action; depends only on data, rules and model. */
export interface ActionReferenceChoice {
  actionId: string;
  service: string;
  act: string;
  slot: string;
  /** The entailment reference, or null when there is nothing to score against. */
  reference: string | null;
  /** Entailment probability of the reference under the premise that selected it. */
  referenceEntailment: number | null;
  /** True when only the context-augmented premise entailed a candidate. */
  contextUsed: boolean;
  /** 'unchecked' when validation is off. */
  status: 'validated' | 'excluded' | 'unchecked';
  reason?: ExclusionReason;
  /** The negative reference that the gold utterance entailed, for diagnosing rules. */
  entailedNegative?: string;
}

export interface TurnReferences {
  id: string;
  services: string[];
  actions: ActionReferenceChoice[];
  /**
   * The gold utterance scored as a system against these references (the metric's ceiling). Stored
   * with the references because its pairs are almost all the selection pairs already scored.
   */
  groundTruth?: TurnScore;
}

export interface ActionScore {
  actionId: string;
  service: string;
  act: string;
  slot: string;
  reference: string;
  entailed: boolean;
  /** Entailment probability under the premise that decided (plain, or context when it rescued). */
  entailment: number;
  contextUsed: boolean;
  /** The reference itself was only entailed by the gold utterance with context (selection rescue). */
  referenceViaContext: boolean;
  /** The action's own validation outcome (its turn is excluded when any action is). */
  status?: ActionReferenceChoice['status'];
}

/** One finished turn of one system: what the incremental output file holds per line. */
export interface TurnScore {
  id: string;
  services: string[];
  /** Whether the turn passed validation ('unchecked' with --no-validation). */
  validation: 'validated' | 'excluded' | 'unchecked';
  exclusionReasons?: ExclusionReason[];
  /** Null when the turn cannot be scored at all (an action without a reference). */
  faithful: boolean | null;
  actions: ActionScore[];
}
