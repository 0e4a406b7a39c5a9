import type { BatchLimits } from './batcher.js';
import type { LabelIndex } from './labels.js';
import type { NliDtype } from './model-store.js';
import { InputError } from '../util/errors.js';
import { stageClock } from '../util/stage-clock.js';
import { modelContentName } from '../util/signature.js';
import { PairCache } from './pair-cache.js';
import type { LogitsSession, NliDevice } from './session.js';
import type { TokenizerPool } from './tokenizer-pool.js';
import type { PairTokenizer } from './tokenizer.js';
import type { NliModelSignature, NliPair, NliProbs, NliScorer, ScoreOptions } from './types.js';
import { Admission } from './runner/admission.js';
import { BatchPool } from './runner/batching.js';
import type { Job } from './runner/calls.js';
import { Execution } from './runner/execution.js';
import { isTableLookupStandin } from './onnx-builder/standins.js';
import { closeInOrder, openParts } from './runner/lifecycle.js';
import { emptyStats, type NliRunnerStats } from './runner/stats.js';

export interface NliRunnerOptions {
  /** Hub id or local directory; default $TODEVAL_MODEL, else Xenova/roberta-large-mnli. */
  model?: string;
  device?: NliDevice;
  dtype?: NliDtype;
  threads?: number;
  /** Padded tokens (rows x longest row) per forward pass. */
  maxBatchTokens?: number;
  maxBatchSize?: number;
  /** JSON-lines file the pair cache is loaded from and appended to. */
  cacheFile?: string;
  /** Bytes the in-memory pair cache may hold (default: unbounded; `serve --max-cache-bytes`). */
  cacheBytes?: number;
  onProgress?: (done: number, total: number) => void;
  /** Largest share of padding in a batch (default CPU 0.15, CUDA 0.5); 1 disables the cap. */
  maxPadFraction?: number;
  /** Shorter than the model maximum, e.g. to test truncation. */
  maxLength?: number;
  /** Where the auto-device CPU fallback notice goes (default stderr). */
  notice?: (line: string) => void;
  /** Worker threads that tokenize (0, the default: on the calling thread). */
  tokenizerThreads?: number;
  /** Run the session on a thread of its own (default), so batches are prepared while one runs. */
  sessionThread?: boolean;
  /** ONNX Runtime's own log on stderr (default quiet). */
  verbose?: boolean;
}

export type { NliRunnerStats } from './runner/stats.js';

export interface NliRunner extends NliScorer {
  readonly device: 'cpu' | 'cuda';
  readonly maxLength: number;
  /** Key of this model's entries in the pair cache (model id, revision, dtype, max length). */
  readonly cacheKey: string;
  scoreOne(pair: NliPair): Promise<NliProbs>;
  prefetch(texts: Iterable<string>): void;
  stats(): NliRunnerStats;
  /** Append newly computed pairs to the cache file; returns how many were written. */
  flushCache(): number;
  /**
   * Set once the runner can answer nothing more (its inference thread is gone): every call fails
   * at once with it, and a server opens a new runner.
   */
  readonly lost?: Error;
  /** Waits for the calls in flight, flushes the cache, stops the threads; always settles. */
  close(): Promise<void>;
}

// Measured on 2 EPYC cores (scripts/bench-nli.ts, docs/nli.md): one pair already runs near peak
// FLOPs; batches of 2-8 equal-length rows gain ~1.2x, larger batches spill caches and gain less.
export const CPU_LIMITS: BatchLimits = { maxBatchTokens: 2048, maxBatchSize: 16, maxPadFraction: 0.15 };
// The lexical and null stand-ins are a few table lookups per token, not a language model: a forward
// pass costs ONNX Runtime's fixed ~60 us and a message each way between threads, whatever its rows,
// so at CPU_LIMITS (16 rows) a whole-SGD run spent ~3 CPU-s of 14 on 22,752 batches' overhead. Each
// row is computed on its own, so larger batches give the same logits bit for bit; the padding cap
// stays, as their same-word comparison grows with the padded width squared.
export const CPU_STANDIN_LIMITS: BatchLimits = { maxBatchTokens: 16384, maxBatchSize: 256, maxPadFraction: 0.15 };
export const CUDA_LIMITS: BatchLimits = { maxBatchTokens: 65536, maxBatchSize: 512, maxPadFraction: 0.5 };

export interface BatchedRunnerParts {
  session: LogitsSession;
  tokenizer: PairTokenizer;
  labels: LabelIndex;
  signature: NliModelSignature;
  limits: BatchLimits;
  cacheFile?: string;
  cacheBytes?: number;
  onProgress?: (done: number, total: number) => void;
  /** Worker threads that tokenize; without, pairs are tokenized on the calling thread. */
  tokenizerPool?: TokenizerPool;
}


/**
 * Callers submit pairs and await their probabilities; pending pairs wait in one pool sorted by
 * length, and each forward pass takes the next run of similar-length rows within the token budget.
 * Pairs submitted in the same tick, or while a batch is running, by any caller, share batches.
 *
 * Four parts, one job each (src/nli/runner/): admission (cache, in-flight pairs, tokenizing, in call
 * order), batching (the length-sorted pool), execution (packing, the session, out-of-memory splits)
 * and lifecycle (opening and closing them together). One rule holds across them: every failure
 * reaches every call waiting on it, and close() always returns.
 *
 * The host side is built to keep a fast model busy: a call's pairs are looked up and deduplicated
 * without a promise or a joined key per pair, each side's token ids come from the tokenizer's memo
 * (or its worker threads), and a batch is packed straight from those ids into reused int64 buffers.
 */
export class BatchedNliRunner implements NliRunner {
  readonly modelSignature: NliModelSignature;
  readonly cacheKey: string;
  private readonly session: LogitsSession;
  private readonly tokenizer: PairTokenizer;
  private readonly tokenizerPool?: TokenizerPool;
  private readonly cache: PairCache;
  private readonly admission: Admission;
  private readonly pool: BatchPool;
  private readonly execution: Execution;
  private readonly onProgress?: (done: number, total: number) => void;
  private fillScheduled = false;
  private done = 0;
  private closing: Promise<void> | undefined;
  private readonly counters: NliRunnerStats = emptyStats();

  constructor(parts: BatchedRunnerParts) {
    // A limit under one row makes every batch empty: the pool hands out the same nothing forever and
    // no call ever settles (a library caller's maxBatchSize: 0; the CLI's flags are checked already).
    if (!(parts.limits.maxBatchSize >= 1)) throw new InputError(`maxBatchSize must be at least 1 (got ${parts.limits.maxBatchSize})`);
    this.session = parts.session;
    this.tokenizer = parts.tokenizer;
    this.tokenizerPool = parts.tokenizerPool;
    this.modelSignature = parts.signature;
    this.onProgress = parts.onProgress;
    const s = parts.signature;
    // The model by its bytes when it has a digest: the same file in another folder shares the cache.
    this.cacheKey = `${modelContentName(s.modelId, s.revision)}/${s.dtype}${s.kernels ? `+${s.kernels}` : ''}/max${parts.tokenizer.maxLength}`;
    this.cache = new PairCache(this.cacheKey, parts.cacheFile, parts.cacheBytes);
    // One copy shared by the pool and the execution: an out-of-memory split shrinks both.
    const limits = { ...parts.limits };
    this.pool = new BatchPool(limits);
    this.admission = new Admission({
      tokenizer: parts.tokenizer,
      tokenizerPool: parts.tokenizerPool,
      cache: this.cache,
      counters: this.counters,
      enqueue: (jobs, separate) => {
        this.pool.add(jobs, separate);
        this.scheduleFill();
      },
    });
    this.execution = new Execution({
      session: parts.session,
      tokenizer: parts.tokenizer,
      labels: parts.labels,
      limits,
      counters: this.counters,
      model: s.modelId,
      done: (batch, probs) => this.admission.complete(batch, probs),
      failed: (batch, e) => this.admission.fail(batch, e),
      finished: (batch) => this.progress(batch),
    });
  }

  get device(): 'cpu' | 'cuda' {
    return this.session.device;
  }

  get maxLength(): number {
    return this.tokenizer.maxLength;
  }

  /** Tokenizer worker threads (0: pairs are tokenized on the calling thread). */
  get tokenizerThreads(): number {
    return this.tokenizerPool?.threads ?? 0;
  }

  get lost(): Error | undefined {
    return this.session.lost;
  }

  stats(): NliRunnerStats {
    return { ...this.counters, cacheEvictions: this.cache.evictions, textsTokenizedHere: this.tokenizer.encodedHere };
  }

  scoreOne(pair: NliPair): Promise<NliProbs> {
    return this.score([pair]).then((r) => r[0]);
  }

  /**
   * Probabilities of each pair, in order. `separate`: this call's new pairs are batched among
   * themselves, after every pair submitted before them and before any submitted later, so the
   * batches (and, where padding changes the arithmetic, the results) do not depend on what else is
   * submitted meanwhile; callers that pipeline their calls use it to get the batches of one call
   * at a time.
   */
  score(pairs: NliPair[], options: ScoreOptions = {}): Promise<NliProbs[]> {
    if (this.closing) return Promise.reject(new Error('NLI runner is closed'));
    const lost = this.lost;
    if (lost) return Promise.reject(lost);
    return this.admission.submit(pairs, options.separate === true);
  }

  /**
   * Texts the caller will submit soon (a chunk's turns, references and context premises): encoded
   * now, by the tokenizer threads when there are some (this thread carries on meanwhile), else here.
   */
  prefetch(texts: Iterable<string>): void {
    if (this.closing) return;
    this.admission.prefetch(texts);
  }

  private scheduleFill(): void {
    if (this.fillScheduled) return;
    this.fillScheduled = true;
    // Wait for the current tick so every caller's synchronous submissions join the pool first.
    setImmediate(() => {
      this.fillScheduled = false;
      this.fill();
    });
  }

  /** Keep the session busy and one batch ready; the rest stay waiting so late arrivals sort in. */
  private fill(): void {
    while (this.execution.hasRoom()) {
      const batch = this.pool.take();
      if (batch === undefined) return;
      void this.execution.run(batch).finally(() => this.fill());
    }
  }

  private progress(batch: Job[]): void {
    this.done += batch.length;
    this.onProgress?.(this.done, this.counters.issued);
  }

  flushCache(): number {
    return this.cache.flush();
  }

  close(): Promise<void> {
    this.closing ??= closeInOrder([
      () => this.admission.settled(),
      () => this.execution.idle(),
      () => this.cache.flush(),
      () => this.tokenizerPool?.close(),
      () => this.session.release(),
    ]);
    return this.closing;
  }
}

/** Resolve the model, load tokenizer and labels, open the ONNX session (and start tokenizer threads). */
export async function createNliRunner(opts: NliRunnerOptions = {}): Promise<NliRunner> {
  const previous = stageClock.enter('load');
  const parts = await openParts(opts);
  const base =
    parts.session.device === 'cuda' ? CUDA_LIMITS : isTableLookupStandin(parts.standin) ? CPU_STANDIN_LIMITS : CPU_LIMITS;
  const runner = new BatchedNliRunner({
    ...parts,
    limits: {
      maxBatchTokens: opts.maxBatchTokens ?? base.maxBatchTokens,
      maxBatchSize: opts.maxBatchSize ?? base.maxBatchSize,
      maxPadFraction: opts.maxPadFraction ?? base.maxPadFraction,
    },
    cacheFile: opts.cacheFile,
    cacheBytes: opts.cacheBytes,
    onProgress: opts.onProgress,
  });
  stageClock.enter(previous);
  return runner;
}
