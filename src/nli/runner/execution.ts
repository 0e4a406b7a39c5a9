import PQueue from 'p-queue';
import { InputError, ModelRunError } from '../../util/errors.js';
import { stageClock } from '../../util/stage-clock.js';
import type { BatchLimits } from '../batcher.js';
import { BatchPacker } from '../feeds.js';
import { probsFromLogits, type LabelIndex } from '../labels.js';
import { isOutOfMemory, type LogitsSession } from '../session.js';
import { writePair, type PairTokenizer } from '../tokenizer.js';
import type { NliProbs } from '../types.js';
import type { Job } from './calls.js';
import type { NliRunnerStats } from './stats.js';

export interface ExecutionParts {
  session: LogitsSession;
  tokenizer: PairTokenizer;
  labels: LabelIndex;
  /** Shared with the batch pool: an out-of-memory split shrinks them for later batches too. */
  limits: BatchLimits;
  counters: NliRunnerStats;
  /** The model as a failure names it (its hub id or folder). */
  model: string;
  /** Each batch ends in exactly one of these. */
  done: (batch: Job[], probs: NliProbs[]) => void;
  failed: (batch: Job[], e: unknown) => void;
  /** After either: the batch is out of the model's hands. */
  finished: (batch: Job[]) => void;
}

/**
 * Batches through the model: packed into reused int64 buffers, run on the session (up to its
 * `inFlight` at a time), turned into probabilities; a batch that runs out of memory is halved.
 */
export class Execution {
  private readonly queue: PQueue;
  private readonly packer: BatchPacker;

  constructor(private readonly parts: ExecutionParts) {
    // A session on its own thread takes the next batch while one runs: the model never waits for us.
    const inFlight = Math.max(1, parts.session.inFlight ?? 1);
    this.queue = new PQueue({ concurrency: inFlight });
    // A packed batch stays untouched while it is in flight (the packer reuses a slot only `slots` packs later).
    // Segment ids are packed only where the pair encoding has a non-zero one (not RoBERTa's).
    const segments = !parts.tokenizer.pairEncoding.segmentsAllZero;
    this.packer = new BatchPacker(parts.tokenizer.padId, inFlight + 1, parts.session.sharedBatches === true, segments);
  }

  /** Room for another batch: the session busy and one batch ready; the rest wait so late arrivals sort in. */
  hasRoom(): boolean {
    return this.queue.size + this.queue.pending < this.queue.concurrency + 1;
  }

  /** Runs the batch in turn; resolves (never rejects) once `done` or `failed` has been called for it. */
  run(batch: Job[]): Promise<void> {
    return this.queue.add(() => this.runBatch(batch));
  }

  /** Resolves once no batch is queued or running. */
  idle(): Promise<void> {
    return this.queue.onIdle();
  }

  private async runBatch(batch: Job[]): Promise<void> {
    try {
      const probs = await this.forward(batch);
      stageClock.enter('results');
      this.parts.done(batch, probs);
      // Back to waiting for the model (or, when none is running, for the caller's next step).
      stageClock.enter(this.queue.pending > 1 ? 'model' : 'wait');
    } catch (e) {
      this.parts.failed(batch, e);
    }
    this.parts.finished(batch);
  }

  /**
   * One forward pass; on an out-of-memory error, each half is run on its own (recursively) and the
   * batch limits shrink so later batches do not fail the same way. Rows are independent under the
   * attention mask, so splitting does not change results beyond float rounding.
   */
  private async forward(rows: Job[]): Promise<NliProbs[]> {
    const { session, limits, counters } = this.parts;
    let logits: Float32Array;
    let width = 0;
    for (const r of rows) width = Math.max(width, r.length);
    try {
      stageClock.enter('feeds');
      const encoding = this.parts.tokenizer.pairEncoding;
      const batch = this.packer.pack(rows.length, width, (out, r, types) => {
        const job = rows[r];
        return writePair(encoding, job.p, job.keepP, job.h, job.keepH, out, types);
      });
      stageClock.enter('model');
      logits = await session.run(batch);
      stageClock.enter('results');
    } catch (e) {
      if (!isOutOfMemory(e) || rows.length === 1) throw this.modelFailure(e, rows.length, width);
      counters.oomSplits++;
      const half = Math.ceil(rows.length / 2);
      limits.maxBatchSize = Math.max(1, Math.min(limits.maxBatchSize, half));
      limits.maxBatchTokens = Math.max(width, Math.min(limits.maxBatchTokens, width * half));
      const left = await this.forward(rows.slice(0, half));
      const right = await this.forward(rows.slice(half));
      return [...left, ...right];
    }
    const labels = session.numLabels;
    if (logits.length !== rows.length * labels) {
      throw new InputError(`model returned ${logits.length} logits for ${rows.length} pairs`);
    }
    // A NaN or infinite logit (an fp16 export overflowing, a broken graph) gives NaN probabilities:
    // argmaxLabel reads them as contradiction, and the cache file stores them as null, a record the
    // next run refuses. The batch fails instead, as any model failure does, and nothing is cached.
    for (let k = 0; k < logits.length; k++) {
      if (!Number.isFinite(logits[k])) {
        throw new ModelRunError(this.parts.model, rows.length, width, `non-finite logit (${logits[k]}) for pair ${Math.floor(k / labels) + 1} of the batch`);
      }
    }
    counters.batches++;
    for (const r of rows) counters.tokens += r.length;
    counters.paddedTokens += width * rows.length;
    const out = new Array<NliProbs>(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = probsFromLogits(logits, i * labels, labels, this.parts.labels);
    return out;
  }

  /**
   * A failed run as one line naming the model and the batch shape, ONNX Runtime's own words after
   * them. A session that is gone (its thread died) fails every run with its own error, unchanged:
   * that is the runner's loss, not this batch's.
   */
  private modelFailure(e: unknown, rows: number, width: number): unknown {
    const { session } = this.parts;
    if (session.lost !== undefined || e instanceof InputError || e instanceof ModelRunError) return e;
    return new ModelRunError(this.parts.model, rows, width, runtimeMessage(e));
  }
}

/**
 * ONNX Runtime's message on one line, without the C++ source location it puts in the middle
 * (`/onnxruntime_src/.../reshape_helper.h:84 onnxruntime::ReshapeHelper::ReshapeHelper(...)`), which
 * says nothing to a user; the node, its status and the shapes stay.
 */
export function runtimeMessage(e: unknown): string {
  const text = String((e as Error)?.message ?? e).replace(/\s+/g, ' ').trim();
  return text.replace(/\s*\/onnxruntime_src\/\S+:\d+ [\w:~<>]+\([^)]*\)\s*/g, ' ').trim();
}
