import PQueue from 'p-queue';
import { InputError } from '../util/errors.js';
import { readJsonFile } from '../util/json-file.js';
import { takeBatch, type BatchLimits } from './batcher.js';
import { labelIndexFromConfig, probsFromLogits, type LabelIndex } from './labels.js';
import { resolveModelWithSignature, type NliDtype } from './model-store.js';
import { stageClock } from '../util/stage-clock.js';
import { BatchPacker } from './feeds.js';
import { PairCache } from './pair-cache.js';
import { PairMap } from './pair-map.js';
import { isOutOfMemory, openSession, type LogitsSession, type NliDevice } from './session.js';
import { SessionThread } from './session-thread.js';
import { TokenizerPool } from './tokenizer-pool.js';
import { keptHypothesis, keptPremise, PAIR_SPECIAL_TOKENS, PairTokenizer } from './tokenizer.js';
import type { NliModelSignature, NliPair, NliProbs, NliScorer, ScoreOptions } from './types.js';

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
  /** Worker threads that tokenize (0, the default: on the calling thread). */
  tokenizerThreads?: number;
  /** Run the session on a thread of its own (default), so batches are prepared while one runs. */
  sessionThread?: boolean;
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
  prefetch(texts: Iterable<string>): void;
  stats(): NliRunnerStats;
  /** Append newly computed pairs to the cache file; returns how many were written. */
  flushCache(): number;
  close(): Promise<void>;
}

// Measured on 2 EPYC cores (scripts/bench-nli.ts, docs/nli.md): one pair already runs near peak
// FLOPs; batches of 2-8 equal-length rows gain ~1.2x, larger batches spill caches and gain less.
export const CPU_LIMITS: BatchLimits = { maxBatchTokens: 2048, maxBatchSize: 16, maxPadFraction: 0.15 };
export const CUDA_LIMITS: BatchLimits = { maxBatchTokens: 65536, maxBatchSize: 512, maxPadFraction: 0.5 };

/** A caller's `score` call: its results fill in as the pairs it waits on come back. */
interface Call {
  results: NliProbs[];
  remaining: number;
  settled: boolean;
  resolve: (r: NliProbs[]) => void;
  reject: (e: unknown) => void;
}

/** One distinct pair on its way through the model, and who waits for it. */
interface Job {
  premise: string;
  hypothesis: string;
  /** Token ids of each side (shared with the tokenizer's memo), set once tokenized. */
  p: Int32Array;
  h: Int32Array;
  /** Tokens of each side kept within the model maximum, and the row's length with special tokens. */
  keepP: number;
  keepH: number;
  length: number;
  call: Call;
  index: number;
  /** Further callers of the same pair (rare: concurrent callers asking for it while it runs). */
  more: { call: Call; index: number }[] | undefined;
}

const NO_IDS = new Int32Array(0);

interface TokenizingGroup {
  jobs: Job[];
  separate: boolean;
  ready: boolean;
  failed?: unknown;
}

interface Segment {
  jobs: Job[];
  head: number;
  sorted: boolean;
  /** Later submissions may join (sorted in with what is left). */
  open: boolean;
}

export interface BatchedRunnerParts {
  session: LogitsSession;
  tokenizer: PairTokenizer;
  labels: LabelIndex;
  signature: NliModelSignature;
  limits: BatchLimits;
  cacheFile?: string;
  onProgress?: (done: number, total: number) => void;
  /** Worker threads that tokenize; without, pairs are tokenized on the calling thread. */
  tokenizerPool?: TokenizerPool;
}

/**
 * Callers submit pairs and await their probabilities; pending pairs wait in one pool sorted by
 * length, and each forward pass takes the next run of similar-length rows within the token budget.
 * Pairs submitted in the same tick, or while a batch is running, by any caller, share batches.
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
  private readonly labels: LabelIndex;
  private readonly limits: BatchLimits;
  private readonly cache: PairCache;
  private readonly packer: BatchPacker;
  private readonly inflight = new PairMap<Job>();
  private readonly queue: PQueue;
  private readonly onProgress?: (done: number, total: number) => void;
  /**
   * Pairs waiting for a batch, in segments taken one after another: pairs submitted together (in
   * one tick, by any caller) share the open segment at the end and are sorted by length there; a
   * call made with `separate` gets a segment of its own, batched after those before it.
   */
  private readonly segments: Segment[] = [];
  private fillScheduled = false;
  /** Calls whose new pairs wait for the tokenizer threads, in the order they were made. */
  private readonly tokenizing: TokenizingGroup[] = [];
  private tokenizingDone: Promise<void> = Promise.resolve();
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
    this.tokenizerPool = parts.tokenizerPool;
    this.labels = parts.labels;
    this.modelSignature = parts.signature;
    this.limits = { ...parts.limits };
    this.onProgress = parts.onProgress;
    const s = parts.signature;
    this.cacheKey = `${s.modelId}@${s.revision}/${s.dtype}/max${parts.tokenizer.maxLength}`;
    this.cache = new PairCache(this.cacheKey, parts.cacheFile);
    // A session on its own thread takes the next batch while one runs: the model never waits for us.
    const inFlight = Math.max(1, parts.session.inFlight ?? 1);
    this.queue = new PQueue({ concurrency: inFlight });
    // A packed batch stays untouched while it is in flight (the packer reuses a slot only `slots` packs later).
    this.packer = new BatchPacker(parts.tokenizer.padId, inFlight + 1, parts.session.sharedBatches === true);
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

  stats(): NliRunnerStats {
    return { ...this.counters };
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
    if (this.closed) return Promise.reject(new Error('NLI runner is closed'));
    for (const pair of pairs) {
      if (typeof pair?.premise !== 'string' || typeof pair?.hypothesis !== 'string') {
        return Promise.reject(new InputError('an NLI pair needs string premise and hypothesis'));
      }
    }
    const previous = stageClock.enter('pairs');
    let call!: Call;
    const promise = new Promise<NliProbs[]>((resolve, reject) => {
      call = { results: new Array<NliProbs>(pairs.length), remaining: 0, settled: false, resolve, reject };
    });
    const fresh: Job[] = [];
    this.counters.requested += pairs.length;
    for (let i = 0; i < pairs.length; i++) {
      const { premise, hypothesis } = pairs[i];
      const cached = this.cache.get(premise, hypothesis);
      if (cached !== undefined) {
        this.counters.cacheHits++;
        call.results[i] = cached;
        continue;
      }
      call.remaining++;
      const running = this.inflight.get(premise, hypothesis);
      if (running !== undefined) {
        this.counters.cacheHits++;
        (running.more ??= []).push({ call, index: i });
        continue;
      }
      const job: Job = { premise, hypothesis, p: NO_IDS, h: NO_IDS, keepP: 0, keepH: 0, length: 0, call, index: i, more: undefined };
      this.inflight.set(premise, hypothesis, job);
      fresh.push(job);
    }
    this.counters.issued += fresh.length;
    if (call.remaining === 0) {
      call.settled = true;
      call.resolve(call.results);
    }
    if (fresh.length > 0) this.tokenize(fresh, options.separate === true);
    stageClock.enter(previous);
    return promise;
  }

  /**
   * Give each new pair its token ids, then let it into the pool. With tokenizer threads, texts the
   * memo lacks go to them first; the call's pairs then join the pool together and in order, after
   * those of earlier calls, as when tokenized here.
   */
  private tokenize(jobs: Job[], separate: boolean): void {
    stageClock.enter('tokenize');
    const pool = this.tokenizerPool;
    if (pool) {
      const missing: string[] = [];
      for (const job of jobs) {
        if (this.tokenizer.known(job.premise) === undefined) missing.push(job.premise);
        if (this.tokenizer.known(job.hypothesis) === undefined) missing.push(job.hypothesis);
      }
      if (missing.length > 0 || this.tokenizing.length > 0) {
        const group: TokenizingGroup = { jobs, separate, ready: false };
        this.tokenizing.push(group);
        const encoded = pool.encode(missing).then(
          () => {
            group.ready = true;
          },
          (e: unknown) => {
            group.ready = true;
            group.failed = e;
          },
        );
        this.tokenizingDone = Promise.all([this.tokenizingDone, encoded]).then(() => this.admitTokenized());
        return;
      }
    }
    this.admit(jobs, separate);
  }

  /** Let in the groups at the front of the line whose texts are all encoded. */
  private admitTokenized(): void {
    stageClock.enter('tokenize');
    while (this.tokenizing.length > 0 && this.tokenizing[0].ready) {
      const group = this.tokenizing.shift()!;
      if (group.failed !== undefined) this.fail(group.jobs, group.failed);
      else this.admit(group.jobs, group.separate);
    }
    stageClock.enter('wait');
  }

  private admit(jobs: Job[], separate: boolean): void {
    const max = this.tokenizer.maxLength;
    let segment = this.segments[this.segments.length - 1];
    if (separate || segment === undefined || !segment.open) {
      segment = { jobs: [], head: 0, sorted: true, open: !separate };
      this.segments.push(segment);
    }
    for (const job of jobs) {
      const p = this.tokenizer.ids(job.premise);
      const h = this.tokenizer.ids(job.hypothesis);
      const keepP = keptPremise(p.length, h.length, max);
      const keepH = keptHypothesis(h.length, keepP, max);
      if (keepP < p.length || keepH < h.length) this.counters.truncated++;
      job.p = p;
      job.h = h;
      job.keepP = keepP;
      job.keepH = keepH;
      job.length = keepP + keepH + PAIR_SPECIAL_TOKENS;
      segment.jobs.push(job);
    }
    segment.sorted = false;
    this.scheduleFill();
  }

  /**
   * Texts the caller will submit soon (a chunk's turns, references and context premises): encoded
   * now, by the tokenizer threads when there are some (this thread carries on meanwhile), else here
   * (a caller that prefetches while the model works on earlier pairs gets the encoding done then).
   */
  prefetch(texts: Iterable<string>): void {
    if (this.closed) return;
    if (!this.tokenizerPool) {
      for (const t of texts) this.tokenizer.ids(t);
      return;
    }
    // A failure here resurfaces when the texts are needed; nothing waits on this promise.
    this.tokenizerPool.encode(texts).catch(() => undefined);
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
    while (this.queue.size + this.queue.pending < this.queue.concurrency + 1) {
      const segment = this.segments[0];
      if (segment === undefined) return;
      if (segment.head === segment.jobs.length) {
        // Used up: an open segment at the end stays for the next arrivals.
        if (segment.open && this.segments.length === 1) return;
        this.segments.shift();
        continue;
      }
      if (!segment.sorted) {
        segment.jobs = segment.jobs.slice(segment.head).sort((a, b) => a.length - b.length);
        segment.head = 0;
        segment.sorted = true;
      }
      const start = segment.head;
      const jobs = segment.jobs;
      const n = takeBatch((i) => jobs[start + i].length, jobs.length - start, this.limits);
      const batch = jobs.slice(start, start + n);
      segment.head += n;
      if (segment.head > 4096 && segment.head * 2 > jobs.length) {
        segment.jobs = jobs.slice(segment.head);
        segment.head = 0;
      }
      void this.queue.add(() => this.runBatch(batch)).finally(() => this.fill());
    }
  }

  private async runBatch(batch: Job[]): Promise<void> {
    try {
      const probs = await this.forward(batch);
      stageClock.enter('results');
      for (let i = 0; i < batch.length; i++) {
        const job = batch[i];
        this.cache.set(job.premise, job.hypothesis, probs[i]);
        this.inflight.delete(job.premise, job.hypothesis);
        deliver(job.call, job.index, probs[i]);
        if (job.more) for (const w of job.more) deliver(w.call, w.index, probs[i]);
      }
      // Back to waiting for the model (or, when none is running, for the caller's next step).
      stageClock.enter(this.queue.pending > 1 ? 'model' : 'wait');
    } catch (e) {
      this.fail(batch, e);
    }
    this.done += batch.length;
    this.onProgress?.(this.done, this.counters.issued);
  }

  private fail(jobs: Job[], e: unknown): void {
    for (const job of jobs) {
      this.inflight.delete(job.premise, job.hypothesis);
      reject(job.call, e);
      if (job.more) for (const w of job.more) reject(w.call, e);
    }
  }

  /**
   * One forward pass; on an out-of-memory error, each half is run on its own (recursively) and the
   * batch limits shrink so later batches do not fail the same way. Rows are independent under the
   * attention mask, so splitting does not change results beyond float rounding.
   */
  private async forward(rows: Job[]): Promise<NliProbs[]> {
    let logits: Float32Array;
    let width = 0;
    for (const r of rows) width = Math.max(width, r.length);
    try {
      stageClock.enter('feeds');
      const batch = this.packer.pack(rows.length, width, (out, r) => this.writeRow(out, rows[r]));
      stageClock.enter('model');
      logits = await this.session.run(batch);
      stageClock.enter('results');
    } catch (e) {
      if (!isOutOfMemory(e) || rows.length === 1) throw e;
      this.counters.oomSplits++;
      const half = Math.ceil(rows.length / 2);
      this.limits.maxBatchSize = Math.max(1, Math.min(this.limits.maxBatchSize, half));
      this.limits.maxBatchTokens = Math.max(width, Math.min(this.limits.maxBatchTokens, width * half));
      const left = await this.forward(rows.slice(0, half));
      const right = await this.forward(rows.slice(half));
      return [...left, ...right];
    }
    const labels = this.session.numLabels;
    if (logits.length !== rows.length * labels) {
      throw new InputError(`model returned ${logits.length} logits for ${rows.length} pairs`);
    }
    this.counters.batches++;
    for (const r of rows) this.counters.tokens += r.length;
    this.counters.paddedTokens += width * rows.length;
    const out = new Array<NliProbs>(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = probsFromLogits(logits, i * labels, labels, this.labels);
    return out;
  }

  /** `<s> premise </s></s> hypothesis </s>`, each side cut to what the pair keeps. */
  private writeRow(out: Int32Array, job: Job): number {
    const sep = this.tokenizer.sepId;
    let k = 0;
    out[k++] = this.tokenizer.clsId;
    out.set(job.p.length === job.keepP ? job.p : job.p.subarray(0, job.keepP), k);
    k += job.keepP;
    out[k++] = sep;
    out[k++] = sep;
    out.set(job.h.length === job.keepH ? job.h : job.h.subarray(0, job.keepH), k);
    k += job.keepH;
    out[k++] = sep;
    return k;
  }

  flushCache(): number {
    return this.cache.flush();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tokenizingDone;
    await this.queue.onIdle();
    this.cache.flush();
    await this.tokenizerPool?.close();
    await this.session.release();
  }
}

function deliver(call: Call, index: number, probs: NliProbs): void {
  call.results[index] = probs;
  if (--call.remaining === 0 && !call.settled) {
    call.settled = true;
    call.resolve(call.results);
  }
}

function reject(call: Call, e: unknown): void {
  if (call.settled) return;
  call.settled = true;
  call.reject(e);
}

/** Resolve the model, load tokenizer and labels, open the ONNX session (and start tokenizer threads). */
export async function createNliRunner(opts: NliRunnerOptions = {}): Promise<NliRunner> {
  const previous = stageClock.enter('load');
  const model = await resolveModelWithSignature(opts.model, opts.dtype);
  const config = readJsonFile<Record<string, unknown>>(model.configPath);
  const labels = labelIndexFromConfig(config, model.configPath);
  const sessionOptions = { device: opts.device, threads: opts.threads, notice: opts.notice };
  // The session thread loads the model while this thread parses the tokenizer.
  const opening = opts.sessionThread === false ? undefined : SessionThread.open(model.onnxPath, sessionOptions);
  opening?.catch(() => undefined); // its failure is awaited below
  let tokenizer: PairTokenizer;
  try {
    tokenizer = PairTokenizer.fromFiles(model.tokenizerPath, model.tokenizerConfigPath, config, { maxLength: opts.maxLength });
  } catch (e) {
    await opening?.then((s) => s.release(), () => undefined);
    throw e;
  }
  const threads = opts.tokenizerThreads ?? 0;
  // Started while the session loads: each thread parses the tokenizer on its own.
  const pool = threads > 0 ? TokenizerPool.start(tokenizer, threads) : undefined;
  let session: LogitsSession;
  try {
    session = opening ? await opening : await openSession(model.onnxPath, sessionOptions);
  } catch (e) {
    await pool?.then((p) => p.close(), () => undefined);
    throw e;
  }
  let tokenizerPool: TokenizerPool | undefined;
  try {
    tokenizerPool = await pool;
  } catch (e) {
    await session.release();
    throw e;
  }
  const base = session.device === 'cuda' ? CUDA_LIMITS : CPU_LIMITS;
  const runner = new BatchedNliRunner({
    session,
    tokenizer,
    tokenizerPool,
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
  stageClock.enter(previous);
  return runner;
}
