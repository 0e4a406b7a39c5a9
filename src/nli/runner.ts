import PQueue from 'p-queue';
import { InputError } from '../util/errors.js';
import { readJsonFile } from '../util/json-file.js';
import { takeBatch, type BatchLimits } from './batcher.js';
import { labelIndexFromConfig, probsFromLogits, type LabelIndex } from './labels.js';
import { resolveModelWithSignature, type NliDtype } from './model-store.js';
import { PairCache } from './pair-cache.js';
import { isOutOfMemory, openSession, type LogitsSession, type NliDevice } from './session.js';
import { PairTokenizer } from './tokenizer.js';
import type { NliModelSignature, NliPair, NliProbs, NliScorer } from './types.js';

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
  onProgress?: (done: number, total: number) => void;
  /** Largest share of padding in a batch (default CPU 0.15, CUDA 0.5); 1 disables the cap. */
  maxPadFraction?: number;
  /** Shorter than the model maximum, e.g. to test truncation. */
  maxLength?: number;
  /** Where the auto-device CPU fallback notice goes (default stderr). */
  notice?: (line: string) => void;
}

export interface NliRunnerStats {
  /** Pairs callers asked for. */
  requested: number;
  /** Pairs actually run through the model. */
  issued: number;
  /** Pairs answered from the cache or shared with an identical pair already in flight. */
  cacheHits: number;
  batches: number;
  /** Real (unpadded) tokens run through the model. */
  tokens: number;
  /** Tokens including padding: tokens / paddedTokens is the padding efficiency. */
  paddedTokens: number;
  /** Batches halved after an out-of-memory error. */
  oomSplits: number;
  /** Pairs whose premise (or hypothesis) was cut to fit the model maximum. */
  truncated: number;
}

export interface NliRunner extends NliScorer {
  readonly device: 'cpu' | 'cuda';
  readonly maxLength: number;
  /** Key of this model's entries in the pair cache (model id, revision, dtype, max length). */
  readonly cacheKey: string;
  scoreOne(pair: NliPair): Promise<NliProbs>;
  stats(): NliRunnerStats;
  /** Append newly computed pairs to the cache file; returns how many were written. */
  flushCache(): number;
  close(): Promise<void>;
}

// Measured on 2 EPYC cores (scripts/bench-nli.ts, docs/nli.md): one pair already runs near peak
// FLOPs; batches of 2-8 equal-length rows gain ~1.2x, larger batches spill caches and gain less.
export const CPU_LIMITS: BatchLimits = { maxBatchTokens: 2048, maxBatchSize: 16, maxPadFraction: 0.15 };
export const CUDA_LIMITS: BatchLimits = { maxBatchTokens: 65536, maxBatchSize: 512, maxPadFraction: 0.5 };

interface Pending {
  premise: string;
  hypothesis: string;
  ids: number[];
  resolve: (p: NliProbs) => void;
  reject: (e: unknown) => void;
}

export interface BatchedRunnerParts {
  session: LogitsSession;
  tokenizer: PairTokenizer;
  labels: LabelIndex;
  signature: NliModelSignature;
  limits: BatchLimits;
  cacheFile?: string;
  onProgress?: (done: number, total: number) => void;
}

/**
 * Callers submit pairs and await their probabilities; pending pairs wait in one pool sorted by
 * length, and each forward pass takes the next run of similar-length rows within the token budget.
 * Pairs submitted in the same tick, or while a batch is running, by any caller, share batches.
 */
export class BatchedNliRunner implements NliRunner {
  readonly modelSignature: NliModelSignature;
  readonly cacheKey: string;
  private readonly session: LogitsSession;
  private readonly tokenizer: PairTokenizer;
  private readonly labels: LabelIndex;
  private readonly limits: BatchLimits;
  private readonly cache: PairCache;
  private readonly inflight = new Map<string, Promise<NliProbs>>();
  private readonly queue = new PQueue({ concurrency: 1 });
  private readonly onProgress?: (done: number, total: number) => void;
  private pool: Pending[] = [];
  private head = 0;
  private sorted = true;
  private fillScheduled = false;
  private done = 0;
  private closed = false;
  private readonly counters: NliRunnerStats = {
    requested: 0,
    issued: 0,
    cacheHits: 0,
    batches: 0,
    tokens: 0,
    paddedTokens: 0,
    oomSplits: 0,
    truncated: 0,
  };

  constructor(parts: BatchedRunnerParts) {
    this.session = parts.session;
    this.tokenizer = parts.tokenizer;
    this.labels = parts.labels;
    this.modelSignature = parts.signature;
    this.limits = { ...parts.limits };
    this.onProgress = parts.onProgress;
    const s = parts.signature;
    this.cacheKey = `${s.modelId}@${s.revision}/${s.dtype}/max${parts.tokenizer.maxLength}`;
    this.cache = new PairCache(this.cacheKey, parts.cacheFile);
  }

  get device(): 'cpu' | 'cuda' {
    return this.session.device;
  }

  get maxLength(): number {
    return this.tokenizer.maxLength;
  }

  stats(): NliRunnerStats {
    return { ...this.counters };
  }

  score(pairs: NliPair[]): Promise<NliProbs[]> {
    return Promise.all(pairs.map((p) => this.scoreOne(p)));
  }

  scoreOne(pair: NliPair): Promise<NliProbs> {
    if (this.closed) return Promise.reject(new Error('NLI runner is closed'));
    if (typeof pair?.premise !== 'string' || typeof pair?.hypothesis !== 'string') {
      return Promise.reject(new InputError('an NLI pair needs string premise and hypothesis'));
    }
    this.counters.requested++;
    const cached = this.cache.get(pair.premise, pair.hypothesis);
    if (cached) {
      this.counters.cacheHits++;
      return Promise.resolve(cached);
    }
    const key = PairCache.key(pair.premise, pair.hypothesis);
    const running = this.inflight.get(key);
    if (running) {
      this.counters.cacheHits++;
      return running;
    }
    const enc = this.tokenizer.encodePair(pair.premise, pair.hypothesis);
    if (enc.premiseTruncated > 0 || enc.hypothesisTruncated > 0) this.counters.truncated++;
    this.counters.issued++;
    const promise = new Promise<NliProbs>((resolve, reject) => {
      this.pool.push({ premise: pair.premise, hypothesis: pair.hypothesis, ids: enc.ids, resolve, reject });
    });
    this.sorted = false;
    this.inflight.set(key, promise);
    const forget = () => this.inflight.delete(key);
    promise.then(forget, forget);
    this.scheduleFill();
    return promise;
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

  /** Keep one batch running and one ready; the rest stay in the pool so late arrivals sort in. */
  private fill(): void {
    while (this.pool.length - this.head > 0 && this.queue.size + this.queue.pending < 2) {
      if (!this.sorted) {
        this.pool = this.pool.slice(this.head).sort((a, b) => a.ids.length - b.ids.length);
        this.head = 0;
        this.sorted = true;
      }
      const start = this.head;
      const n = takeBatch((i) => this.pool[start + i].ids.length, this.pool.length - start, this.limits);
      const batch = this.pool.slice(start, start + n);
      this.head += n;
      if (this.head > 4096 && this.head * 2 > this.pool.length) {
        this.pool = this.pool.slice(this.head);
        this.head = 0;
      }
      void this.queue.add(() => this.runBatch(batch)).finally(() => this.fill());
    }
  }

  private async runBatch(batch: Pending[]): Promise<void> {
    try {
      const probs = await this.forward(batch.map((b) => b.ids));
      for (let i = 0; i < batch.length; i++) {
        this.cache.set(batch[i].premise, batch[i].hypothesis, probs[i]);
        batch[i].resolve(probs[i]);
      }
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
    this.done += batch.length;
    this.onProgress?.(this.done, this.counters.issued);
  }

  /**
   * One forward pass; on an out-of-memory error, each half is run on its own (recursively) and the
   * batch limits shrink so later batches do not fail the same way. Rows are independent under the
   * attention mask, so splitting does not change results beyond float rounding.
   */
  private async forward(rows: number[][]): Promise<NliProbs[]> {
    let logits: Float32Array;
    try {
      logits = await this.session.run(rows, this.tokenizer.padId);
    } catch (e) {
      if (!isOutOfMemory(e) || rows.length === 1) throw e;
      this.counters.oomSplits++;
      const half = Math.ceil(rows.length / 2);
      this.limits.maxBatchSize = Math.max(1, Math.min(this.limits.maxBatchSize, half));
      const longest = rows.reduce((m, r) => Math.max(m, r.length), 0);
      this.limits.maxBatchTokens = Math.max(longest, Math.min(this.limits.maxBatchTokens, longest * half));
      const left = await this.forward(rows.slice(0, half));
      const right = await this.forward(rows.slice(half));
      return [...left, ...right];
    }
    const width = this.session.numLabels;
    if (logits.length !== rows.length * width) {
      throw new InputError(`model returned ${logits.length} logits for ${rows.length} pairs`);
    }
    this.counters.batches++;
    const longest = rows.reduce((m, r) => Math.max(m, r.length), 0);
    for (const r of rows) this.counters.tokens += r.length;
    this.counters.paddedTokens += longest * rows.length;
    const out: NliProbs[] = [];
    for (let i = 0; i < rows.length; i++) out.push(probsFromLogits(logits, i * width, width, this.labels));
    return out;
  }

  flushCache(): number {
    return this.cache.flush();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.onIdle();
    this.cache.flush();
    await this.session.release();
  }
}

/** Resolve the model, load tokenizer and labels, open the ONNX session. */
export async function createNliRunner(opts: NliRunnerOptions = {}): Promise<NliRunner> {
  const model = await resolveModelWithSignature(opts.model, opts.dtype);
  const config = readJsonFile<Record<string, unknown>>(model.configPath);
  const labels = labelIndexFromConfig(config, model.configPath);
  const tokenizer = PairTokenizer.fromFiles(model.tokenizerPath, model.tokenizerConfigPath, config, { maxLength: opts.maxLength });
  const session = await openSession(model.onnxPath, { device: opts.device, threads: opts.threads, notice: opts.notice });
  const base = session.device === 'cuda' ? CUDA_LIMITS : CPU_LIMITS;
  return new BatchedNliRunner({
    session,
    tokenizer,
    labels,
    signature: model.signature,
    limits: {
      maxBatchTokens: opts.maxBatchTokens ?? base.maxBatchTokens,
      maxBatchSize: opts.maxBatchSize ?? base.maxBatchSize,
      maxPadFraction: opts.maxPadFraction ?? base.maxPadFraction,
    },
    cacheFile: opts.cacheFile,
    onProgress: opts.onProgress,
  });
}
