import { describe, expect, it } from 'vitest';
import { expRounded, logRounded } from '../../src/metrics/text/libm.js';

// The double after and before x (x > 0), to measure differences in units in the last place.
const next = (x: number) => {
  const b = new Float64Array([x]);
  const i = new BigInt64Array(b.buffer);
  i[0] += 1n;
  return b[0];
};
const ulp = (x: number) => next(Math.abs(x)) - Math.abs(x);

describe('exp and log correctly rounded (libm.ts)', () => {
  it("give the constants JavaScript's spec fixes to the nearest double", () => {
    expect(expRounded(1)).toBe(Math.E);
    expect(logRounded(2)).toBe(Math.LN2);
    expect(logRounded(10)).toBe(Math.LN10);
    expect(logRounded(Math.E)).toBe(1);
    expect(expRounded(0)).toBe(1);
    expect(logRounded(1)).toBe(0);
    expect(expRounded(Math.LN2)).toBe(2);
  });

  it("stay within an ulp of V8's (which is within an ulp of the truth) over BLEU's range", () => {
    // Every point beyond an ulp is collected and the list checked once: 40,000 expect() calls cost
    // more CPU than the functions under test (vitest's matcher state is set up at each call).
    let differ = 0;
    const beyondUlp: string[] = [];
    for (let k = 0; k < 20000; k++) {
      const x = -12 + (k * 17.0) / 20000;
      const e = expRounded(x);
      if (!(Math.abs(e - Math.exp(x)) <= ulp(e))) beyondUlp.push(`exp(${x}) = ${e}, V8 ${Math.exp(x)}`);
      const y = 0.001 + k * 0.005;
      const l = logRounded(y);
      if (!(Math.abs(l - Math.log(y)) <= ulp(l))) beyondUlp.push(`log(${y}) = ${l}, V8 ${Math.log(y)}`);
      if (e !== Math.exp(x) || l !== Math.log(y)) differ++;
    }
    expect(beyondUlp).toEqual([]);
    // V8's last bit is off now and then: the two are not the same function.
    expect(differ).toBeGreaterThan(100);
  });

  it('the edges: 0, underflow, overflow, non-positive and non-finite arguments', () => {
    expect(expRounded(-800)).toBe(0);
    expect(expRounded(710)).toBe(Infinity);
    expect(Math.abs(expRounded(-700) / Math.exp(-700) - 1)).toBeLessThan(1e-15);
    expect(logRounded(0)).toBe(-Infinity);
    expect(logRounded(-1)).toBeNaN();
    expect(logRounded(Infinity)).toBe(Infinity);
    expect(expRounded(NaN)).toBeNaN();
  });
});
