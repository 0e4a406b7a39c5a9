/**
 * Writes a RobertaForSequenceClassification ONNX model with seeded random weights, plus the real
 * tokenizer and a config.json with the sizes used, into one directory that `--model DIR` accepts.
 *
 *   npm run model:random -- --size tiny|large --out DIR [--config FILE] [--tokenizer-dir DIR]
 *     [--layers N --hidden N --heads N --intermediate N] [--seed N] [--std X] [--fp16]
 */
import { Command, InvalidArgumentError } from 'commander';
import path from 'node:path';
import { buildRandomRoberta, DEFAULT_SEED, DEFAULT_STD, type ModelSize } from '../src/nli/onnx-builder/index.js';
import { isInputError } from '../src/util/errors.js';

function intArg(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return n;
  };
}

const program = new Command('build-random-roberta')
  .description('ONNX RobertaForSequenceClassification with seeded random weights (tests and benchmarks)')
  .requiredOption('--out <dir>', 'output model directory')
  .option('--size <size>', 'tiny (2 layers, hidden 64) or large (the config as is)', 'large')
  .option('--config <file>', 'base config.json (default: the tokenizer dir config, else roberta-large-mnli)')
  .option('--tokenizer-dir <dir>', 'directory with tokenizer.json (default: ../shared/models/roberta-large-mnli)')
  .option('--layers <n>', 'num_hidden_layers', intArg('--layers'))
  .option('--hidden <n>', 'hidden_size', intArg('--hidden'))
  .option('--heads <n>', 'num_attention_heads', intArg('--heads'))
  .option('--intermediate <n>', 'intermediate_size', intArg('--intermediate'))
  .option('--seed <n>', 'weight seed', intArg('--seed'), DEFAULT_SEED)
  .option('--std <x>', 'std of the normal weights', (v) => Number(v), DEFAULT_STD)
  .option('--fp16', 'store weights as float16 (cast to float32 in the graph)', false)
  .showHelpAfterError();

program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{
  out: string;
  size: string;
  config?: string;
  tokenizerDir?: string;
  layers?: number;
  hidden?: number;
  heads?: number;
  intermediate?: number;
  seed: number;
  std: number;
  fp16: boolean;
}>();

try {
  if (o.size !== 'tiny' && o.size !== 'large') throw new InvalidArgumentError(`--size must be tiny or large, got ${o.size}`);
  const started = performance.now();
  const m = buildRandomRoberta({
    outDir: path.resolve(o.out),
    size: o.size as ModelSize,
    configFile: o.config,
    tokenizerDir: o.tokenizerDir,
    seed: o.seed,
    std: o.std,
    dtype: o.fp16 ? 'fp16' : 'fp32',
    overrides: { numLayers: o.layers, hiddenSize: o.hidden, numHeads: o.heads, intermediateSize: o.intermediate },
  });
  const seconds = (performance.now() - started) / 1000;
  const s = m.sizes;
  console.log(
    `wrote ${path.join(o.out, m.onnxFile)}: ${(m.bytes / 2 ** 20).toFixed(1)} MiB, ${m.parameters.toLocaleString('en-US')} parameters ` +
      `(${s.numLayers} layers, hidden ${s.hiddenSize}, ${s.numHeads} heads, intermediate ${s.intermediateSize}, ${m.dtype}), ` +
      `seed ${m.seed}, sha256 ${m.sha256.slice(0, 16)}…, ${seconds.toFixed(1)} s`,
  );
} catch (e) {
  if (isInputError(e)) {
    console.error(e.oneLine());
    process.exit(2);
  }
  if (e instanceof InvalidArgumentError) {
    console.error(e.message);
    process.exit(2);
  }
  throw e;
}
