/** The request would push the pending-pairs queue past its bound: answer 503 with Retry-After. */
export class OverloadedError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'OverloadedError';
  }
}

/** The request alone needs more pairs than the queue may ever hold: no retry can succeed (413). */
export class TooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TooLargeError';
  }
}

/**
 * Bounds the pairs waiting for the model across all requests. Each request reserves an upper bound
 * of the pairs it may submit before it submits any, and gives them back when its work is done (not
 * when it times out: the pairs are still in the runner's queue then). Reserving up front means the
 * bound holds however many requests arrive in the same tick.
 */
export class PairAdmission {
  private reserved = 0;

  constructor(
    readonly maxPending: number,
    /**
     * Pairs the model answers per second of work, for Retry-After, as the service measures it
     * (ServeMetrics.busyPairsPerSecond); undefined before anything is measured.
     */
    private readonly pairsPerSecond: () => number | undefined,
  ) {}

  get pending(): number {
    return this.reserved;
  }

  /** Reserve `pairs`; returns the release function, or throws OverloadedError / TooLargeError. */
  reserve(pairs: number): () => void {
    if (pairs > this.maxPending) {
      throw new TooLargeError(`this request needs up to ${pairs} NLI pairs, more than --max-pending-pairs ${this.maxPending}: split it`);
    }
    if (this.reserved + pairs > this.maxPending) {
      const seconds = this.retryAfterSeconds();
      throw new OverloadedError(`${this.reserved} NLI pairs are pending (at most ${this.maxPending}); retry in ${seconds} s`, seconds);
    }
    this.reserved += pairs;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reserved -= pairs;
    };
  }

  /**
   * Retry-After: the seconds until the pairs pending now would be answered at the measured
   * throughput, at least 1 (HTTP counts whole seconds). Before anything is measured, 1: the client
   * then asks again soon and gets an estimate from the batches run meanwhile.
   */
  retryAfterSeconds(): number {
    const rate = this.pairsPerSecond();
    if (rate === undefined || !(rate > 0)) return 1;
    return Math.max(1, Math.ceil(this.reserved / rate));
  }
}
