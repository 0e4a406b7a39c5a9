/**
 * Writes a RobertaForSequenceClassification ONNX model with seeded random weights, plus the real
 * tokenizer and a config.json with the sizes used, into one directory that `--model DIR` accepts.
 *
 *   npm run model:random -- --size tiny|large --out DIR [--config FILE] [--tokenizer-dir DIR]
 *     [--layers N --hidden N --heads N --intermediate N] [--seed N] [--std X] [--dtype fp32|fp16|q8|q8-tensor]
 *
 * --dtype fp16 writes onnx/model_fp16.onnx that computes in float16 (float16 weights and
 * activations, float32 logits out), as the hub's model_fp16.onnx does; see roberta-graph.ts.
 * --dtype q8 (or int8) writes onnx/model_q8_row.onnx: the fp32 graph rewritten by the quantizer of
 * `todeval models quantize` (7-bit weights per output column, activations quantized per row);
 * --dtype q8-tensor writes onnx/model_quantized.onnx, the per-tensor scheme of onnxruntime's
 * quantize_dynamic (the hub's file). See quantize.ts.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import path from 'node:path';
import { buildRandomRoberta, DEFAULT_SEED, DEFAULT_STD, type ModelSize } from '../src/nli/onnx-builder/index.js';
import { exitOnBadInput } from './lib/exit-on-bad-input.js';

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
  .option('--tokenizer-dir <dir>', 'directory with tokenizer.json (default: the shipped models/roberta-large-mnli)')
  .option('--layers <n>', 'num_hidden_layers', intArg('--layers'))
  .option('--hidden <n>', 'hidden_size', intArg('--hidden'))
  .option('--heads <n>', 'num_attention_heads', intArg('--heads'))
  .option('--intermediate <n>', 'intermediate_size', intArg('--intermediate'))
  .option('--seed <n>', 'weight seed', intArg('--seed'), DEFAULT_SEED)
  .option('--std <x>', 'std of the normal weights', (v) => Number(v), DEFAULT_STD)
  .option(
    '--dtype <dtype>',
    'fp32; fp16: float16 weights and compute with float32 logits (onnx/model_fp16.onnx); q8 (or int8): int8 per row, 7-bit weights (onnx/model_q8_row.onnx); q8-tensor: per-tensor int8 as quantize_dynamic writes it (onnx/model_quantized.onnx)',
    'fp32',
  )
  .addOption(new Option('--fp16', 'same as --dtype fp16').hideHelp())
  .option('--check', 'then load the model with onnxruntime-node and time forwards of batch 1 x 40 tokens', false)
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
  dtype: string;
  fp16?: boolean;
  check: boolean;
}>();

/** Loads the model as the runner will (onnxruntime-node, CPU) and times single forwards. */
async function checkModel(onnxPath: string, vocabSize: number): Promise<void> {
  const ort = await import('onnxruntime-node');
  let t = performance.now();
  const session = await ort.InferenceSession.create(onnxPath);
  const loadMs = performance.now() - t;
  const seqLen = 40;
  // <s> ... </s> with arbitrary ordinary token ids (>= 3 skips the special ones).
  const ids = Array.from({ length: seqLen }, (_, i) => (i === 0 ? 0 : i === seqLen - 1 ? 2 : 3 + ((i * 7919) % (vocabSize - 3))));
  const feeds = {
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, seqLen]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(seqLen).fill(1n), [1, seqLen]),
  };
  const times: number[] = [];
  let logits: number[] = [];
  for (let i = 0; i < 6; i++) {
    t = performance.now();
    const out = await session.run(feeds);
    times.push(performance.now() - t);
    logits = Array.from(out.logits.data as Float32Array);
  }
  const steady = times.slice(1).sort((a, b) => a - b);
  console.log(
    `check: loaded in ${(loadMs / 1000).toFixed(1)} s; forward 1 x ${seqLen} tokens: first ${times[0].toFixed(0)} ms, ` +
      `median of next 5 ${steady[2].toFixed(0)} ms (min ${steady[0].toFixed(0)}); logits [${logits.map((v) => v.toFixed(4)).join(', ')}]`,
  );
  await session.release();
}

try {
  if (o.size !== 'tiny' && o.size !== 'large') throw new InvalidArgumentError(`--size must be tiny or large, got ${o.size}`);
  const dtype = o.fp16 ? 'fp16' : o.dtype === 'int8' ? 'q8' : o.dtype;
  if (dtype !== 'fp32' && dtype !== 'fp16' && dtype !== 'q8' && dtype !== 'q8-tensor') throw new InvalidArgumentError(`--dtype must be fp32, fp16, q8 (int8) or q8-tensor, got ${o.dtype}`);
  const started = performance.now();
  const m = buildRandomRoberta({
    outDir: path.resolve(o.out),
    size: o.size as ModelSize,
    configFile: o.config,
    tokenizerDir: o.tokenizerDir,
    seed: o.seed,
    std: o.std,
    dtype,
    overrides: { numLayers: o.layers, hiddenSize: o.hidden, numHeads: o.heads, intermediateSize: o.intermediate },
  });
  const seconds = (performance.now() - started) / 1000;
  const s = m.sizes;
  console.log(
    `wrote ${path.join(o.out, m.onnxFile)}: ${(m.bytes / 2 ** 20).toFixed(1)} MiB, ${m.parameters.toLocaleString('en-US')} parameters ` +
      `(${s.numLayers} layers, hidden ${s.hiddenSize}, ${s.numHeads} heads, intermediate ${s.intermediateSize}, ${m.dtype}), ` +
      `seed ${m.seed}, sha256 ${m.sha256.slice(0, 16)}…, ${seconds.toFixed(1)} s`,
  );
  if (o.check) await checkModel(path.join(path.resolve(o.out), m.onnxFile), m.sizes.vocabSize);
} catch (e) {
  exitOnBadInput(e);
}
