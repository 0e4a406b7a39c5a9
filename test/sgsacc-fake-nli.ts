import type { NliModelSignature, NliPair, NliProbs, NliScorer } from '../src/nli/types.js';

/**
 * A FAKE NLI scorer for unit tests of the scoring logic: the premise "entails" the hypothesis when
 * every content word (4+ letters) of the hypothesis occurs in the premise; entailment probability
 * grows with the share of content words found. It records every call so tests can count pairs.
 */
export class FakeWordOverlapNli implements NliScorer {
  readonly modelSignature: NliModelSignature = { modelId: 'fake-word-overlap', revision: 'test', dtype: 'none' };
  readonly calls: NliPair[][] = [];
  /** Exact overrides: `premise\u0000hypothesis` -> probabilities. */
  readonly overrides = new Map<string, NliProbs>();

  get pairsScored(): number {
    return this.calls.reduce((n, c) => n + c.length, 0);
  }

  async score(pairs: NliPair[]): Promise<NliProbs[]> {
    this.calls.push(pairs);
    return pairs.map((p) => this.overrides.get(`${p.premise}\u0000${p.hypothesis}`) ?? overlapProbs(p));
  }
}

function words(s: string): string[] {
  return (s.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => w.length >= 4);
}

function overlapProbs({ premise, hypothesis }: NliPair): NliProbs {
  const have = new Set(words(premise));
  const need = words(hypothesis);
  const share = need.length === 0 ? 1 : need.filter((w) => have.has(w)).length / need.length;
  if (share === 1) return { entailment: 0.9, neutral: 0.05, contradiction: 0.05 };
  // Partial overlap: entailment grows with overlap but never wins the argmax.
  const entailment = 0.4 * share;
  return { entailment, neutral: 1 - entailment - 0.05, contradiction: 0.05 };
}
