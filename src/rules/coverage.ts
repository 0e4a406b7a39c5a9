import type { ActionReferences } from './types.js';

/** Per-act coverage of the rules: what `refs --summary` prints and what the rules are checked against. */
export interface ActCoverage {
  actions: number;
  withTwoCandidates: number;
  withoutRule: number;
  withNegatives: number;
}

/** Counts one action's references into its act's coverage. */
export function countCoverage(coverage: Map<string, ActCoverage>, r: ActionReferences): void {
  let c = coverage.get(r.act);
  if (!c) coverage.set(r.act, (c = { actions: 0, withTwoCandidates: 0, withoutRule: 0, withNegatives: 0 }));
  c.actions++;
  if (r.candidates.length >= 2) c.withTwoCandidates++;
  if (r.rule === undefined) c.withoutRule++;
  if (r.negatives.length > 0) c.withNegatives++;
}
