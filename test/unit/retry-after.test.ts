import { afterEach, describe, expect, it, vi } from 'vitest';
import { OverloadedError, PairAdmission } from '../../src/serve/admission.js';
import { ServeMetrics } from '../../src/serve/metrics.js';

// serve's Retry-After (issue 21): the seconds until the pending pairs would be answered at the
// throughput measured over the model's busy time, at least 1. The clock is faked (Date only) so the
// arithmetic is exact: no timing is measured here.
const stats = { requested: 0, issued: 0, cacheHits: 0, batches: 0, tokens: 0, paddedTokens: 0, oomSplits: 0, truncated: 0, cacheEvictions: 0, textsTokenizedHere: 0 };
const metrics = () => new ServeMetrics({ stats: () => stats, queuedPairs: () => 0, reservedPairs: () => 0 });
const at = (ms: number) => vi.setSystemTime(ms);

function retryAfter(admission: PairAdmission, pairs: number): number {
  try {
    admission.reserve(pairs);
  } catch (e) {
    expect(e).toBeInstanceOf(OverloadedError);
    return (e as OverloadedError).retryAfterSeconds;
  }
  throw new Error('expected a 503');
}

describe('Retry-After from the queue and the measured throughput', () => {
  afterEach(() => vi.useRealTimers());

  it('a burst after a long idle spell: the rate of its batches, not diluted by the idle seconds (was: 60 s for a backlog that clears in under a second)', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const m = metrics();
    // 64 pairs in 4 batches of 16, 80 ms each, 10 s after the server started.
    at(10_000);
    m.onRunnerProgress(16, 64); // the first batch after idle: when it started is not known, so it is not timed
    at(10_080);
    m.onRunnerProgress(32, 64);
    at(10_160);
    m.onRunnerProgress(48, 64);
    at(10_240);
    m.onRunnerProgress(64, 64);
    expect(m.busyPairsPerSecond()).toBe(200); // 48 pairs in 240 ms
    const admission = new PairAdmission(1000, () => m.busyPairsPerSecond());
    admission.reserve(900);
    expect(retryAfter(admission, 200)).toBe(5); // 900 pending at 200 pairs/s: 4.5 s
    // Nine idle seconds later the rate is what the model does when it works.
    at(19_240);
    expect(m.busyPairsPerSecond()).toBe(200);
    expect(retryAfter(admission, 200)).toBe(5);
  });

  it('at least 1 s, and 1 s before anything is measured', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const m = metrics();
    const admission = new PairAdmission(100, () => m.busyPairsPerSecond());
    admission.reserve(90);
    expect(m.busyPairsPerSecond()).toBeUndefined();
    expect(retryAfter(admission, 20)).toBe(1);
    at(1_000);
    m.onRunnerProgress(10, 90);
    at(1_010);
    m.onRunnerProgress(20, 90); // 10 pairs in 10 ms: 1000 pairs/s
    expect(retryAfter(admission, 20)).toBe(1);
  });

  it('the rate follows the latest ten seconds of busy time', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const m = metrics();
    let t = 0;
    let done = 0;
    const batch = (pairs: number, ms: number) => {
      t += ms;
      done += pairs;
      at(t);
      m.onRunnerProgress(done, done + 1);
    };
    batch(1, 0); // starts the clock
    for (let i = 0; i < 20; i++) batch(10, 1_000); // 10 pairs/s for 20 s
    expect(m.busyPairsPerSecond()).toBe(10);
    for (let i = 0; i < 20; i++) batch(40, 1_000); // then 40 pairs/s for 20 s: the old batches have left the window
    expect(m.busyPairsPerSecond()).toBe(40);
  });
});
