import { GOAL_DOMAINS } from './ground-truth.js';
import type { BeliefState } from './normalize-state.js';

/**
 * Active domain of each turn estimated from state changes, mwzeval's rule for predictions without
 * `active_domains`: placeholders without a domain name say nothing about the domain, but a system
 * usually talks about the domain whose state just changed. Ties go to the domain with most slots;
 * when nothing changed, the previous domain stays, unless the previous turn changed several
 * domains, in which case the other one of those takes over.
 */
export function estimateActiveDomains(states: BeliefState[]): string[][] {
  const out: string[][] = [];
  let current: string | undefined;
  let oldState: BeliefState = {};
  let oldChanged: string[] = [];

  for (const state of states) {
    const changed: string[] = [];
    for (const domain of Object.keys(state)) {
      const prev = oldState[domain] ?? {};
      if (Object.entries(state[domain] ?? {}).some(([k, v]) => !(k in prev) || prev[k] !== v)) changed.push(domain);
    }

    if (changed.length === 0) {
      if (current === undefined) {
        out.push([]);
        continue; // like the reference, the old state is kept as the comparison base
      }
      if (oldChanged.length > 1) {
        oldChanged = oldChanged.filter((d) => d in state && d !== current);
        if (oldChanged.length > 0) current = oldChanged[0];
      }
    } else if (current === undefined || !changed.includes(current)) {
      // first domain with the most filled slots, as Python's max() keeps the first maximum
      let best = changed[0];
      for (const d of changed) if (Object.keys(state[d]).length > Object.keys(state[best]).length) best = d;
      current = best;
    }
    oldState = state;
    oldChanged = changed;
    out.push([current]);
  }
  return out;
}

// Only goal domains count: the prefix of a placeholder like [value_count] names no domain.
const DOMAIN_NAMES = new Set(GOAL_DOMAINS);

/**
 * Domains named by a raw response's placeholders (`[restaurant_name]` -> restaurant), as mwzeval's
 * add_slot_domains.py extracts them for systems with domain-aware delexicalization.
 */
export function domainsFromSlotNames(response: string): string[] {
  const found = new Set<string>();
  for (const m of response.toLowerCase().matchAll(/\[([\p{L}\p{N}_\s]+)\]/gu)) found.add(m[1].split('_')[0]);
  return [...found].filter((d) => DOMAIN_NAMES.has(d));
}
