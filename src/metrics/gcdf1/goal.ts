/** Reading constraints and requests out of a ConvLab-style MultiWOZ goal. */
import { DOMAIN_CONSTRAINT_GOAL_KEYS, DOMAIN_REQUEST_GOAL_KEY, SLOT_VALUE_SEP } from './acts.js';
import type { DomainGoal, Goal } from './types.js';

/** `slot===value` constraints of each goal domain from book/fail_book/info/fail_info, duplicates kept. */
export function goalConstraints(goal: Goal, lowercase = true): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [domain, domainGoal] of Object.entries(goal)) {
    for (const key of DOMAIN_CONSTRAINT_GOAL_KEYS) {
      for (let [slot, value] of Object.entries(domainGoal[key] ?? {})) {
        value = String(value);
        if (lowercase) [slot, value] = [slot.toLowerCase(), value.toLowerCase()];
        if (!out.has(domain)) out.set(domain, []);
        out.get(domain)!.push(`${slot}${SLOT_VALUE_SEP}${value}`);
      }
    }
  }
  return out;
}

/** Requested slots of a goal domain (ConvLab stores them as a map slot -> "?", MultiWOZ as a list). */
export function goalRequests(goal: Goal, domain: string, lowercase = true): string[] {
  const reqt = goal[domain]?.[DOMAIN_REQUEST_GOAL_KEY];
  const slots = reqt === undefined ? [] : Array.isArray(reqt) ? reqt : Object.keys(reqt);
  return [...new Set(lowercase ? slots.map((s) => s.toLowerCase()) : slots)];
}

export function isTransactionalGoal(domainGoal: DomainGoal | undefined): boolean {
  const book = domainGoal?.book;
  return book !== undefined && book !== null && Object.keys(book).length > 0;
}

/** Deep copy: the evaluation drops requests of failed domains from the goal it scores with. */
export function cloneGoal(goal: Goal): Goal {
  return JSON.parse(JSON.stringify(goal)) as Goal;
}
