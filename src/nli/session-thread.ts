import type { Worker } from 'node:worker_threads';
import { InputError, MissingResourceError } from '../util/errors.js';
import type { PaddedBatch } from './feeds.js';
import type { LogitsSession, SessionOptions } from './session.js';
import { startWorker, type ThreadError } from './worker-entry.js';

export interface SessionThreadData {
  /** Int32Array over 8 shared bytes: [RUNNING] runs inside ONNX Runtime now, [EXITING] 1 once the process exits. */
  state: SharedArrayBuffer;
}

export const RUNNING = 0;
export const EXITING = 1;
/** How long an exiting process waits for a run in progress to return (one batch; then it exits anyway). */
const EXIT_WAIT_MS = 10_000;

/**
 * Called on the process's 'exit' (Ctrl-C, SIGTERM, an error, a command that never released its
 * runner): no run may start any more, and one in progress is waited for. onnxruntime-node finishes a
 * run with a callback into the thread that started it; if that thread is being torn down by then,
 * the callback throws a C++ exception nobody catches and the whole process aborts (SIGABRT and a
 * "terminate called" line instead of exit code 130, seen on about half of Ctrl-C's while scoring).
 */
function waitForRunsToEnd(state: Int32Array): void {
  Atomics.store(state, EXITING, 1);
  const deadline = Date.now() + EXIT_WAIT_MS;
  for (let running = Atomics.load(state, RUNNING); running > 0 && Date.now() < deadline; running = Atomics.load(state, RUNNING)) {
    Atomics.wait(state, RUNNING, running, deadline - Date.now());
  }
}

export type SessionRequest =
  | { type: 'open'; onnxPath: string; options: Omit<SessionOptions, 'notice'> }
  | { type: 'run'; id: number; rows: number; width: number; inputIds: BigInt64Array; attentionMask: BigInt64Array; tokenTypeIds?: BigInt64Array }
  | { type: 'release' };

export type SessionReply =
  | { type: 'ready'; device: 'cpu' | 'cuda'; numLabels: number }
  | { type: 'notice'; line: string }
  | { type: 'failed'; error: ThreadError }
  | { type: 'result'; id: number; logits?: Float32Array; error?: ThreadError; numLabels: number }
  | { type: 'released' };

function fromThreadError(e: ThreadError): Error {
  if (e.name === 'MissingResourceError') return new MissingResourceError(e.message, { file: e.file, where: e.where });
  if (e.name === 'InputError') return new InputError(e.message, { file: e.file, where: e.where });
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

/** An inference thread with no session: a released SessionThread's, kept for the next open. */
interface IdleThread {
  worker: Worker;
  state: Int32Array;
  /** Drops the thread from the idle ones if it errs or exits while it waits (nothing else listens then). */
  onGone: () => void;
}

/**
 * How many released inference threads a process keeps. A library caller that opens runners one
 * after another (a training loop scoring each epoch, `todeval stdio` answering each request, the
 * shards of an in-process run) then pays for a session, not for a new thread and ONNX Runtime's
 * start there too (about 80 ms of CPU of the 125 ms an open and release of a small model takes).
 * A kept thread holds no session and no model, and never keeps the process alive.
 */
const MAX_IDLE_THREADS = 2;
const idleThreads: IdleThread[] = [];

function keepIdle(worker: Worker, state: Int32Array): boolean {
  if (idleThreads.length >= MAX_IDLE_THREADS) return false;
  worker.removeAllListeners('message');
  worker.removeAllListeners('error');
  worker.removeAllListeners('exit');
  const idle: IdleThread = {
    worker,
    state,
    onGone: () => {
      const at = idleThreads.indexOf(idle);
      if (at >= 0) idleThreads.splice(at, 1);
    },
  };
  worker.on('error', idle.onGone);
  worker.on('exit', idle.onGone);
  worker.unref();
  idleThreads.push(idle);
  return true;
}

function takeIdle(): IdleThread | undefined {
  const idle = idleThreads.pop();
  if (idle) {
    idle.worker.off('error', idle.onGone);
    idle.worker.off('exit', idle.onGone);
  }
  return idle;
}

/**
 * Ends the released inference threads this process keeps (SessionThread reuses them otherwise):
 * the next session starts a thread of its own. For a caller that wants every thread gone now, and
 * for tests that act on the next thread started.
 */
export function closeIdleInferenceThreads(): Promise<void> {
  const all = idleThreads.splice(0);
  return Promise.all(all.map((t) => t.worker.terminate())).then(() => undefined);
}

/**
 * The ONNX session on a thread of its own. ONNX Runtime's run is synchronous on the thread that
 * calls it, for as long as the model takes (on a GPU, the whole forward pass); here it blocks the
 * inference thread instead, and the calling thread packs the next batch, handles the last one's
 * results and builds the next pass's pairs meanwhile. Runs are done in the order they are sent,
 * up to `inFlight` at a time (one running, one waiting), and each batch's buffers are copied before
 * sending, so they may be reused at once.
 */
export class SessionThread implements LogitsSession {
  readonly inFlight = 2;
  private numLabelsSeen: number;
  private readonly pending = new Map<number, { resolve: (l: Float32Array) => void; reject: (e: unknown) => void }>();
  private nextId = 0;
  private failed: Error | undefined;
  private released = false;
  private exited = false;
  private readonly onProcessExit: () => void;

  private constructor(
    private readonly worker: Worker,
    readonly device: 'cpu' | 'cuda',
    numLabels: number,
    private readonly state: Int32Array,
  ) {
    this.numLabelsSeen = numLabels;
    this.onProcessExit = () => waitForRunsToEnd(state);
    process.on('exit', this.onProcessExit);
    worker.on('message', (m: SessionReply) => this.onMessage(m));
    worker.on('error', (e) => this.fail(e));
    worker.on('exit', (code) => {
      this.exited = true;
      if (!this.released) this.fail(new Error(`inference thread exited (code ${code})`));
    });
    // An idle inference thread never keeps a finished command alive (ref'd while a run is out).
    worker.unref();
  }

  static open(onnxPath: string, opts: SessionOptions = {}): Promise<SessionThread> {
    const { notice, ...options } = opts;
    const say = notice ?? ((l: string) => process.stderr.write(`${l}\n`));
    const idle = takeIdle();
    let worker: Worker;
    let state: Int32Array;
    if (idle) {
      ({ worker, state } = idle);
      worker.ref();
    } else {
      const shared = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
      const data: SessionThreadData = { state: shared };
      worker = startWorker(import.meta.url, 'session-worker', { workerData: data });
      state = new Int32Array(shared);
    }
    worker.postMessage({ type: 'open', onnxPath, options } satisfies SessionRequest);
    return new Promise<SessionThread>((resolve, reject) => {
      // Exactly one of these ends the wait: ready, a load failure, an error, or an exit without either.
      const stopListening = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (m: SessionReply) => {
        if (m.type === 'notice') say(m.line);
        else if (m.type === 'ready') {
          stopListening();
          resolve(new SessionThread(worker, m.device, m.numLabels, state));
        } else if (m.type === 'failed') {
          stopListening();
          void worker.terminate();
          reject(fromThreadError(m.error));
        }
      };
      const onError = (e: Error) => {
        stopListening();
        void worker.terminate();
        reject(e);
      };
      const onExit = (code: number) => {
        stopListening();
        reject(new Error(`inference thread exited (code ${code}) before it was ready`));
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
  }

  get numLabels(): number {
    return this.numLabelsSeen;
  }

  get lost(): Error | undefined {
    return this.failed;
  }

  /** Batches packed into shared memory reach the thread without a copy (BatchPacker's `shared`). */
  readonly sharedBatches = true;

  run(batch: PaddedBatch): Promise<Float32Array> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.released) return Promise.reject(new Error('the session is released'));
    const id = this.nextId++;
    const types = batch.tokenTypeIds;
    const shared =
      batch.inputIds.buffer instanceof SharedArrayBuffer &&
      batch.attentionMask.buffer instanceof SharedArrayBuffer &&
      (types === undefined || types.buffer instanceof SharedArrayBuffer);
    // Shared buffers are read in place (the packer does not reuse them before this run returns);
    // others are copied, so the caller may reuse them at once.
    const inputIds = shared ? batch.inputIds : batch.inputIds.slice();
    const attentionMask = shared ? batch.attentionMask : batch.attentionMask.slice();
    const tokenTypeIds = types === undefined || shared ? types : types.slice();
    const req: SessionRequest = { type: 'run', id, rows: batch.rows, width: batch.width, inputIds, attentionMask, ...(tokenTypeIds ? { tokenTypeIds } : {}) };
    const result = new Promise<Float32Array>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    if (this.pending.size === 1) this.worker.ref();
    const transfer = shared ? [] : [inputIds.buffer as ArrayBuffer, attentionMask.buffer as ArrayBuffer, ...(tokenTypeIds ? [tokenTypeIds.buffer as ArrayBuffer] : [])];
    this.worker.postMessage(req, transfer);
    return result;
  }

  private onMessage(m: SessionReply): void {
    if (m.type === 'notice') process.stderr.write(`${m.line}\n`);
    if (m.type !== 'result') return;
    const waiter = this.pending.get(m.id);
    if (!waiter) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker.unref();
    this.numLabelsSeen = m.numLabels;
    if (m.error || !m.logits) waiter.reject(fromThreadError(m.error ?? { name: 'Error', message: 'no logits' }));
    else waiter.resolve(m.logits);
  }

  private fail(e: Error): void {
    this.failed ??= e;
    for (const w of this.pending.values()) w.reject(e);
    this.pending.clear();
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    process.off('exit', this.onProcessExit);
    // A thread that is gone sends nothing more: waiting for its answer would never end.
    if (this.exited) return;
    this.worker.ref();
    const done = new Promise<void>((resolve) => {
      this.worker.on('message', (m: SessionReply) => {
        if (m.type === 'released') resolve();
      });
      this.worker.once('exit', () => resolve());
    });
    this.worker.postMessage({ type: 'release' } satisfies SessionRequest);
    await done;
    // A thread that released its session and is sound waits for the process's next one.
    if (!this.exited && this.failed === undefined && keepIdle(this.worker, this.state)) return;
    await this.worker.terminate();
  }
}
