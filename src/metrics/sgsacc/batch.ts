import { PairMap } from '../../nli/pair-map.js';
import type { NliPair, NliProbs, NliScorer } from '../../nli/types.js';
import { stageClock } from '../../util/stage-clock.js';

/**
 * Collects the pairs of many turns and scores them in one `score` call, so the runner sees large
 * batches and identical pairs (same utterance and reference across actions) are sent once.
 */
export class PairBatch {
  private readonly handles = new PairMap<number>();
  private readonly pairs: NliPair[] = [];
  private results: NliProbs[] | undefined;

  constructor() {
    // Building a pass's pairs (and deciding which are needed) starts with its batch.
    stageClock.enter('pairs');
  }

  /** Register a pair; returns a handle to read its probabilities after `run`. */
  add(premise: string, hypothesis: string): number {
    let idx = this.handles.get(premise, hypothesis);
    if (idx === undefined) {
      idx = this.pairs.length;
      this.handles.set(premise, hypothesis, idx);
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
    const scored = scorer.score(this.pairs);
    stageClock.enter('wait');
    const out = await scored;
    stageClock.enter('decisions');
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
