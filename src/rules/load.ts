import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../util/errors.js';
import { rulesDir } from '../util/rules-dir.js';
import type { CompiledRule, CompiledTemplate, RuleFile, RuleSet, TemplateKind } from './types.js';

const PLACEHOLDERS = new Set(['desc', 'descnp', 'descq', 'slot', 'slotneg', 'service', 'value', 'intent', 'intentdesc']);
const TEMPLATE_KINDS: readonly TemplateKind[] = ['value', 'none', 'boolTrue', 'boolFalse', 'boolTrueIs', 'boolFalseIs'];
const DATASETS: readonly string[] = ['sgd', 'multiwoz', 'generic'];
const SLOT_DESCRIPTION_SOURCES: readonly string[] = ['slot', 'intent', 'none'];
const NEGATIVE_STRATEGIES: readonly string[] = ['tamper', 'other-intent', 'none'];

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Why a rule as written cannot be used, or undefined. The rules folder can be the user's
 * ($TODEVAL_RULES_DIR): a misspelt template kind ("boolTru") or strategy was silently ignored (fewer
 * candidates, or tamper negatives where none were meant), a template list written as a string
 * crashed with a TypeError and a stack, and a blank template became an empty NLI hypothesis.
 */
function ruleError(spec: unknown): string | undefined {
  if (!isPlainObject(spec)) return 'must be an object with "acts" and "templates"';
  const acts = spec.acts;
  if (!isStringList(acts) || acts.length === 0) return '"acts" must be a non-empty list of act names';
  const slots = spec.slots;
  if (slots !== undefined && !isStringList(slots)) return '"slots" must be a list of slot names';
  const source = spec.slotDescription;
  if (source !== undefined && !(typeof source === 'string' && SLOT_DESCRIPTION_SOURCES.includes(source))) {
    return `"slotDescription" must be one of ${SLOT_DESCRIPTION_SOURCES.map((s) => `"${s}"`).join(', ')}`;
  }
  if (spec.pseudoSlotDescription !== undefined && typeof spec.pseudoSlotDescription !== 'string') return '"pseudoSlotDescription" must be a string';
  const negatives = spec.negatives;
  const negativesOk =
    negatives === undefined ||
    (typeof negatives === 'string' && NEGATIVE_STRATEGIES.includes(negatives)) ||
    (isPlainObject(negatives) && typeof negatives.act === 'string');
  if (!negativesOk) return `"negatives" must be one of ${NEGATIVE_STRATEGIES.map((s) => `"${s}"`).join(', ')} or {"act": NAME}`;
  const templates = spec.templates;
  if (!isPlainObject(templates) || Object.keys(templates).length === 0) return '"templates" must be an object of template lists';
  for (const [kind, list] of Object.entries(templates)) {
    if (!(TEMPLATE_KINDS as readonly string[]).includes(kind)) return `unknown template kind "${kind}" (known: ${TEMPLATE_KINDS.join(', ')})`;
    if (!isStringList(list) || list.length === 0) return `templates.${kind} must be a non-empty list of strings`;
    // Without a placeholder, text with no letter or digit ("", " ", ".") is a hypothesis that says nothing.
    const empty = list.find((t) => !/\{[a-z]+\}/.test(t) && !/[\p{L}\p{N}]/u.test(t));
    if (empty !== undefined) return `templates.${kind} has a template with no words (${JSON.stringify(empty)}): it would be an empty hypothesis`;
  }
  return undefined;
}

/** Split "The {desc} is {value}." once, so expansion only concatenates. */
export function compileTemplate(t: string, file: string): CompiledTemplate {
  const parts: string[] = [];
  let last = 0;
  for (const m of t.matchAll(/\{([a-z]+)\}/g)) {
    if (!PLACEHOLDERS.has(m[1])) throw new InputError(`unknown placeholder {${m[1]}} in template "${t}"`, { file });
    parts.push(t.slice(last, m.index), m[1]);
    last = m.index! + m[0].length;
  }
  parts.push(t.slice(last));
  return parts;
}

function listJson(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listJson(dir, r));
    else if (e.name.endsWith('.json')) out.push(r);
  }
  return out.sort();
}

/**
 * Rules for a dataset: every rules file whose `datasets` names it, plus the MultiWOZ slot map
 * (it decides slot names and descriptions, so it is part of what makes references comparable).
 */
export function loadRules(dataset: 'sgd' | 'multiwoz' | 'generic', dir = rulesDir()): RuleSet {
  const hash = createHash('sha256');
  const files: string[] = [];
  const rules: CompiledRule[] = [];
  const slotWords: Record<string, string> = {};
  for (const rel of listJson(dir)) {
    const file = path.join(dir, rel);
    const text = readFileSync(file, 'utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new InputError(`rules file is not valid JSON (${(e as Error).message})`, { file });
    }
    if (rel === 'multiwoz/slot-map.json') {
      if (dataset !== 'sgd') {
        files.push(rel);
        hash.update(rel).update('\0').update(text).update('\0');
      }
      continue;
    }
    const rf = parsed as RuleFile;
    if (!isPlainObject(parsed) || !Array.isArray(rf.datasets) || !Array.isArray(rf.rules)) {
      throw new InputError('rules file needs "datasets" and "rules" arrays', { file });
    }
    // A misspelt dataset ("sgdd") would leave the file out of every run without a word.
    const unknownDataset = (rf.datasets as unknown[]).find((d) => typeof d !== 'string' || !DATASETS.includes(d));
    if (unknownDataset !== undefined) {
      throw new InputError(`unknown dataset ${JSON.stringify(unknownDataset)} in "datasets" (known: ${DATASETS.join(', ')})`, { file });
    }
    if (!rf.datasets.includes(dataset)) continue;
    if (rf.slotWords !== undefined && !(isPlainObject(rf.slotWords) && Object.values(rf.slotWords).every((w) => typeof w === 'string'))) {
      throw new InputError('"slotWords" must be an object of slot name -> words', { file });
    }
    rf.rules.forEach((spec: unknown, i) => {
      const problem = ruleError(spec);
      if (problem) throw new InputError(problem, { file, where: `rule #${i}` });
    });
    files.push(rel);
    hash.update(rel).update('\0').update(text).update('\0');
    Object.assign(slotWords, rf.slotWords ?? {});
    rf.rules.forEach((spec, i) => {
      const templates: CompiledRule['templates'] = {};
      for (const [kind, list] of Object.entries(spec.templates)) {
        templates[kind as TemplateKind] = (list ?? []).map((t) => compileTemplate(t, file));
      }
      rules.push({ id: `${rel}#${i}`, spec, templates });
    });
  }
  const byAct = new Map<string, CompiledRule[]>();
  for (const r of rules) {
    for (const act of r.spec.acts) {
      const list = byAct.get(act) ?? [];
      list.push(r);
      byAct.set(act, list);
    }
  }
  // Slot-specific rules win over act-wide ones; among equals, the later file overrides (dataset overrides).
  for (const list of byAct.values()) {
    list.reverse();
    list.sort((a, b) => Number(b.spec.slots !== undefined) - Number(a.spec.slots !== undefined));
  }
  return { dataset, hash: hash.digest('hex'), files, rules, slotWords, byAct };
}
