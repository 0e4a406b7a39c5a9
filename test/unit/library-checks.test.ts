import { describe, expect, it } from 'vitest';
import { runEvaluatePipeline } from '../../src/pipeline/evaluate.js';
import { runScorePipeline } from '../../src/pipeline/score.js';
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
});
