import { takeBatch, type BatchLimits } from '../batcher.js';
import type { Job } from './calls.js';

interface Segment {
  jobs: Job[];
  head: number;
  sorted: boolean;
  /** Later submissions may join (sorted in with what is left). */
  open: boolean;
}

/**
 * Pairs waiting for a batch, in segments taken one after another: pairs submitted together (in one
 * tick, by any caller) share the open segment at the end and are sorted by length there; a call
 * made with `separate` gets a segment of its own, batched after those before it. Each batch is the
 * next run of similar-length rows within the limits.
 */
export class BatchPool {
  private readonly segments: Segment[] = [];

  constructor(private readonly limits: BatchLimits) {}

  add(jobs: Job[], separate: boolean): void {
    let segment = this.segments[this.segments.length - 1];
    if (separate || segment === undefined || !segment.open) {
      segment = { jobs: [], head: 0, sorted: true, open: !separate };
      this.segments.push(segment);
    }
    for (const job of jobs) segment.jobs.push(job);
    segment.sorted = false;
  }

  /** The next batch, or undefined when no pair waits. */
  take(): Job[] | undefined {
    for (;;) {
      const segment = this.segments[0];
      if (segment === undefined) return undefined;
      if (segment.head === segment.jobs.length) {
        // Used up: an open segment at the end stays for the next arrivals.
        if (segment.open && this.segments.length === 1) return undefined;
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
      return batch;
    }
  }
}
