import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type * as Ort from 'onnxruntime-node';
import { InputError, MissingResourceError } from '../util/errors.js';
import { OFFICIAL_CUDA_INSTALL } from './cuda/provider.js';
import { padRows, type PaddedBatch } from './feeds.js';
import { fromHalfBits } from './onnx-builder/float16.js';
import { ort } from './ort.js';

const REGISTRY_CUDA_INSTALL_SHORT = 'npm run cuda:setup';

export type NliDevice = 'auto' | 'cpu' | 'cuda';

export interface SessionOptions {
  device?: NliDevice;
  /** intra-op threads; default: ORT's own choice (all physical cores). */
  threads?: number;
  /** Where to print the one-line CPU fallback notice in auto mode (default stderr). */
  notice?: (line: string) => void;
  /** Let ONNX Runtime print its own log (warnings and errors, coloured); default quiet: todeval reports failures itself. */
  verbose?: boolean;
  /** CPU: intra-op threads spin while waiting for work; default spinWhileWaiting(). */
  spin?: boolean;
}

/**
 * Whether ONNX Runtime's intra-op threads should spin while they wait for work (its default) or
 * sleep, decided once when a session opens. Spinning wins on a quiet machine (fp32 +18%, q8 +9%,
 * `bench:cpu-levers`, 2 EPYC cores, docs/nli.md) and loses on an oversubscribed one, where a spinning
 * thread holds a core that the thread with the next piece of work is waiting for (an fp32 session
 * ran 1.16x faster sleeping, every pass of three, at load 20-24 on 2 cores; PyTorch's OpenMP waits
 * passively there too). The line is twice the cores, which this process alone cannot reach: its
 * own threads count at most the cores and a tokenizer thread or two. Only waiting changes, never the
 * arithmetic: the logits are the same bit for bit either way.
 */
export function spinWhileWaiting(load = os.loadavg()[0], cores = os.availableParallelism()): boolean {
  return load < 2 * cores;
}

/** Runs a padded batch and returns its logits row-major, [batch, numLabels]. */
export interface LogitsSession {
  readonly device: 'cpu' | 'cuda';
  readonly numLabels: number;
  /** The batch's buffers may be reused once the returned promise settles. */
  run(batch: PaddedBatch): Promise<Float32Array>;
  /** Runs that may be sent before the first returns (done in order); default 1. */
  readonly inFlight?: number;
  /** Prefers batches packed into SharedArrayBuffers (read in place by another thread). */
  readonly sharedBatches?: boolean;
  /** Set once the session can run nothing more (its thread is gone); every later run fails with it. */
  readonly lost?: Error;
  /** Frees the session; settles even when its thread is already gone. */
  release(): Promise<void>;
}

function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0].slice(0, 300);
}

function baseOptions(threads?: number, verbose = false, spin = spinWhileWaiting()): Ort.InferenceSession.SessionOptions {
  return {
    graphOptimizationLevel: 'all',
    // Dynamic shapes change every batch; ORT's memory pattern planning only helps fixed shapes.
    enableMemPattern: false,
    executionMode: 'sequential',
    ...(threads ? { intraOpNumThreads: threads, interOpNumThreads: 1 } : {}),
    // 4 = fatal only: a failed run is reported as one line naming the model and the batch
    // (ModelRunError); at 3 ORT also printed each failure as several coloured lines of its own.
    logSeverityLevel: verbose ? 2 : 4,
    ...(spin ? {} : { extra: { session: { intra_op: { allow_spinning: '0' } } } }),
  };
}

/**
 * Whether onnxruntime-node was installed with the CUDA provider libraries (they sit next to its
 * native binding); undefined when the layout is not the one we know, so we just try.
 */
export function cudaProviderInstalled(): boolean | undefined {
  try {
    const main = createRequire(import.meta.url).resolve('onnxruntime-node');
    const dir = path.join(path.dirname(main), '..', 'bin', 'napi-v6', process.platform, process.arch);
    if (!existsSync(dir)) return undefined;
    return existsSync(path.join(dir, 'libonnxruntime_providers_cuda.so')) || existsSync(path.join(dir, 'onnxruntime_providers_cuda.dll'));
  } catch {
    return undefined;
  }
}

/**
 * Open the ONNX model. `cuda` must load the CUDA execution provider or fail with one line; `auto`
 * tries it and falls back to CPU with a notice. Untested on a real GPU in this project so far:
 * the CUDA provider libraries are an install-time option of onnxruntime-node (see docs/nli.md).
 */
export async function openSession(onnxPath: string, opts: SessionOptions = {}): Promise<LogitsSession> {
  const device = opts.device ?? 'auto';
  const notice = opts.notice ?? ((l: string) => process.stderr.write(`${l}\n`));
  let session: Ort.InferenceSession | undefined;
  let used: 'cpu' | 'cuda' = 'cpu';
  const installed = cudaProviderInstalled();
  if (device === 'cuda' && installed === false) {
    throw new MissingResourceError(
      `--device cuda: onnxruntime-node has no CUDA execution provider; install it with \`${REGISTRY_CUDA_INSTALL_SHORT}\` (CUDA 13, npm registry only) or \`${OFFICIAL_CUDA_INSTALL}\` (CUDA 12 + cuDNN 9), check with \`todeval doctor --device cuda\`, or use --device cpu`,
    );
  }
  if (device === 'auto' && installed === false) {
    notice('todeval: device auto -> cpu (the CUDA execution provider is not installed; `todeval doctor` says how)');
  } else if (device === 'cuda' || device === 'auto') {
    try {
      session = await ort().InferenceSession.create(onnxPath, { ...baseOptions(opts.threads, opts.verbose, opts.spin), executionProviders: ['cuda'] });
      used = 'cuda';
      if (device === 'auto') notice('todeval: device auto -> cuda');
    } catch (e) {
      const why = firstLine(e);
      if (device === 'cuda') {
        if (/protobuf|invalid model|Load model|parse|No such file/i.test(why) && !/provider/i.test(why)) {
          throw corruptModel(onnxPath, e);
        }
        throw new MissingResourceError(
          `--device cuda: the CUDA execution provider did not load (${why}); \`todeval doctor --device cuda\` names the missing library and its fix, or use --device cpu`,
        );
      }
      if (!/provider|cuda|libcu|\.so/i.test(why)) throw corruptModel(onnxPath, e);
      notice(`todeval: device auto -> cpu (CUDA did not load: ${why.slice(0, 120)}; \`todeval doctor\` says why)`);
    }
  }
  if (!session) {
    try {
      session = await ort().InferenceSession.create(onnxPath, { ...baseOptions(opts.threads, opts.verbose, opts.spin), executionProviders: ['cpu'] });
    } catch (e) {
      throw corruptModel(onnxPath, e);
    }
  }
  return wrap(session, used);
}

function corruptModel(onnxPath: string, e: unknown): InputError {
  return new InputError(`cannot load ONNX model (${firstLine(e)}); the file is missing or corrupt: run \`todeval models pull\` again or pass another --model`, {
    file: onnxPath,
  });
}

/**
 * A padded batch as the model's inputs; with `zeros` (at least rows x width zeros), the graph takes
 * segment ids too: the batch's own, or zeros for a batch without them (its pair encoding gives
 * every token segment 0, as RoBERTa's does).
 */
export function batchFeeds(batch: PaddedBatch, zeros?: BigInt64Array): Record<string, Ort.Tensor> {
  const dims = [batch.rows, batch.width];
  const { Tensor } = ort();
  const feeds: Record<string, Ort.Tensor> = {
    input_ids: new Tensor('int64', batch.inputIds, dims),
    attention_mask: new Tensor('int64', batch.attentionMask, dims),
  };
  if (zeros) feeds.token_type_ids = new Tensor('int64', batch.tokenTypeIds ?? zeros.subarray(0, batch.rows * batch.width), dims);
  return feeds;
}

/**
 * A batch of token rows as the model's int64 inputs: right-padded with `padId` to the longest row,
 * attention mask 1 on real tokens; segment ids when the export takes them (`typeIds`, else zeros).
 */
export function paddedFeeds(ids: number[][], padId: number, tokenTypeIds = false, typeIds?: number[][]): Record<string, Ort.Tensor> {
  const batch = padRows(ids, padId, typeIds);
  return batchFeeds(batch, tokenTypeIds ? new BigInt64Array(batch.rows * batch.width) : undefined);
}

function wrap(session: Ort.InferenceSession, device: 'cpu' | 'cuda'): LogitsSession {
  const inputs = session.inputNames;
  if (!inputs.includes('input_ids') || !inputs.includes('attention_mask')) {
    throw new InputError(`ONNX model inputs are [${inputs.join(', ')}]; expected input_ids and attention_mask`);
  }
  const outputName = session.outputNames.includes('logits') ? 'logits' : session.outputNames[0];
  const meta = session.outputMetadata.find((m) => m.name === outputName) as { shape?: (number | string)[] } | undefined;
  const lastDim = meta?.shape?.[meta.shape.length - 1];
  let numLabels = typeof lastDim === 'number' ? lastDim : 0;
  const segments = inputs.includes('token_type_ids');
  let zeros = new BigInt64Array(0);
  return {
    device,
    get numLabels() {
      return numLabels;
    },
    async run(batch: PaddedBatch): Promise<Float32Array> {
      if (segments && !batch.tokenTypeIds && zeros.length < batch.rows * batch.width) zeros = new BigInt64Array(Math.max(batch.rows * batch.width, zeros.length * 2));
      const feeds = batchFeeds(batch, segments ? zeros : undefined);
      const out = await session.run(feeds, [outputName]);
      const t = out[outputName];
      const dims = t.dims;
      numLabels = Number(dims[dims.length - 1]);
      let data: Float32Array;
      if (t.type === 'float32') data = t.data as Float32Array;
      else if (t.type === 'float16') {
        const raw = t.data as unknown as ArrayLike<number>;
        data = new Float32Array(raw.length);
        // Float16Array (Node >= 24) yields numbers already; Uint16Array holds raw bits.
        const bits = raw instanceof Uint16Array;
        for (let i = 0; i < raw.length; i++) data[i] = bits ? fromHalfBits(raw[i]) : raw[i];
      } else throw new InputError(`ONNX model output ${outputName} has type ${t.type}; expected float logits`);
      for (const tensor of Object.values(out)) tensor.dispose?.();
      return data;
    },
    async release() {
      await session.release();
    },
  };
}

/** True for the allocation failures ORT reports when a batch does not fit in GPU memory. */
export function isOutOfMemory(e: unknown): boolean {
  return /out of memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|Failed to allocate memory|BFCArena|bad_alloc/i.test(
    String((e as Error)?.message ?? e),
  );
}
