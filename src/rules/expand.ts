import type { DialogueAction, Turn } from '../adapters/types.js';
import type { SchemaIndex } from '../schema/schema-index.js';
import type { SchemaSlot } from '../schema/types.js';
import { sgdDomain } from '../schema/sgd.js';
import {
  booleanValue,
  descriptionPhrase,
  descriptionQuestion,
  isBooleanSlot,
  joinValues,
  nameWords,
  negateSlotVerb,
  nounPhrase,
  plainPhrase,
  sentenceCase,
  slotHasVerb,
} from './text.js';
import type { ActionReferences, CompiledRule, CompiledTemplate, RuleSet, TemplateKind } from './types.js';
import { pickOther, valueKey, type ValueIndex } from './value-index.js';

/** Placeholder values that do not depend on the action's values. */
interface Phrases {
  desc: string;
  descnp: string;
  descq: string;
  slot: string;
  slotneg: string;
  service: string;
  intent: string;
  intentdesc: string;
}

/**
 * A template with every placeholder but {value} filled in: `parts` alternate literal text and
 * value holes, so expanding an action is a handful of concatenations.
 */
interface Prepared {
  parts: string[];
  usesValue: boolean;
}

/** What one (rule, service, slot, intent) needs, computed once. */
interface Prep {
  slotDescription: string;
  schemaSlot: SchemaSlot | undefined;
  boolean: boolean;
  verbSlot: boolean;
  /** Prepared templates by kind, or by `<rule id>|<kind>` for another rule's templates (negatives). */
  byKind: Map<string, Prepared[]>;
  rule: CompiledRule;
  phrases: Phrases;
}

const FALLBACK: Record<TemplateKind, TemplateKind[]> = {
  boolTrueIs: ['boolTrueIs', 'boolTrue', 'value', 'none'],
  boolFalseIs: ['boolFalseIs', 'boolFalse', 'value', 'none'],
  boolTrue: ['boolTrue', 'value', 'none'],
  boolFalse: ['boolFalse', 'value', 'none'],
  value: ['value', 'none'],
  none: ['none'],
};

const OPPOSITE: Partial<Record<TemplateKind, TemplateKind>> = {
  boolTrue: 'boolFalse',
  boolFalse: 'boolTrue',
  boolTrueIs: 'boolFalseIs',
  boolFalseIs: 'boolTrueIs',
};

function templatesFor(rule: CompiledRule, kind: TemplateKind): CompiledTemplate[] {
  for (const k of FALLBACK[kind]) {
    const t = rule.templates[k];
    if (t && t.length) return t;
  }
  return [];
}

/** Fill all placeholders except {value}; undefined when one it uses is empty (the template does not apply). */
function prepare(t: CompiledTemplate, p: Phrases): Prepared | undefined {
  const parts: string[] = [];
  let cur = t[0];
  let usesValue = false;
  for (let i = 1; i < t.length; i += 2) {
    const name = t[i];
    if (name === 'value') {
      parts.push(cur);
      cur = t[i + 1];
      usesValue = true;
      continue;
    }
    const v = p[name as keyof Phrases];
    if (!v) return undefined;
    cur += v + t[i + 1];
  }
  parts.push(cur);
  if (!usesValue) parts[0] = sentenceCase(parts[0].trim());
  return { parts, usesValue };
}

function fill(p: Prepared, value: string): string | undefined {
  if (!p.usesValue) return p.parts[0];
  // A blank value (" " in a user's dialogues) is no value: "The city is  ." names nothing, and a
  // bare "{value}" template would hand NLI an empty hypothesis.
  if (value.trim() === '') return undefined;
  let out = p.parts[0];
  for (let i = 1; i < p.parts.length; i++) out += value + p.parts[i];
  return sentenceCase(out.trim());
}

function fillAll(list: Prepared[], value: string, onlyWithValue: boolean, exclude?: string[]): string[] {
  const out: string[] = [];
  const lower: string[] = [];
  for (const p of list) {
    if (onlyWithValue && !p.usesValue) continue;
    const s = fill(p, value);
    if (s === undefined) continue;
    const k = s.toLowerCase();
    if (lower.includes(k) || exclude?.includes(k)) continue;
    lower.push(k);
    out.push(s);
  }
  return out;
}

function slotMatches(rule: CompiledRule, slot: string): boolean {
  const only = rule.spec.slots;
  if (!only) return true;
  const suffix = slot.includes('-') ? slot.slice(slot.indexOf('-') + 1) : slot;
  return only.includes(slot) || only.includes(suffix);
}

/** The rule for an action: by the source act (MultiWOZ "Booking-Inform") first, then the act; slot-specific first. */
export function findRule(rules: RuleSet, act: string, slot: string, sourceAct?: string): CompiledRule | undefined {
  for (const key of sourceAct ? [sourceAct, act] : [act]) {
    const list = rules.byAct.get(key);
    if (!list) continue;
    const r = list.find((x) => slotMatches(x, slot));
    if (r) return r;
  }
  return undefined;
}

/**
 * Expands actions into references. One Expander per (schema, rules, value index): it prepares the
 * templates once per (rule, service, slot, intent), so the SGD test set expands in well under a second.
 */
export class Expander {
  private readonly prepCache = new Map<string, Prep>();

  constructor(
    private readonly schema: SchemaIndex,
    private readonly rules: RuleSet,
    private readonly valueIndex?: ValueIndex,
  ) {}

  private prep(rule: CompiledRule, service: string, slot: string, intentName: string | undefined): Prep {
    const key = `${rule.id}\u0000${service}\u0000${slot}\u0000${intentName ?? ''}`;
    const hit = this.prepCache.get(key);
    if (hit) return hit;
    const schemaSlot = slot ? this.schema.slot(service, slot) : undefined;
    const rawDesc = schemaSlot?.description ?? rule.spec.pseudoSlotDescription ?? '';
    const intent = intentName ? this.schema.intent(service, intentName) : undefined;
    const slotW = slot ? nameWords(slot, this.rules.slotWords) : '';
    const phrases: Phrases = {
      desc: descriptionPhrase(rawDesc),
      descnp: nounPhrase(rawDesc),
      descq: descriptionQuestion(rawDesc),
      slot: slotW,
      slotneg: negateSlotVerb(slotW),
      service: nameWords(sgdDomain(service)),
      intent: intentName ? nameWords(intentName) : '',
      intentdesc: intent ? plainPhrase(intent.description) : '',
    };
    const source = rule.spec.slotDescription ?? 'slot';
    const prep: Prep = {
      slotDescription: source === 'intent' ? (intent?.description ?? '') : source === 'none' ? '' : rawDesc,
      schemaSlot,
      boolean: schemaSlot !== undefined && schemaSlot.isCategorical && isBooleanSlot(schemaSlot.possibleValues),
      verbSlot: slotHasVerb(slotW),
      byKind: new Map(),
      rule,
      phrases,
    };
    this.prepCache.set(key, prep);
    return prep;
  }

  private prepared(prep: Prep, kind: TemplateKind, rule = prep.rule): Prepared[] {
    const cacheKey = (rule === prep.rule ? '' : `${rule.id}|`) + kind;
    let list = prep.byKind.get(cacheKey);
    if (!list) {
      list = [];
      for (const t of templatesFor(rule, kind)) {
        const p = prepare(t, prep.phrases);
        if (p) list.push(p);
      }
      prep.byKind.set(cacheKey, list);
    }
    return list;
  }

  private kindOf(a: DialogueAction, prep: Prep): TemplateKind {
    if (a.values.length === 0) return 'none';
    if (prep.boolean && a.values.length === 1) {
      const b = booleanValue(a.values[0]);
      if (b !== undefined) {
        if (b) return prep.verbSlot ? 'boolTrueIs' : 'boolTrue';
        return prep.verbSlot ? 'boolFalseIs' : 'boolFalse';
      }
    }
    return 'value';
  }

  expandAction(turnId: string, a: DialogueAction): ActionReferences {
    const rule = findRule(this.rules, a.act, a.slot, a.sourceAct);
    if (!rule) {
      return { id: turnId, service: a.service, act: a.act, slot: a.slot, values: a.values, candidates: [], negatives: [], slotDescription: '' };
    }
    const intentName = a.intent ?? (a.slot === 'intent' ? a.values[0] : undefined);
    const prep = this.prep(rule, a.service, a.slot, intentName);
    const kind = this.kindOf(a, prep);
    const value = joinValues(a.values);
    const candidates = fillAll(this.prepared(prep, kind), value, false);
    const negatives = this.negatives(turnId, a, prep, kind, candidates.map((c) => c.toLowerCase()));
    return {
      id: turnId,
      service: a.service,
      act: a.act,
      slot: a.slot,
      values: a.values,
      candidates,
      negatives,
      slotDescription: prep.slotDescription,
      rule: rule.id,
    };
  }

  private negatives(turnId: string, a: DialogueAction, prep: Prep, kind: TemplateKind, exclude: string[]): string[] {
    const rule = prep.rule;
    const strategy = rule.spec.negatives ?? 'tamper';
    if (strategy === 'none') return [];
    const value = joinValues(a.values);
    if (typeof strategy === 'object') {
      const other = findRule(this.rules, strategy.act, a.slot);
      return other ? fillAll(this.prepared(prep, kind, other), value, false, exclude) : [];
    }
    const seed = `${turnId}\u0000${a.service}\u0000${a.slot}`;
    if (strategy === 'other-intent') {
      const names = this.schema.service(a.service)?.intents.map((i) => i.name) ?? [];
      const current = a.intent ?? a.values[0];
      const alt = pickOther(names, current ? [current] : [], seed);
      if (!alt) return [];
      const altPrep = this.prep(rule, a.service, a.slot, alt);
      return fillAll(this.prepared(altPrep, kind), alt, false, exclude);
    }
    const opposite = OPPOSITE[kind];
    if (opposite) return fillAll(this.prepared(prep, opposite), value, false, exclude);
    if (kind !== 'value') return [];
    const slot = prep.schemaSlot;
    const pool =
      slot && slot.isCategorical && slot.possibleValues.length > 0
        ? slot.possibleValues
        : (this.valueIndex?.values(a.service, a.slot) ?? []);
    // Same meaning counts as same value: surface form, canonical value (SGD), number words.
    const index = this.valueIndex;
    const current = new Set([...a.values, ...(a.canonicalValues ?? [])].map(valueKey));
    if (index) for (const v of a.values) current.add(index.canonical(a.service, a.slot, v));
    const same = (v: string): boolean =>
      current.has(valueKey(v)) || (index !== undefined && current.has(index.canonical(a.service, a.slot, v)));
    const alt = pickOther(pool, a.values, seed, same);
    if (!alt) return [];
    return fillAll(this.prepared(prep, kind), alt, true, exclude);
  }

  expandTurn(turn: Turn): ActionReferences[] {
    return turn.actions.map((a) => this.expandAction(turn.id, a));
  }
}

const expanders = new WeakMap<RuleSet, WeakMap<SchemaIndex, Map<ValueIndex | undefined, Expander>>>();

/**
 * References for every action of a turn. Reuses one cached Expander per (rules, schema, value
 * index) so repeated calls stay fast; build the value index once per dataset (buildValueIndex).
 */
export function expandTurn(turn: Turn, schema: SchemaIndex, rules: RuleSet, negativesSource?: ValueIndex): ActionReferences[] {
  let bySchema = expanders.get(rules);
  if (!bySchema) expanders.set(rules, (bySchema = new WeakMap()));
  let byValues = bySchema.get(schema);
  if (!byValues) bySchema.set(schema, (byValues = new Map()));
  let ex = byValues.get(negativesSource);
  if (!ex) byValues.set(negativesSource, (ex = new Expander(schema, rules, negativesSource)));
  return ex.expandTurn(turn);
}
