import type { NliProbs } from '../types.js';

/** A caller's `score` call: its results fill in as the pairs it waits on come back. */
export interface Call {
  results: NliProbs[];
  remaining: number;
  settled: boolean;
  resolve: (r: NliProbs[]) => void;
  reject: (e: unknown) => void;
}

/** One distinct pair on its way through the model, and who waits for it. */
export interface Job {
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

export const NO_IDS = new Int32Array(0);

export function newJob(premise: string, hypothesis: string, call: Call, index: number): Job {
  return { premise, hypothesis, p: NO_IDS, h: NO_IDS, keepP: 0, keepH: 0, length: 0, call, index, more: undefined };
}

export function deliver(call: Call, index: number, probs: NliProbs): void {
  call.results[index] = probs;
  if (--call.remaining === 0 && !call.settled) {
    call.settled = true;
    call.resolve(call.results);
  }
}

export function rejectCall(call: Call, e: unknown): void {
  if (call.settled) return;
  call.settled = true;
  call.reject(e);
}

/** The job's probabilities to every call waiting on it. */
export function deliverJob(job: Job, probs: NliProbs): void {
  deliver(job.call, job.index, probs);
  if (job.more) for (const w of job.more) deliver(w.call, w.index, probs);
}

/** The failure to every call waiting on the job: none of them is left waiting. */
export function rejectJob(job: Job, e: unknown): void {
  rejectCall(job.call, e);
  if (job.more) for (const w of job.more) rejectCall(w.call, e);
}
