/**
 * Writes the lexical stand-in NLI model: an ONNX graph with the hub export's inputs and outputs that
 * decides by token overlap (not a language model), plus the real tokenizer and a config naming it,
 * into one directory that `--model DIR` accepts. Its scores are never SGSAcc.
 *
 *   npm run model:lexical -- --out DIR [--tokenizer-dir DIR] [--threshold X]
 */
import { Command, InvalidArgumentError } from 'commander';
import path from 'node:path';
import { buildLexicalStandin, DEFAULT_LEXICAL_DECISION } from '../src/nli/onnx-builder/index.js';
import { exitOnBadInput } from './lib/exit-on-bad-input.js';

const program = new Command('build-lexical-standin')
  .description('ONNX lexical-standin NLI model: token overlap, not a language model (demos and end-to-end tests)')
  .requiredOption('--out <dir>', 'output model directory')
  .option('--tokenizer-dir <dir>', 'directory with tokenizer.json (default: the shipped models/roberta-large-mnli)')
  .option(
    '--threshold <x>',
    'share of the hypothesis content words the premise must hold for entailment',
    (v) => Number(v),
    DEFAULT_LEXICAL_DECISION.threshold,
  )
  .showHelpAfterError();

program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ out: string; tokenizerDir?: string; threshold: number }>();

try {
  if (!(o.threshold > 0 && o.threshold <= 1)) throw new InvalidArgumentError('--threshold must be a number in (0, 1]');
  const started = performance.now();
  const m = buildLexicalStandin({ outDir: path.resolve(o.out), tokenizerDir: o.tokenizerDir, decision: { threshold: o.threshold } });
  console.log(
    `wrote ${path.join(o.out, m.onnxFile)} (lexical-standin, NOT a language model): ${(m.bytes / 2 ** 20).toFixed(1)} MiB, ` +
      `${m.words.toLocaleString('en-US')} content words over ${m.vocabSize.toLocaleString('en-US')} tokens, threshold ${m.decision.threshold}, ` +
      `sha256 ${m.sha256.slice(0, 16)}…, ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
} catch (e) {
  exitOnBadInput(e);
}
