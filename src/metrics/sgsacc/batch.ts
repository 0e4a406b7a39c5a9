import { PairCache } from '../../nli/pair-cache.js';
import type { NliPair, NliProbs, NliScorer } from '../../nli/types.js';

/**
 * Collects the pairs of many turns and scores them in one `score` call, so the runner sees large
 * batches and identical pairs (same utterance and reference across actions) are sent once.
 */
export class PairBatch {
  private readonly keys = new Map<string, number>();
  private readonly pairs: NliPair[] = [];
  private results: NliProbs[] | undefined;

  /** Register a pair; returns a handle to read its probabilities after `run`. */
  add(premise: string, hypothesis: string): number {
    const key = PairCache.key(premise, hypothesis);
    let idx = this.keys.get(key);
    if (idx === undefined) {
      idx = this.pairs.length;
      this.keys.set(key, idx);
      this.pairs.push({ premise, hypothesis });
    }
    return idx;
  }

  get size(): number {
    return this.pairs.length;
  }

  async run(scorer: NliScorer): Promise<void> {
    if (this.pairs.length === 0) {
      this.results = [];
      return;
    }
    const out = await scorer.score(this.pairs);
    if (out.length !== this.pairs.length) {
      throw new Error(`NLI scorer returned ${out.length} results for ${this.pairs.length} pairs`);
    }
    this.results = out;
  }

  get(handle: number): NliProbs {
    if (!this.results) throw new Error('PairBatch.get before run');
    return this.results[handle];
  }
}
