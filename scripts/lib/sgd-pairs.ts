import { loadDataset } from '../../src/adapters/load.js';
import { PairCache } from '../../src/nli/pair-cache.js';
import type { NliPair } from '../../src/nli/types.js';
import { buildValueIndex, expandTurn, loadRules } from '../../src/rules/index.js';

export interface SgdCandidatePairs {
  turns: number;
  requested: number;
  /** Distinct (system utterance, candidate reference) pairs in the order SGSAcc submits them. */
  distinct: NliPair[];
  expandSeconds: number;
}

/** Every (system utterance, candidate reference) pair SGSAcc asks for on the SGD test set. */
export function sgdCandidatePairs(dataDir: string): SgdCandidatePairs {
  const t0 = performance.now();
  const ds = loadDataset({ dataset: 'sgd', dataDir, split: 'test' });
  const rules = loadRules('sgd');
  const values = buildValueIndex(ds.turns);
  let requested = 0;
  const unique = new Map<string, NliPair>();
  for (const turn of ds.turns) {
    for (const ref of expandTurn(turn, ds.schema, rules, values)) {
      for (const h of ref.candidates) {
        requested++;
        const p = { premise: turn.utterance, hypothesis: h };
        unique.set(PairCache.key(p.premise, p.hypothesis), p);
      }
    }
  }
  return { turns: ds.turns.length, requested, distinct: [...unique.values()], expandSeconds: (performance.now() - t0) / 1000 };
}

/**
 * n pairs taken in blocks from four places spread over the set: the real mix of turn lengths and
 * the real clustering of lengths among a turn's candidates, the same pairs on every machine.
 */
export function spreadSample(all: NliPair[], n: number, blocks = 4, pass = 0): NliPair[] {
  const perBlock = Math.ceil(n / blocks);
  const sample: NliPair[] = [];
  for (let b = 0; b < blocks && sample.length < n; b++) {
    // Pass k: the k-th next run of pairs at each place, so repeated timings see fresh pairs.
    const from = Math.floor((b * all.length) / blocks) + pass * perBlock;
    sample.push(...all.slice(from, from + Math.min(perBlock, n - sample.length)));
  }
  return sample;
}
