import { describe, expect, it } from 'vitest';
import type { NliRunner, NliRunnerStats } from '../../src/nli/runner.js';
import { emptyStats } from '../../src/nli/runner/stats.js';
import type { NliProbs } from '../../src/nli/types.js';
import { ReopeningRunner } from '../../src/serve/reopening-runner.js';

// serve's runner bookkeeping when its inference thread is lost and a replacement is opened: the
// counters /metrics reads carry on across runners. The runners are fakes (fixed counters, lost or
// not): what is tested is ReopeningRunner's arithmetic, not a model.

const PROBS: NliProbs = { entailment: 1, neutral: 0, contradiction: 0 };

/** A fake runner with fixed counters; `lost` set: every call fails with it, as a runner whose thread died. */
function fakeRunner(counters: Partial<NliRunnerStats>, lost?: Error): NliRunner {
  return {
    modelSignature: { modelId: 'fake', revision: 'none', dtype: 'fp32' },
    device: 'cpu',
    maxLength: 512,
    cacheKey: 'fake',
    ...(lost ? { lost } : {}),
    score: (pairs) => (lost ? Promise.reject(lost) : Promise.resolve(pairs.map(() => PROBS))),
    scoreOne: () => (lost ? Promise.reject(lost) : Promise.resolve(PROBS)),
    prefetch: () => undefined,
    stats: () => ({ ...emptyStats(), ...counters }),
    flushCache: () => 0,
    close: () => Promise.resolve(),
  };
}

describe('ReopeningRunner counters', () => {
  it('a replacement that fails to open leaves the lost runner counted once, however often it is retried (was: added again at each try)', async () => {
    const lost = fakeRunner({ requested: 10, issued: 8 }, new Error('inference thread exited'));
    const fresh = fakeRunner({ requested: 1, issued: 1 });
    let opens = 0;
    const notices: string[] = [];
    const runner = await ReopeningRunner.open(
      () => {
        opens++;
        if (opens === 1) return Promise.resolve(lost);
        // Three tries fail (the model cannot be opened again), the fourth opens one.
        if (opens <= 4) return Promise.reject(new Error('cannot open the model'));
        return Promise.resolve(fresh);
      },
      () => undefined,
      (line) => notices.push(line),
    );
    try {
      const pair = { premise: 'p', hypothesis: 'h' };
      for (let i = 0; i < 3; i++) {
        await expect(runner.score([pair])).rejects.toThrow('cannot open the model');
        // Before: 20, 30, 40 requested (16, 24, 32 issued) after the first, second, third try.
        expect(runner.stats()).toMatchObject({ requested: 10, issued: 8 });
      }
      expect(await runner.score([pair])).toEqual([PROBS]);
      expect(opens).toBe(5);
      expect(runner.stats()).toMatchObject({ requested: 11, issued: 9 });
      expect(notices).toHaveLength(4);
    } finally {
      await runner.close();
    }
  });
});
