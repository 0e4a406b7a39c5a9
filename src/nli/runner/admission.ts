import { InputError } from '../../util/errors.js';
import { stageClock } from '../../util/stage-clock.js';
import type { PairCache } from '../pair-cache.js';
import { PairMap } from '../pair-map.js';
import type { TokenizerPool } from '../tokenizer-pool.js';
import { keptHypothesis, keptPremise, type PairTokenizer } from '../tokenizer.js';
import type { NliPair, NliProbs } from '../types.js';
import { deliverJob, newJob, rejectCall, rejectJob, type Call, type Job } from './calls.js';
import type { NliRunnerStats as RunnerCounters } from './stats.js';

interface TokenizingGroup {
  jobs: Job[];
  separate: boolean;
  ready: boolean;
  failed?: unknown;
}

export interface AdmissionParts {
  tokenizer: PairTokenizer;
  tokenizerPool?: TokenizerPool;
  cache: PairCache;
  counters: RunnerCounters;
  /** Where tokenized jobs go to wait for a batch, in submission order. */
  enqueue: (jobs: Job[], separate: boolean) => void;
}

/**
 * From a caller's pairs to jobs waiting for a batch: answers from the cache, joins a pair already
 * in flight, tokenizes the rest (on this thread, or on the tokenizer threads with each call's pairs
 * let in together and in call order) and measures each row. It owns the in-flight pairs, so every
 * way a job ends goes through here: `complete` or `fail`, each of which reaches every call waiting
 * on the job. A failure while tokenizing fails the jobs it concerns, never the line behind them.
 */
export class Admission {
  private readonly inflight = new PairMap<Job>();
  /** Calls whose new pairs wait for the tokenizer threads, in the order they were made. */
  private readonly tokenizing: TokenizingGroup[] = [];
  private tokenizingDone: Promise<void> = Promise.resolve();

  constructor(private readonly parts: AdmissionParts) {}

  /** The call's promise; it settles whatever happens to its pairs. */
  submit(pairs: NliPair[], separate: boolean): Promise<NliProbs[]> {
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
    const { cache, counters } = this.parts;
    try {
      counters.requested += pairs.length;
      for (let i = 0; i < pairs.length; i++) {
        const { premise, hypothesis } = pairs[i];
        const cached = cache.get(premise, hypothesis);
        if (cached !== undefined) {
          counters.cacheHits++;
          call.results[i] = cached;
          continue;
        }
        call.remaining++;
        const running = this.inflight.get(premise, hypothesis);
        if (running !== undefined) {
          counters.cacheHits++;
          (running.more ??= []).push({ call, index: i });
          continue;
        }
        const job = newJob(premise, hypothesis, call, i);
        this.inflight.set(premise, hypothesis, job);
        fresh.push(job);
      }
      counters.issued += fresh.length;
      if (call.remaining === 0) {
        call.settled = true;
        call.resolve(call.results);
      }
      if (fresh.length > 0) this.tokenize(fresh, separate);
    } catch (e) {
      // Whatever this call put in flight leaves with it: no later call may wait on it.
      this.fail(fresh, e);
      rejectCall(call, e);
    }
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
    const { tokenizer, tokenizerPool: pool } = this.parts;
    if (pool) {
      const missing: string[] = [];
      for (const job of jobs) {
        if (tokenizer.known(job.premise) === undefined) missing.push(job.premise);
        if (tokenizer.known(job.hypothesis) === undefined) missing.push(job.hypothesis);
      }
      if (missing.length > 0 || this.tokenizing.length > 0) {
        const group: TokenizingGroup = { jobs, separate, ready: false };
        this.tokenizing.push(group);
        const encoded = encodeOn(pool, missing).then(
          () => {
            group.ready = true;
          },
          (e: unknown) => {
            group.ready = true;
            group.failed = e;
          },
        );
        // Neither side of this chain rejects, so one group's failure never holds up the groups after it.
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

  /** Measure each job's row and hand the jobs on; a job whose text cannot be tokenized fails alone. */
  private admit(jobs: Job[], separate: boolean): void {
    const { tokenizer, counters } = this.parts;
    const max = tokenizer.maxLength;
    const specials = tokenizer.pairEncoding.specials;
    let admitted = jobs;
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i];
      try {
        const p = tokenizer.ids(job.premise);
        const h = tokenizer.ids(job.hypothesis);
        const keepP = keptPremise(p.length, h.length, max, specials);
        const keepH = keptHypothesis(h.length, keepP, max, specials);
        if (keepP < p.length || keepH < h.length) counters.truncated++;
        job.p = p;
        job.h = h;
        job.keepP = keepP;
        job.keepH = keepH;
        job.length = keepP + keepH + specials;
        if (admitted !== jobs) admitted.push(job);
      } catch (e) {
        if (admitted === jobs) admitted = jobs.slice(0, i);
        this.fail([job], e);
      }
    }
    this.parts.enqueue(admitted, separate);
  }

  /** A batch's results: cached, out of flight, and to every call waiting on each pair. */
  complete(batch: Job[], probs: NliProbs[]): void {
    for (let i = 0; i < batch.length; i++) {
      const job = batch[i];
      this.parts.cache.set(job.premise, job.hypothesis, probs[i]);
      this.inflight.delete(job.premise, job.hypothesis);
      deliverJob(job, probs[i]);
    }
  }

  /** The jobs leave the flight (a later call asks the model afresh) and their callers get `e`. */
  fail(jobs: Job[], e: unknown): void {
    for (const job of jobs) {
      this.inflight.delete(job.premise, job.hypothesis);
      rejectJob(job, e);
    }
  }

  /**
   * Texts the caller will submit soon (a chunk's turns, references and context premises): encoded
   * now, by the tokenizer threads when there are some (this thread carries on meanwhile), else here
   * (a caller that prefetches while the model works on earlier pairs gets the encoding done then).
   * A text that fails here fails again, with its call, when it is needed.
   */
  prefetch(texts: Iterable<string>): void {
    const { tokenizer, tokenizerPool: pool } = this.parts;
    if (!pool) {
      for (const t of texts) {
        try {
          tokenizer.ids(t);
        } catch {
          // resurfaces in the call that needs the text
        }
      }
      return;
    }
    encodeOn(pool, texts).catch(() => undefined);
  }

  /** Resolves once every call made so far has its pairs admitted or failed; never rejects. */
  settled(): Promise<void> {
    return this.tokenizingDone;
  }
}

/** The pool's encode as a promise, a synchronous throw included. */
function encodeOn(pool: TokenizerPool, texts: Iterable<string>): Promise<void> {
  try {
    return pool.encode(texts);
  } catch (e) {
    return Promise.reject(e);
  }
}
