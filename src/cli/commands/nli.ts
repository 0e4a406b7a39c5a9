import type { Command } from 'commander';
import { createNliRunner } from '../../nli/runner.js';
import { argmaxLabel } from '../../nli/types.js';
import { nliSignature } from '../../nli/signature.js';
import { formatSignature } from '../../util/signature.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { refuseOutputOverInput } from '../output-guard.js';

/** `todeval nli PREMISE HYPOTHESIS`: one pair's probabilities, for a rules author debugging a reference. */
export function register(program: Command): void {
  const cmd = program
    .command('nli')
    .description('score one (premise, hypothesis) pair with the NLI model and print its probabilities and label')
    .argument('<premise>', 'premise, e.g. the system utterance')
    .argument('<hypothesis>', 'hypothesis, e.g. a candidate reference')
    .option('--json', 'print JSON {entailment, neutral, contradiction, label, signature}');
  addNliOptions(cmd).action(async (premise: string, hypothesis: string, flags: NliCliFlags & { json?: boolean }) => {
    refuseOutputOverInput({ '--cache': flags.cache }, {});
    const runner = await createNliRunner(nliOptionsFrom(flags));
    try {
      const probs = await runner.scoreOne({ premise, hypothesis });
      const label = argmaxLabel(probs);
      // The signature serve's /v1/nli gives the same model's probabilities.
      const signature = nliSignature(runner);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ ...probs, label, truncated: runner.stats().truncated > 0, signature })}\n`);
      } else {
        for (const k of ['entailment', 'neutral', 'contradiction'] as const) process.stdout.write(`${k.padEnd(13)} ${probs[k].toFixed(4)}\n`);
        process.stdout.write(`label         ${label}${runner.stats().truncated > 0 ? ' (premise truncated to fit the model)' : ''}\n`);
        process.stdout.write(`signature     ${formatSignature(signature)}\n`);
      }
    } finally {
      await runner.close();
    }
  });
}
