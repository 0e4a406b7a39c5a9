// NumPy's default_rng reproduced: every expected value below was made by NumPy itself
// (scripts/significance-fixtures.py writes test/fixtures/significance/pcg64.json; the draws are the
// same under NumPy 1.24 and 2.4, the means are NumPy 1.24's).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { seededRows } from '../src/metrics/significance/draws.js';
import { numpyMean } from '../src/metrics/significance/numpy-sum.js';
import { NumpyGenerator, Pcg64, SeedSequence, type Seed } from '../src/metrics/significance/pcg64.js';
import { REPO_ROOT } from './helpers/shared.js';

interface Pcg64Fixture {
  numpy: string;
  cases: {
    seed: string | string[];
    state: number[];
    raw: string[];
    choice: { n: number; rows: number; choice: number[] }[];
    bools: { size: number; bits: string }[];
    arThenChoice: { trials: number; n: number; samples: number; bits: string; choice: number[] }[];
  }[];
  means: { n: number; mean: number }[];
}

const fixture = JSON.parse(readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'significance', 'pcg64.json'), 'utf8')) as Pcg64Fixture;

/** The fixture's seed as NumPy took it: an integer (as bigint when past 2^53) or a list of them. */
function seedOf(s: string | string[]): Seed {
  const one = (v: string) => (BigInt(v) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : BigInt(v));
  return Array.isArray(s) ? s.map(one) : one(s);
}

/** The formula of scripts/significance-fixtures.py's mean_value (exact in float64). */
const meanValue = (i: number) => (((i * 7919) % 10007) - 5003) * 2 ** (((i * 31) % 41) - 20);

describe('NumPy default_rng (PCG64 seeded by SeedSequence)', () => {
  it('the fixture covers the seeds and sizes it should (a parsing slip would pass everything)', () => {
    expect(fixture.cases.length).toBeGreaterThanOrEqual(10);
    expect(fixture.cases.flatMap((c) => c.choice.map((d) => d.n))).toContain(2 ** 32 - 1);
  });

  for (const c of fixture.cases) {
    const seed = seedOf(c.seed);
    const label = Array.isArray(c.seed) ? `[${c.seed.join(', ')}]` : c.seed;

    it(`seed ${label}: SeedSequence state words and random_raw`, () => {
      expect(Array.from(new SeedSequence(seed).generateState(8))).toEqual(c.state);
      const bg = new Pcg64(seed);
      expect(c.raw.map(() => bg.nextUint64().toString())).toEqual(c.raw);
    });

    it(`seed ${label}: choice(n, size=(rows, cols), replace=True) for n from 1 to 2^32 - 1`, () => {
      for (const d of c.choice) {
        const got = new NumpyGenerator(seed).choice(d.n, new Float64Array(d.choice.length));
        expect(Array.from(got), `n = ${d.n}`).toEqual(d.choice);
      }
    });

    it(`seed ${label}: integers(2, dtype=bool), one bit of a 32-bit draw per value`, () => {
      for (const d of c.bools) {
        const bits = new NumpyGenerator(seed).bools(new Uint8Array(d.size));
        expect(Array.from(bits).join(''), `size ${d.size}`).toBe(d.bits);
      }
    });

    it(`seed ${label}: bools then choice from one generator (a buffered 32-bit half carries over)`, () => {
      for (const d of c.arThenChoice) {
        const gen = new NumpyGenerator(seed);
        expect(Array.from(gen.bools(new Uint8Array(d.trials * d.n))).join('')).toBe(d.bits);
        expect(Array.from(gen.choice(d.n, new Int32Array(d.samples * d.n)))).toEqual(d.choice);
      }
    });
  }

  it('a stream of bools read row by row equals one fill', () => {
    const whole = new NumpyGenerator(3).bools(new Uint8Array(3 * 45));
    const stream = new NumpyGenerator(3).boolStream();
    const rows = Array.from({ length: 3 }, () => Array.from({ length: 45 }, () => stream.next()));
    expect(rows.flat()).toEqual(Array.from(whole));
  });

  it('seeds NumPy refuses are refused', () => {
    expect(() => new SeedSequence(-1)).toThrow(/non-negative/);
    expect(() => new SeedSequence(2 ** 53 + 2)).toThrow(/safe integer/);
    expect(() => new NumpyGenerator(1).choice(0, new Int32Array(1))).toThrow(/high/);
  });

  it('no seed draws fresh entropy (two generators differ)', () => {
    const a = new Pcg64(null).nextUint64();
    const b = new Pcg64(null).nextUint64();
    expect(a).not.toBe(b);
  });
});

describe(`np.mean (NumPy ${fixture.numpy}: pairwise in 8192-value chunks)`, () => {
  for (const m of fixture.means) {
    it(`n = ${m.n}: bit for bit`, () => {
      const values = Float64Array.from({ length: m.n }, (_, i) => meanValue(i));
      expect(numpyMean(values)).toBe(m.mean);
    });
  }
});

describe("a bootstrap's rows from a seed (draws.ts)", () => {
  /** Every row of seededRows(seed, n, samples), read as a bootstrap reads them. */
  const readAll = (seed: Exclude<Seed, null>, n: number, samples: number): number[] => {
    const rows = seededRows(seed, n, samples);
    const idx = new Int32Array(n);
    const out: number[] = [];
    for (let t = 0; t < samples; t++) {
      rows.next(idx);
      out.push(...idx);
    }
    return out;
  };
  const numpy = (seed: Exclude<Seed, null>, n: number, samples: number) => Array.from(new NumpyGenerator(seed).choice(n, new Int32Array(n * samples)));

  it('are choice(n, size=(samples, n)) whether drawn or read from the kept table, and another seed, n or count is not served from it', () => {
    // The first read draws and keeps the table, the second of the same (seed, n, samples) reads it.
    for (const [seed, n, samples] of [[12345, 37, 20], [12345, 37, 20], [12345, 38, 20], [12345, 37, 21], [7, 37, 20], [[7, 1], 37, 20], [12345, 1, 3], [12345, 70_000, 2], [12345, 70_000, 2]] as const) {
      expect(readAll(seed as Exclude<Seed, null>, n, samples), `seed ${String(seed)}, n ${n}, ${samples} rows`).toEqual(numpy(seed as Exclude<Seed, null>, n, samples));
    }
  });

  it('a bootstrap cut short keeps nothing: the next one from the seed still gets every row', () => {
    const rows = seededRows(99, 11, 5);
    rows.next(new Int32Array(11));
    expect(readAll(99, 11, 5)).toEqual(numpy(99, 11, 5));
    expect(readAll(99, 11, 5)).toEqual(numpy(99, 11, 5));
  });
});
