import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CallOrder } from '../src/metrics/sgsacc/call-order.js';
import { loadSgsaccData, runSgsacc } from '../src/metrics/sgsacc/index.js';
import type { NliPair, NliProbs, ScoreOptions } from '../src/nli/types.js';
import { FakeWordOverlapNli } from './sgsacc-fake-nli.js';
import { DATA_DIR, hasData } from './helpers/shared.js';

/** The FAKE word-overlap scorer, answering each call after a delay drawn from a seeded generator. */
class SlowFakeNli extends FakeWordOverlapNli {
  readonly options: (ScoreOptions | undefined)[] = [];
  private seed: number;
  constructor(seed: number) {
    super();
    this.seed = seed;
  }
  override async score(pairs: NliPair[], options?: ScoreOptions): Promise<NliProbs[]> {
    this.options.push(options);
    const out = await super.score(pairs);
    this.seed = (this.seed * 1103515245 + 12345) % 2147483648;
    await new Promise((r) => setTimeout(r, this.seed % 7));
    return out;
  }
}

describe('CallOrder', () => {
  it("holds a later lane's calls until every earlier lane is closed, then sends them in order, each separate", async () => {
    const fake = new SlowFakeNli(1);
    const order = new CallOrder(fake);
    const [a, b, c] = [order.lane(), order.lane(), order.lane()];
    const pair = (p: string) => [{ premise: p, hypothesis: 'the hypothesis' }];
    const c1 = c.score(pair('c1'));
    const b1 = b.score(pair('b1'));
    const a1 = await a.score(pair('a1'));
    expect(fake.calls.map((x) => x[0].premise)).toEqual(['a1']);
    const a2 = a.score(pair('a2'));
    a.close();
    // b is the head now: its held call goes after a's last one; c still waits.
    expect(fake.calls.map((x) => x[0].premise)).toEqual(['a1', 'a2', 'b1']);
    await Promise.all([a2, b1]);
    b.close();
    expect(fake.calls.map((x) => x[0].premise)).toEqual(['a1', 'a2', 'b1', 'c1']);
    await c1;
    expect(a1).toHaveLength(1);
    expect(fake.options.every((o) => o?.separate === true)).toBe(true);
  });

  it('fails the held calls of every lane when the run is given up', async () => {
    const order = new CallOrder(new SlowFakeNli(2));
    order.lane();
    const held = order.lane().score([{ premise: 'p', hypothesis: 'h' }]);
    order.abort(new Error('chunk failed'));
    await expect(held).rejects.toThrow('chunk failed');
  });
});

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))('runSgsacc scores two chunks at a time', () => {
  it('makes the calls, in the order and with the pairs, of one chunk at a time, whatever the model takes per call', async () => {
    const file = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
    const data = loadSgsaccData({ dataset: 'sgd', dataDir: DATA_DIR, input: file });
    const turns = data.expand(data.loaded.turns.slice(0, 90));
    const gold = new Map(turns.map((t) => [t.id, t.utterance]));
    const system = new Map(turns.map((t, i) => [t.id, i % 3 === 0 ? `${t.utterance} Anything else?` : t.utterance]));
    const options = { validation: true, context: true, hallucination: true, chunkTurns: 16 };

    // One chunk at a time: a run per chunk, each waiting for the last (the order before pipelining).
    const oneByOne = async (utterances: Map<string, string>, groundTruthSystem: boolean) => {
      const fake = new SlowFakeNli(3);
      const scores = [];
      for (let i = 0; i < turns.length; i += options.chunkTurns) {
        const slice = turns.slice(i, i + options.chunkTurns);
        scores.push(...(await runSgsacc(slice, utterances, { ...options, scorer: fake, groundTruthSystem })).scores);
      }
      return { calls: fake.calls, scores };
    };
    for (const [utterances, groundTruthSystem] of [[gold, true], [system, false]] as const) {
      const expected = await oneByOne(utterances, groundTruthSystem);
      expect(expected.calls.length).toBeGreaterThan(2 * (turns.length / options.chunkTurns));
      for (const seed of [5, 6]) {
        const fake = new SlowFakeNli(seed);
        const run = await runSgsacc(turns, utterances, { ...options, scorer: fake, groundTruthSystem });
        expect(fake.calls).toEqual(expected.calls);
        expect(run.scores).toEqual(expected.scores);
      }
    }
  });
});
