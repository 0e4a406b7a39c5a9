import { availableParallelism } from 'node:os';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseDtype, type NliDtype } from '../nli/dtype.js';
import type { NliRunnerOptions } from '../nli/runner.js';
import type { NliDevice } from '../nli/session.js';
import { positiveInt } from './options.js';

/** Flags every NLI-backed command shares (`nli`, `score`, `rerank`), parsed by nliOptionsFrom. */
export interface NliCliFlags {
  model?: string;
  device?: NliDevice;
  dtype?: string;
  threads?: number;
  batchTokens?: number;
  batchSize?: number;
  cache?: string;
  tokenizerThreads?: number;
  verbose?: boolean;
}

/**
 * --threads: a count no larger than the machine's cores. More intra-op threads than cores never
 * helps, and a slip like 100000 made onnxruntime spend minutes creating threads before any output.
 */
export function threadCount(v: string): number {
  const n = positiveInt('--threads')(v);
  const cores = availableParallelism();
  if (n > cores) throw new InvalidArgumentError(`--threads must be at most ${cores}, the CPU cores of this machine`);
  return n;
}

/** --tokenizer-threads: 0 up to the machine's cores (each thread holds its own tokenizer, ~100 MB). */
export function tokenizerThreadCount(v: string): number {
  const n = positiveInt('--tokenizer-threads', true)(v);
  const cores = availableParallelism();
  if (n > cores) throw new InvalidArgumentError(`--tokenizer-threads must be at most ${cores}, the CPU cores of this machine`);
  return n;
}

/** --dtype values: int8 is accepted for q8 (the README's word for the quantized weights); q8-tensor is the hub's per-tensor int8 file. */
export const DTYPE_CHOICES = ['fp32', 'fp16', 'q8', 'int8', 'q8-tensor'];

export function addNliOptions(cmd: Command): Command {
  return cmd
    .option('--model <id|dir>', 'NLI model: hub id or local directory with model.onnx (default $TODEVAL_MODEL, else Xenova/roberta-large-mnli)')
    .addOption(new Option('--device <device>', 'where the model runs (auto: CUDA when its provider loads, else CPU)').choices(['auto', 'cpu', 'cuda']).default('auto'))
    .addOption(new Option('--dtype <dtype>', 'model weights to use (q8 = int8: per-row int8, see `todeval models quantize`; q8-tensor: the hub\'s per-tensor int8 file)').choices(DTYPE_CHOICES))
    .option('--threads <n>', `intra-op CPU threads, at most the CPU cores (${availableParallelism()} here; default: all)`, threadCount)
    .option('--batch-tokens <n>', 'padded tokens per forward pass', positiveInt('--batch-tokens'))
    .option('--batch-size <n>', 'pairs per forward pass at most', positiveInt('--batch-size'))
    .option('--cache <file>', 'persist NLI results to this JSON-lines file and reuse them')
    .option('--tokenizer-threads <n>', 'worker threads that tokenize ahead of the model (0: on the main thread; the default but for serve, whose default is 1)', tokenizerThreadCount)
    .option('--verbose', "show ONNX Runtime's own log (quiet by default: a model failure is one line)");
}

/** Runner options from the shared flags; progress is for the caller to add. */
export function nliOptionsFrom(flags: NliCliFlags): NliRunnerOptions {
  const dtype: NliDtype | undefined = parseDtype(flags.dtype);
  return {
    model: flags.model,
    device: flags.device ?? 'auto',
    dtype,
    threads: flags.threads,
    maxBatchTokens: flags.batchTokens,
    maxBatchSize: flags.batchSize,
    cacheFile: flags.cache,
    tokenizerThreads: flags.tokenizerThreads,
    ...(flags.verbose ? { verbose: true } : {}),
  };
}
