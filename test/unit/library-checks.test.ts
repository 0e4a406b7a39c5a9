import { describe, expect, it } from 'vitest';
import type { SgsaccData } from '../../src/metrics/sgsacc/index.js';
import { runEvaluatePipeline } from '../../src/pipeline/evaluate.js';
import { runScorePipeline } from '../../src/pipeline/score.js';
import { serveFaithfulness } from '../../src/serve/embed.js';
import type { ServeLimits } from '../../src/serve/limits.js';
import { InputError } from '../../src/util/errors.js';

// The pipelines hold the checks the commands made: a library call is refused where the CLI is, with
// the same line, before anything is read or a model loads (no data dir or model is given here).
describe('a library call is refused where the CLI is', () => {
  const shard = { index: 1, count: 2 };

  it('runScorePipeline: a shard with confidence intervals (an interval of part of the turns is not the run\'s)', async () => {
    const call = runScorePipeline({ dataset: 'sgd', shard, confidence: {}, chunkTurns: 8, nli: { model: 'none' } });
    await expect(call).rejects.toThrow(InputError);
    await expect(call).rejects.toThrow('--confidence needs the whole run in one process: drop --shard');
  });

  it('runEvaluatePipeline: a shard of --sgsacc with confidence intervals or items', async () => {
    for (const [extra, flag] of [[{ confidence: {} }, '--confidence'], [{ itemsFile: 'items.json' }, '--items']] as const) {
      const call = runEvaluatePipeline({ input: 'no-such-input.json', sgsacc: { nli: { model: 'none' }, shard }, ...extra });
      await expect(call).rejects.toThrow(`${flag} needs the whole run in one process: drop --shard`);
    }
  });

  it('serveFaithfulness: a limit the flag refuses (was: a timeoutMs past the longest timer answered every request 503, a NaN maxPendingPairs bounded nothing)', async () => {
    const cases: [Partial<ServeLimits>, string][] = [
      [{ timeoutMs: 2 ** 31 }, 'limits.timeoutMs (--timeout-ms) must be at most 2147483647'],
      [{ maxPendingPairs: Number.NaN }, 'limits.maxPendingPairs (--max-pending-pairs) must be a positive integer, not NaN'],
      [{ maxItems: 0 }, 'limits.maxItems (--max-items) must be a positive integer, not 0'],
      [{ maxBodyBytes: 1.5 }, 'limits.maxBodyBytes (--max-body-bytes) must be a positive integer, not 1.5'],
    ];
    for (const [limits, line] of cases) {
      // Refused before the model loads (there is none at this path) or the data is read (there is none).
      const call = serveFaithfulness({ nli: { model: '/nonexistent' }, data: {} as SgsaccData, dataset: 'sgd', port: 0, limits });
      await expect(call).rejects.toThrow(InputError);
      await expect(call).rejects.toThrow(line);
    }
  });
});
