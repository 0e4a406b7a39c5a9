import { describe, expect, it } from 'vitest';
import { resolveSgsaccConfig, type SgsaccSettings } from '../../src/metrics/sgsacc/config.js';
import { runPairBound, runSgsacc, type ReferenceStore } from '../../src/metrics/sgsacc/run.js';
import type { SgsaccTurn, TurnReferences } from '../../src/metrics/sgsacc/types.js';
import { resolveRerankConfig, RANK_BY, type RerankSettings } from '../../src/rerank/config.js';
import { rerankPairBound, rerankWith, type RerankItem } from '../../src/rerank/rerank.js';
import { FakeWordOverlapNli } from '../sgsacc-fake-nli.js';
import { mulberry32 } from '../helpers/mulberry32.js';

// The service reserves, before it runs, the pairs the planners say a request may send (PairAdmission).
// Property: over random turns, items and option sets, no run sends the scorer more pairs than its
// planner allows. The scorer is a FAKE (word overlap), so entailment varies from pair to pair and
// every pass (context retries, controls, sentences) is reached.

const random = mulberry32;

const WORDS = ['alarm', 'time', 'city', 'seattle', 'restaurant', 'seven', 'morning', 'table', 'booking', 'price', 'cheap', 'music', 'ticket', 'date', 'friday', 'people'];
const ACTS = ['INFORM', 'REQUEST', 'CONFIRM', 'OFFER', 'GOODBYE', 'REQ_MORE'];

function generator(seed: number) {
  const r = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const n = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const phrase = (k: number) => Array.from({ length: k }, () => pick(WORDS)).join(' ');
  const sentences = (k: number) => Array.from({ length: k }, () => `The ${phrase(n(1, 3))} is ${phrase(n(1, 2))}.`).join(' ');
  const action = (i: number) => ({
    id: String(i),
    service: 'Alarm_1',
    act: pick(ACTS),
    slot: pick(WORDS),
    values: r() < 0.5 ? [pick(WORDS)] : [],
    candidates: Array.from({ length: n(0, 3) }, () => `The ${phrase(n(1, 3))}.`),
    negatives: Array.from({ length: n(0, 2) }, () => `The ${phrase(n(1, 3))}.`),
    slotDescription: r() < 0.7 ? phrase(n(1, 3)) : '',
  });
  const turn = (id: string): SgsaccTurn => ({
    id,
    services: ['Alarm_1'],
    utterance: r() < 0.15 ? '' : sentences(n(1, 3)),
    previousUserUtterance: r() < 0.2 ? '' : sentences(1),
    actions: Array.from({ length: n(0, 4) }, (_, i) => action(i)),
  });
  const settings = (): SgsaccSettings => ({
    validation: r() < 0.5,
    context: r() < 0.7,
    referenceSelection: pick(['entailed', 'paper'] as const),
    hallucination: r() < 0.5,
    granularity: pick(['turn', 'sentence'] as const),
    contextControl: pick([true, false, undefined]),
  });
  const rerankSettings = (): RerankSettings => ({ context: r() < 0.7, contextControl: pick([true, false, undefined]), hallucination: r() < 0.3, rankBy: pick(RANK_BY) });
  const item = (id: string): RerankItem => {
    const t = turn(id);
    return { id, actions: t.actions, context: t.previousUserUtterance, candidates: Array.from({ length: n(1, 4) }, (_, c) => ({ system: `s${c}`, text: sentences(n(1, 3)) })) };
  };
  return { turn, settings, rerankSettings, item, sentences, n };
}

/** A references store in memory, as the service's view of one is. */
function memoryStore(): ReferenceStore & { done: Map<string, TurnReferences> } {
  const done = new Map<string, TurnReferences>();
  return { done, append: (records) => records.forEach((rec) => done.set(rec.id, structuredClone(rec))) };
}

/** The word-overlap FAKE, counting the texts it is asked to encode ahead (NliScorer.prefetch). */
class PrefetchRecordingFakeNli extends FakeWordOverlapNli {
  prefetched = 0;
  prefetch(texts: Iterable<string>): void {
    for (const _ of texts) this.prefetched++;
  }
}

/** Seed `seed`'s generator, a random serve config, 1-5 random turns and an empty reference store. */
function randomSgsaccRun(seed: number) {
  const g = generator(seed);
  return { g, config: resolveSgsaccConfig(g.settings(), 'serve'), turns: Array.from({ length: g.n(1, 6) }, (_, i) => g.turn(`t${i}`)), store: memoryStore() };
}

describe('the pair planners bound what a run sends the scorer (random turns x option sets)', () => {
  it('runSgsacc: fresh references, then stored ones, a system and the ground truth', async () => {
    let checked = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const { g, config, turns, store } = randomSgsaccRun(seed);
      const utterances = new Map(turns.map((t) => [t.id, g.sentences(g.n(1, 4))]));
      for (const pass of ['fresh', 'stored'] as const) {
        for (const groundTruthSystem of [false, true]) {
          const scorer = new FakeWordOverlapNli();
          const run = { references: store, groundTruthSystem, chunkTurns: 3 };
          const scored = groundTruthSystem ? new Map(turns.map((t) => [t.id, t.utterance])) : utterances;
          const bound = runPairBound(turns, scored, { ...config, ...run });
          await runSgsacc(turns, scored, { ...config, scorer, ...run });
          expect(scorer.pairsScored, `seed ${seed}, ${pass} references, ground truth ${groundTruthSystem}`).toBeLessThanOrEqual(bound);
          checked += scorer.pairsScored > 0 ? 1 : 0;
        }
      }
    }
    // Not vacuous: most cases send pairs.
    expect(checked).toBeGreaterThan(100);
  });

  it('runSgsacc encodes ahead (prefetch) no text of a run that sends no pair: the ground truth again over stored references', async () => {
    let idle = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const { config, turns, store } = randomSgsaccRun(seed);
      const gold = new Map(turns.map((t) => [t.id, t.utterance]));
      for (const pass of ['fresh', 'stored'] as const) {
        const scorer = new PrefetchRecordingFakeNli();
        const run = { references: store, groundTruthSystem: true, chunkTurns: 3 };
        const bound = runPairBound(turns, gold, { ...config, ...run });
        await runSgsacc(turns, gold, { ...config, scorer, ...run });
        const where = `seed ${seed}, ${pass} references`;
        if (bound === 0) {
          expect([scorer.pairsScored, scorer.prefetched], where).toEqual([0, 0]);
          idle++;
        } else if (pass === 'fresh') expect(scorer.prefetched, where).toBeGreaterThan(0);
      }
    }
    // Not vacuous: stored references often leave the ground truth nothing to send.
    expect(idle).toBeGreaterThan(10);
  });

  it('rerank: every ranking, the sentence pairs of omission-sentences included (the hand-kept sums left them out)', async () => {
    let sentencesBeyondOldSum = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const g = generator(seed);
      const config = resolveRerankConfig(g.rerankSettings());
      const items = Array.from({ length: g.n(1, 4) }, (_, i) => g.item(`i${i}`));
      const scorer = new FakeWordOverlapNli();
      await rerankWith(items, scorer, config);
      expect(scorer.pairsScored, `seed ${seed}, ${JSON.stringify(config.signatureFields)}`).toBeLessThanOrEqual(rerankPairBound(items, config));
      // serve/service.ts at 046dc1c reserved this much for /v1/rerank.
      const old = items.reduce((n, it) => n + it.candidates.length * (it.actions.reduce((m, a) => m + a.candidates.length, 0) + (config.hallucination ? 1 : 0)), 0) * (config.context ? 3 : 1);
      if (config.bySentence && scorer.pairsScored > old) sentencesBeyondOldSum++;
    }
    expect(sentencesBeyondOldSum).toBeGreaterThan(0);
  });
});
