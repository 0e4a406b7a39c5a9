/**
 * Writes the null stand-in NLI model: an ONNX graph with the hub export's inputs and outputs whose
 * logits are a constant row (the model taken out, for timing the host side), plus the real
 * tokenizer and a config naming it, into one directory that `--model DIR` accepts. Its scores are
 * never SGSAcc.
 *
 *   npm run model:null -- --out DIR [--tokenizer-dir DIR] [--label neutral|entailment|contradiction]
 */
import { Command, InvalidArgumentError } from 'commander';
import path from 'node:path';
import { buildNullStandin, DEFAULT_NULL_LABEL } from '../src/nli/onnx-builder/index.js';
import type { NliLabel } from '../src/nli/types.js';
import { exitOnBadInput } from './lib/exit-on-bad-input.js';

const LABELS: NliLabel[] = ['entailment', 'neutral', 'contradiction'];
const program = new Command('build-null-standin')
  .description('ONNX null-standin NLI model: constant logits, not a language model (host-side benches)')
  .requiredOption('--out <dir>', 'output model directory')
  .option('--tokenizer-dir <dir>', 'directory with tokenizer.json (default: the shipped models/roberta-large-mnli)')
  .option('--label <label>', `the class every pair gets (${LABELS.join(', ')})`, DEFAULT_NULL_LABEL)
  .showHelpAfterError();

program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ out: string; tokenizerDir?: string; label: string }>();

try {
  if (!LABELS.includes(o.label as NliLabel)) throw new InvalidArgumentError(`--label must be one of ${LABELS.join(', ')}`);
  const m = buildNullStandin({ outDir: path.resolve(o.out), tokenizerDir: o.tokenizerDir, label: o.label as NliLabel });
  console.log(`wrote ${path.join(o.out, m.onnxFile)} (null-standin, NOT a language model): constant ${m.label} logits, ${m.bytes} bytes, sha256 ${m.sha256.slice(0, 16)}…`);
} catch (e) {
  exitOnBadInput(e);
}
