import type { Worker } from 'node:worker_threads';
import { capPairText } from './limits.js';
import type { PairTokenizer } from './tokenizer.js';
import { startWorker } from './worker-entry.js';

export interface TokenizerWorkerData {
  tokenizerJson: object;
  tokenizerConfig: object;
  /** Ids past these are never needed (the pair's model maximum): encoding may stop there. */
  maxTokens: number;
}

export interface EncodeRequest {
  id: number;
  texts: string[];
}

export interface EncodeReply {
  id: number;
  lengths?: Int32Array;
  ids?: Int32Array;
  error?: string;
  ready?: boolean;
}

interface Request {
  texts: string[];
  resolve: () => void;
  reject: (e: Error) => void;
}

/** Texts per message: large enough that posting costs little per text, small enough to spread. */
const TEXTS_PER_MESSAGE = 256;

/**
 * Worker threads that tokenize texts for a PairTokenizer, whose memo receives the ids: the main
 * thread then finds every side of a pair already encoded. Requests are split into messages of a
 * few hundred texts handed to the least busy thread, so several threads share a large request and
 * a request made ahead of need (prefetch) tokenizes while the main thread does other work, such as
 * waiting for the model.
 */
export class TokenizerPool {
  private readonly workers: { worker: Worker; busy: number }[] = [];
  private readonly requests = new Map<number, Request>();
  /** Texts sent and not yet answered, with the promise of the message that carries them. */
  private readonly pending = new Map<string, Promise<void>>();
  private nextId = 0;
  private failed: Error | undefined;
  private closed = false;

  private constructor(private readonly tokenizer: PairTokenizer) {}

  static async start(tokenizer: PairTokenizer, threads: number): Promise<TokenizerPool> {
    const pool = new TokenizerPool(tokenizer);
    const data: TokenizerWorkerData = { ...tokenizer.source, maxTokens: tokenizer.maxLength };
    const started = Array.from({ length: threads }, () => {
      const worker = startWorker(import.meta.url, 'tokenizer-worker', { workerData: data });
      const slot = { worker, busy: 0 };
      pool.workers.push(slot);
      return new Promise<void>((resolve, reject) => {
        let ready = false;
        worker.once('error', reject);
        // An exit before `ready` with no error event (the thread ended itself) would otherwise leave this pending.
        worker.once('exit', (code) => {
          if (!ready) reject(new Error(`tokenizer thread exited (code ${code}) before it was ready`));
        });
        worker.on('message', (m: EncodeReply) => {
          if (m.ready) {
            ready = true;
            worker.off('error', reject);
            worker.on('error', (e) => pool.fail(e));
            // Idle tokenizer threads never keep a finished command alive (ref'd while busy).
            worker.unref();
            resolve();
            return;
          }
          if (--slot.busy === 0) worker.unref();
          pool.answer(m);
        });
        worker.on('exit', (code) => {
          if (!pool.closed) pool.fail(new Error(`tokenizer thread exited (code ${code})`));
        });
      });
    });
    try {
      await Promise.all(started);
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  get threads(): number {
    return this.workers.length;
  }

  /**
   * Resolves once every text has ids in the tokenizer's memo: texts already there or already on
   * their way cost nothing more; the rest are sent to the threads.
   */
  encode(texts: Iterable<string>): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new Error('tokenizer pool is closed'));
    const waits = new Set<Promise<void>>();
    let batch: string[] = [];
    for (const side of texts) {
      const text = capPairText(side);
      if (this.tokenizer.known(text) !== undefined) continue;
      const on = this.pending.get(text);
      if (on) {
        waits.add(on);
        continue;
      }
      batch.push(text);
      // Marked before sending, so a repeat within this call is not sent twice.
      this.pending.set(text, PLACEHOLDER);
      if (batch.length === TEXTS_PER_MESSAGE) {
        waits.add(this.send(batch));
        batch = [];
      }
    }
    if (batch.length > 0) waits.add(this.send(batch));
    waits.delete(PLACEHOLDER);
    if (waits.size === 0) return Promise.resolve();
    return Promise.all(waits).then(() => undefined);
  }

  private send(texts: string[]): Promise<void> {
    const id = this.nextId++;
    const promise = new Promise<void>((resolve, reject) => this.requests.set(id, { texts, resolve, reject }));
    for (const t of texts) this.pending.set(t, promise);
    let slot = this.workers[0];
    for (const w of this.workers) if (w.busy < slot.busy) slot = w;
    if (slot.busy++ === 0) slot.worker.ref();
    const msg: EncodeRequest = { id, texts };
    slot.worker.postMessage(msg);
    return promise;
  }

  private answer(m: EncodeReply): void {
    const req = this.requests.get(m.id);
    if (!req) return;
    this.requests.delete(m.id);
    for (const t of req.texts) this.pending.delete(t);
    if (m.error !== undefined || !m.lengths || !m.ids) {
      req.reject(new Error(`tokenizer thread failed: ${m.error ?? 'no ids'}`));
      return;
    }
    let at = 0;
    for (let i = 0; i < req.texts.length; i++) {
      const n = m.lengths[i];
      this.tokenizer.remember(req.texts[i], m.ids.subarray(at, at + n));
      at += n;
    }
    req.resolve();
  }

  private fail(e: Error): void {
    this.failed ??= e;
    for (const req of this.requests.values()) req.reject(e);
    this.requests.clear();
    this.pending.clear();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const req of this.requests.values()) req.reject(new Error('tokenizer pool is closed'));
    this.requests.clear();
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}

/** Marks a text taken by the message being filled; never awaited. */
const PLACEHOLDER: Promise<void> = Promise.resolve();
