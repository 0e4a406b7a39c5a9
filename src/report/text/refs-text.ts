import type { ActCoverage } from '../../rules/coverage.js';
import { formatSignature, type Signature } from '../../util/signature.js';

/** What the summary shows: a refs run's coverage, what it read, the rules and the signature (runRefsPipeline's result). */
export interface RefsSummary {
  coverage: Map<string, ActCoverage>;
  source: string;
  turns: number;
  invalid: number;
  rules: { hash: string; files: string[] };
  signature: Signature;
}

/** `todeval refs --summary`: the per-act coverage table, its totals, the rules and the signature. */
export function formatRefsSummary({ coverage, source, turns, invalid, rules, signature }: RefsSummary): string {
  const acts = [...coverage.keys()].sort();
  const total: ActCoverage = { actions: 0, withTwoCandidates: 0, withoutRule: 0, withNegatives: 0 };
  const rows = acts.map((act) => {
    const c = coverage.get(act)!;
    total.actions += c.actions;
    total.withTwoCandidates += c.withTwoCandidates;
    total.withoutRule += c.withoutRule;
    total.withNegatives += c.withNegatives;
    return [act, c];
  }) as [string, ActCoverage][];
  rows.push(['total', total]);
  const w = Math.max(12, ...acts.map((a) => a.length)) + 2;
  const num = (n: number, width: number): string => String(n).padStart(width);
  const lines = [
    `references for ${source}: ${turns} system turns, ${total.actions} actions`,
    `${'act'.padEnd(w)}${'actions'.padStart(9)}${'>=2 cand'.padStart(10)}${'no rule'.padStart(9)}${'negatives'.padStart(11)}`,
    ...rows.map(
      ([act, c]) =>
        `${act.padEnd(w)}${num(c.actions, 9)}${num(c.withTwoCandidates, 10)}${num(c.withoutRule, 9)}${num(c.withNegatives, 11)}`,
    ),
    `actions with < 2 candidates: ${total.actions - total.withTwoCandidates}`,
    `actions without a rule: ${total.withoutRule}`,
    `invalid items skipped: ${invalid}`,
    `rules hash: ${rules.hash} (${rules.files.join(', ')})`,
    `signature: ${formatSignature(signature)}`,
  ];
  return `${lines.join('\n')}\n`;
}
