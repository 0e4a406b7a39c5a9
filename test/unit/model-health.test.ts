import { describe, expect, it } from 'vitest';
import { ModelHealth } from '../../src/serve/health.js';

// The state behind /readyz with a hand-moved clock (a fake of time only; the rule is real).
describe('ModelHealth: degraded after N model failures in a row, ready again after a success or a quiet RETRY_MS', () => {
  const clock = () => {
    let t = 1_000_000;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  };

  it('N-1 failures keep it ready; the Nth degrades it; one success mends it', () => {
    const c = clock();
    const h = new ModelHealth(3, c.now);
    h.failure();
    h.failure();
    expect(h.degraded).toBe(false);
    h.success();
    h.failure();
    h.failure();
    expect(h.degraded).toBe(false); // the success reset the run
    h.failure();
    expect(h.degraded).toBe(true);
    expect(h.failures).toBe(5);
    h.success();
    expect(h.degraded).toBe(false);
    expect(h.failuresInARow).toBe(0);
  });

  it('a degraded service says ready again RETRY_MS after its last failure, and one more failure degrades it at once', () => {
    const c = clock();
    const h = new ModelHealth(2, c.now);
    h.failure();
    h.failure();
    c.advance(ModelHealth.RETRY_MS - 1);
    expect(h.degraded).toBe(true);
    c.advance(1);
    expect(h.degraded).toBe(false);
    h.failure();
    expect(h.degraded).toBe(true);
  });
});
