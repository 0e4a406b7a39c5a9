/** References for one dialogue action: what SGSAcc feeds to NLI as hypotheses. */
export interface ActionReferences {
  /** Turn id `<dialogue_id>/<turn_index>`. */
  id: string;
  service: string;
  act: string;
  slot: string;
  values: string[];
  /** Candidate entailment references: >= 2 for the shipped rules, fewer where a template's placeholder is empty (a slot without description keeps only the {slot} forms); none without a rule or a value. */
  candidates: string[];
  /** The same templates with a tampered value; empty when nothing can be tampered (REQUEST, GOODBYE ...). */
  negatives: string[];
  /** What context augmentation inserts into the premise: slot description, intent description for intent acts, '' when none. */
  slotDescription: string;
  /** `<rules file>#<index>` of the rule used; undefined when no rule covers the action. */
  rule?: string;
}

/** Which template list applies to an action, from its values and the slot's type. */
export type TemplateKind = 'value' | 'none' | 'boolTrue' | 'boolFalse' | 'boolTrueIs' | 'boolFalseIs';

export type NegativeStrategy =
  /** Same templates, another value (categorical: another possible value; boolean: the opposite; free text: another value seen in the data). */
  | 'tamper'
  /** The templates of another intent of the same service (OFFER_INTENT). */
  | 'other-intent'
  /** No negatives (acts without values). */
  | 'none'
  /** The templates of the opposite act (NOTIFY_SUCCESS <-> NOTIFY_FAILURE). */
  | { act: string };

/** One rule as written in rules/*.json. */
export interface RuleSpec {
  acts: string[];
  /** Restrict to these slots (SGD slot names or MultiWOZ 2.2 suffixes such as "choice"); more specific than act-only rules. */
  slots?: string[];
  /** Where slotDescription comes from. */
  slotDescription?: 'slot' | 'intent' | 'none';
  /** Description of a slot the schema does not define (SGD INFORM_COUNT's `count`). */
  pseudoSlotDescription?: string;
  templates: Partial<Record<TemplateKind, string[]>>;
  negatives?: NegativeStrategy;
}

export interface RuleFile {
  family: string;
  about?: string;
  datasets: ('sgd' | 'multiwoz' | 'generic')[];
  /** Readable words for slot names that are run together (MultiWOZ 2.2 pricerange -> price range). */
  slotWords?: Record<string, string>;
  rules: RuleSpec[];
}

/** A placeholder-split template: literal strings at even positions, placeholder names at odd ones. */
export type CompiledTemplate = string[];

export interface CompiledRule {
  id: string;
  spec: RuleSpec;
  templates: Partial<Record<TemplateKind, CompiledTemplate[]>>;
}

export interface RuleSet {
  dataset: 'sgd' | 'multiwoz' | 'generic';
  /** sha256 of the rules files read (relative path + content, in path order). */
  hash: string;
  files: string[];
  rules: CompiledRule[];
  slotWords: Record<string, string>;
  /** act -> rules for that act, slot-specific rules first. */
  byAct: Map<string, CompiledRule[]>;
}
