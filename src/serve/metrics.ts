import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { NliRunnerStats } from '../nli/runner.js';
import type { ModelHealth } from './health.js';

/** Completed pairs over the last WINDOW_MS of wall time, for the pairs/s gauge. */
const WINDOW_MS = 10_000;
/** Busy time the throughput behind Retry-After is measured over (the latest batches). */
const BUSY_WINDOW_MS = 10_000;

/**
 * The service's Prometheus metrics (GET /metrics): requests and latencies per route, the runner's
 * batch sizes, queue depth, cache hits and throughput. Runner counters are read when scraped.
 */
export class ServeMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'status'>;
  readonly latency: Histogram<'route'>;
  readonly batchSize: Histogram;
  private readonly completions: { at: number; pairs: number }[] = [];
  private lastDone = 0;
  /** Batches timed back to back while the runner had more to do: pairs and milliseconds each. */
  private readonly busyBatches: { pairs: number; ms: number }[] = [];
  private busyMs = 0;
  /** When the last batch finished while more pairs were waiting (undefined: the runner went idle). */
  private busySince: number | undefined;

  private inFlight: () => number = () => 0;
  private health: ModelHealth | undefined;

  constructor(sources: { stats: () => NliRunnerStats; queuedPairs: () => number; reservedPairs: () => number }) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'todeval_' });
    this.requests = new Counter({ name: 'todeval_http_requests_total', help: 'HTTP requests answered, by route and status code', labelNames: ['route', 'status'], registers });
    this.latency = new Histogram({
      name: 'todeval_http_request_duration_seconds',
      help: 'time from request to response, by route',
      labelNames: ['route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.batchSize = new Histogram({ name: 'todeval_nli_batch_size', help: 'pairs per forward pass of the NLI model', buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512], registers });
    const inFlight: Gauge = new Gauge({ name: 'todeval_http_requests_in_flight', help: 'requests received and not yet answered', registers, collect: () => inFlight.set(this.inFlight()) });
    new Gauge({ name: 'todeval_nli_queue_pairs', help: 'pairs submitted to the NLI runner and not yet computed (queue depth)', registers, collect() { this.set(sources.queuedPairs()); } });
    new Gauge({ name: 'todeval_admission_reserved_pairs', help: 'pairs reserved by admitted requests (bounded by --max-pending-pairs)', registers, collect() { this.set(sources.reservedPairs()); } });
    const health = () => this.health;
    new Gauge({ name: 'todeval_ready', help: '1 while the service is ready (/readyz 200), 0 while degraded by model failures', registers, collect() { this.set(health()?.degraded ? 0 : 1); } });
    let failuresSeen = 0;
    new Counter({
      name: 'todeval_model_failures_total',
      help: 'requests the model failed (ModelRunError: answered 500)',
      registers,
      collect() {
        const now = health()?.failures ?? 0;
        if (now > failuresSeen) this.inc(now - failuresSeen);
        failuresSeen = now;
      },
    });
    const rate = () => this.pairsPerSecond();
    new Gauge({ name: 'todeval_nli_pairs_per_second', help: `pairs computed per second over the last ${WINDOW_MS / 1000} s`, registers, collect() { this.set(rate()); } });
    const fromStats = (name: string, help: string, read: (s: NliRunnerStats) => number) => {
      let last = 0;
      new Counter({
        name,
        help,
        registers,
        collect() {
          const now = read(sources.stats());
          if (now > last) this.inc(now - last);
          last = now;
        },
      });
    };
    fromStats('todeval_nli_pairs_requested_total', 'pairs asked of the NLI runner', (s) => s.requested);
    fromStats('todeval_nli_pairs_computed_total', 'pairs run through the model', (s) => s.issued);
    fromStats('todeval_nli_cache_hits_total', 'pairs answered from the pair cache or shared with an identical pair in flight', (s) => s.cacheHits);
    fromStats('todeval_nli_batches_total', 'forward passes of the NLI model', (s) => s.batches);
    fromStats('todeval_tokenizer_texts_event_loop_total', 'texts tokenized on the event loop (--tokenizer-threads 0) rather than on a tokenizer thread', (s) => s.textsTokenizedHere);
    fromStats('todeval_nli_cache_evictions_total', 'pairs dropped from the in-memory pair cache to stay within --max-cache-bytes', (s) => s.cacheEvictions);
  }

  setInFlight(read: () => number): void {
    this.inFlight = read;
  }

  setHealth(health: ModelHealth): void {
    this.health = health;
  }

  /**
   * The runner's progress callback: `done` pairs computed so far out of `issued`. The runner runs one
   * batch at a time, so while pairs are waiting the time from one batch's end to the next is that
   * next batch's compute time: those intervals are the measured throughput. Time the runner sat
   * idle never counts (a burst answered in 0.5 s after 9 idle seconds is 0.5 s of work).
   */
  onRunnerProgress(done: number, issued = done): void {
    const n = done - this.lastDone;
    this.lastDone = done;
    if (n <= 0) return;
    this.batchSize.observe(n);
    const now = Date.now();
    this.completions.push({ at: now, pairs: n });
    while (this.completions.length > 0 && this.completions[0].at < now - WINDOW_MS) this.completions.shift();
    if (this.busySince !== undefined) {
      const ms = now - this.busySince;
      this.busyBatches.push({ pairs: n, ms });
      this.busyMs += ms;
      while (this.busyBatches.length > 1 && this.busyMs - this.busyBatches[0].ms >= BUSY_WINDOW_MS) this.busyMs -= this.busyBatches.shift()!.ms;
    }
    // The first batch after idle has no known start: it only starts the clock for the next.
    this.busySince = issued > done ? now : undefined;
  }

  /** Pairs the model answers per second of work, over its latest batches; undefined before two batches ran back to back. */
  busyPairsPerSecond(): number | undefined {
    const pairs = this.busyBatches.reduce((n, b) => n + b.pairs, 0);
    if (pairs === 0) return undefined;
    return (pairs * 1000) / Math.max(1, this.busyMs);
  }

  get pairsDone(): number {
    return this.lastDone;
  }

  pairsPerSecond(): number {
    const since = Date.now() - WINDOW_MS;
    let n = 0;
    for (const c of this.completions) if (c.at >= since) n += c.pairs;
    return n / (WINDOW_MS / 1000);
  }
}
