import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../util/errors.js';
import { rulesDir } from '../util/rules-dir.js';
import type { CompiledRule, CompiledTemplate, RuleFile, RuleSet, TemplateKind } from './types.js';

const PLACEHOLDERS = new Set(['desc', 'descnp', 'descq', 'slot', 'slotneg', 'service', 'value', 'intent', 'intentdesc']);

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
    if (!Array.isArray(rf.datasets) || !Array.isArray(rf.rules)) {
      throw new InputError('rules file needs "datasets" and "rules" arrays', { file });
    }
    if (!rf.datasets.includes(dataset)) continue;
    files.push(rel);
    hash.update(rel).update('\0').update(text).update('\0');
    Object.assign(slotWords, rf.slotWords ?? {});
    rf.rules.forEach((spec, i) => {
      if (!Array.isArray(spec.acts) || !spec.templates) throw new InputError(`rule #${i} needs acts and templates`, { file });
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
