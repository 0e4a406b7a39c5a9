import type { ActionReferences } from '../../rules/types.js';
import type { Granularity, TurnSentences } from './sentence-check.js';

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
  /**
   * Also check the other direction (Dušek & Kasner 2020): do the turn's entailment references,
   * joined in action order, entail the utterance? Catches added content. Off by default.
   */
  hallucination?: boolean;
  /**
   * The context-only control: where the context premise decides (an action, a reference at
   * validation, a hallucination check), the same premise without what is judged is checked too, and
   * when the context alone entails, the credit is withdrawn (outcome `context-only`). The control's
   * pair runs whatever this says, so every run counts the rescues it would withdraw; this decides
   * whether they are withdrawn. Off by default (the paper's method); `rerank` and `serve` turn it on.
   */
  contextControl?: boolean;
  /**
   * With `hallucination`: 'sentence' also checks each sentence of the utterance against each of the
   * turn's facts (sentence-check.ts, SummaC's granularity). Absent or 'turn': nothing changes.
   */
  granularity?: Granularity;
}

export type ReferenceSelection = 'entailed' | 'paper';
export const REFERENCE_SELECTIONS: readonly ReferenceSelection[] = ['entailed', 'paper'];
/** The rule every product defaults to (SGSACC_DEFAULTS), and what options without one use. */
export const DEFAULT_REFERENCE_SELECTION: ReferenceSelection = 'entailed';

/** Why an action (and so its turn) is left out of validated SGSAcc. */
export type ExclusionReason =
  | 'no-candidates' // the rules produced nothing to check against
  | 'no-ground-truth' // the turn has no gold utterance to select a reference with
  | 'no-candidate-entailed' // the gold utterance entails none of the candidates
  | 'negative-entailed' // the gold utterance entails a tampered (wrong-value) reference
  | 'context-only'; // only the context premise entailed the reference, and the context alone entails it (with the control on)

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
  /**
   * With contextUsed: the context premise without the gold utterance entails the reference too, so
   * the utterance earned nothing (the context-only control; the turn is excluded when the control is
   * on). Absent in records stored before the control existed: the next run computes it.
   */
  contextOnly?: boolean;
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
  /**
   * The hallucination-direction premise and its validation on the gold utterance; present once a
   * run with `hallucination` has computed it (a record is re-appended with it, the later line wins).
   */
  hallucination?: HallucinationPremise;
}

/** Why a turn is left out of the validated hallucination rate. */
export type HallucinationExclusionReason =
  | 'references-excluded' // the omission side excluded the turn: its references are not trusted
  | 'no-ground-truth' // no gold utterance to validate the premise with
  | 'gold-not-entailed' // the references (with the user turn, when context is on) do not entail the gold utterance
  | 'context-only'; // only the user turn rescued the gold utterance, and the user turn alone entails it (with the control on)

/**
 * How a turn's hallucination direction is checked:
 * - 'checked': premise = references joined in action order, hypothesis = the utterance;
 * - 'content-free': every action is phatic (GOODBYE, REQ_MORE, greetings...): nothing to check, the
 *   four-way label is the omission side's;
 * - 'unscorable': an action has no reference, so the premise would be incomplete.
 */
export type HallucinationCheck = 'checked' | 'content-free' | 'unscorable';

export interface HallucinationPremise {
  check: HallucinationCheck;
  /** The references joined in action order ('' unless checked). */
  premise: string;
  /** Previous user turn + premise, tried when the premise alone does not entail (context on). */
  contextPremise?: string;
  /** Validation of this premise on the gold utterance ('unchecked' with validation off or nothing to check). */
  status: 'validated' | 'excluded' | 'unchecked';
  reasons?: HallucinationExclusionReason[];
  /** The gold utterance's own verdict (its hallucination check as a system); null when not checked. */
  goldEntailed: boolean | null;
  goldEntailment: number | null;
  goldContextUsed: boolean;
  /** With goldContextUsed: the user turn alone entails the gold utterance (the context-only control). */
  goldContextOnly?: boolean;
}

/** Per-turn outcome of both directions (Dušek & Kasner's OK / omission / hallucination / both). */
export type FourWayLabel = 'ok' | 'omission' | 'hallucination' | 'both';

export interface TurnHallucination {
  check: HallucinationCheck;
  /** The premise does not entail the utterance (null when not checked). */
  hallucinated: boolean | null;
  /** Entailment probability under the premise that decided (null when not checked). */
  entailment: number | null;
  /** Only the premise with the previous user turn entailed the utterance. */
  contextUsed: boolean;
  /**
   * With contextUsed: the user turn alone entails the utterance, so the facts played no part (the
   * context-only control). With the control on the utterance then counts as hallucinated.
   */
  contextOnly?: boolean;
  /** 'validated' only when both directions passed validation on the gold utterance. */
  validation: 'validated' | 'excluded' | 'unchecked';
  exclusionReasons?: HallucinationExclusionReason[];
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
  /** Entailment probability with the utterance alone as the premise (the report shows both). */
  plainEntailment?: number;
  /** Entailment probability with the context premise, when the plain premise failed and context is on. */
  contextEntailment?: number;
  /** The context premise decided: the plain premise failed, the context premise entailed. */
  contextUsed: boolean;
  /**
   * With contextUsed: the context premise without the utterance entails the reference too (the
   * context-only control). With the control on the action is not entailed (its credit withdrawn);
   * with it off it stays entailed, and the report counts it as a rescue the control would withdraw.
   */
  contextOnly?: boolean;
  /** The reference itself was only entailed by the gold utterance with context (selection rescue). */
  referenceViaContext: boolean;
  /** With referenceViaContext: the context alone entails the reference (ActionReferenceChoice.contextOnly). */
  referenceContextOnly?: boolean;
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
  /** The system utterance that was scored and the user turn before it: what a reader of a failing turn needs. */
  utterance?: string;
  previousUserUtterance?: string;
  actions: ActionScore[];
  /** With `hallucination`: the other direction's check, and the four-way label (null when unscorable). */
  hallucination?: TurnHallucination;
  label?: FourWayLabel | null;
  /** With granularity 'sentence': each sentence's verdict, and the turn's unsupported sentences. */
  sentences?: TurnSentences;
  /**
   * SER's verdict on the scored utterance (`score` writes it, so paired tests can resample SER):
   * true when a checked slot value is missing, false when all are present, null when the turn has
   * no value SER checks.
   */
  slotError?: boolean | null;
  /**
   * BLEU statistics of the utterance against the gold one, sacreBLEU's per-segment layout
   * ([sysLen, refLen, matches 1-4, n-grams 1-4]); null when the turn has no gold utterance.
   */
  bleu?: number[] | null;
}
