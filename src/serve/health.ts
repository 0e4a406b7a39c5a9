/**
 * Whether the service can answer: degraded once the model has failed `failuresToDegrade` requests in
 * a row (ModelRunError, as a broken export or a bad GPU gives), ready again at the next request the
 * model answers. A load balancer or Kubernetes stops sending requests to a pod whose /readyz says
 * 503, so no request might ever arrive to prove it well again: RETRY_MS after the last failure the
 * service says ready once more, the next request tests the model, and one more failure makes it
 * degraded again at once (the count is not reset by waiting).
 */
export class ModelHealth {
  /** How long a degraded service waits, without failures, before it lets traffic test the model again. */
  static readonly RETRY_MS = 30_000;
  private inARow = 0;
  private lastFailureAt = 0;
  private total = 0;

  constructor(
    readonly failuresToDegrade: number,
    private readonly now: () => number = Date.now,
  ) {}

  failure(): void {
    this.inARow++;
    this.total++;
    this.lastFailureAt = this.now();
  }

  success(): void {
    this.inARow = 0;
  }

  /** Model failures since the start. */
  get failures(): number {
    return this.total;
  }

  /** Requests the model failed since its last success. */
  get failuresInARow(): number {
    return this.inARow;
  }

  get degraded(): boolean {
    return this.inARow >= this.failuresToDegrade && this.now() - this.lastFailureAt < ModelHealth.RETRY_MS;
  }
}
