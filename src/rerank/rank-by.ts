// A module of its own, without config.ts's imports: every command's flag parsing (cli/options.ts,
// --rank-by) needs these names, and config.ts would bring the SGSAcc context-control and
// hallucination modules into every start (bleu, refs, ser, ...) that never reranks.

/**
 * - 'fidelity' (paper Sec. 3): most actions realised, then likelihood, then system order;
 * - 'omission-hallucination': no omission (every action realised), then no hallucination, then
 *   likelihood, then system order. Needs the hallucination check, so it turns it on.
 * - 'omission-sentences': no omission, then the fewest sentences no fact supports (sentence
 *   granularity, docs/sgsacc.md), then likelihood, then system order: a long candidate with one
 *   invented sentence loses to one without, and a courtesy sentence costs nothing. Turns on the
 *   hallucination check and the sentence check.
 */
export const RANK_BY = ['fidelity', 'omission-hallucination', 'omission-sentences'] as const;
export type RankBy = (typeof RANK_BY)[number];
