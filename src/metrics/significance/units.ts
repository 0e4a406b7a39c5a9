/**
 * How few resampling units are too few. Two limits, both from counting rather than from a run:
 *
 * - Randomization: n paired units have 2^n swap patterns, equally likely under the null
 *   hypothesis, and a pattern and its complement give the same |difference|; no two-sided p-value
 *   of n units can be below 2 / 2^n (randomizationFloor). With 2^n no more than the trials asked
 *   for, the test enumerates every pattern instead of drawing (paired.ts).
 * - Bootstrap: a percentile interval from n units is too narrow, because the bootstrap's spread is
 *   the sample's spread with divisor n. For normal data the nominal 95% interval
 *   mean ± z·s·√((n-1)/n)/√n covers the true mean with probability P(|T_{n-1}| ≤ z·√((n-1)/n)),
 *   T Student's t: 75% for 3 units, 90% for 10, 92.6% for 18, 94.2% for 50. The bootstrap is
 *   called too weak (lowUnits) while its miss rate is more than 1.5 times the nominal one (below
 *   92.5% coverage for a 95% interval): fewer than MIN_BOOTSTRAP_UNITS = 18 units
 *   (docs/significance.md has the table and the argument).
 */

/** The smallest two-sided p-value a test on n paired units can give: 2 of the 2^n swap patterns. */
export function randomizationFloor(units: number): number {
  return units >= 1075 ? 0 : 2 ** (1 - units);
}

/**
 * P(|T| ≤ t) for Student's t with `dof` degrees of freedom, by the finite series for integer
 * degrees of freedom (Abramowitz & Stegun 26.7.3 and 26.7.4): exact up to rounding, no tables.
 */
export function studentTCentral(t: number, dof: number): number {
  if (!Number.isInteger(dof) || dof < 1) throw new RangeError('degrees of freedom must be a positive integer');
  const theta = Math.atan(t / Math.sqrt(dof));
  const c2 = Math.cos(theta) ** 2;
  const s = Math.sin(theta);
  if (dof % 2 === 0) {
    // sin θ (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + ... up to cos^(ν-2)θ)
    let term = 1;
    let sum = 1;
    for (let k = 2; k <= dof - 2; k += 2) {
      term *= ((k - 1) / k) * c2;
      sum += term;
    }
    return s * sum;
  }
  if (dof === 1) return (2 / Math.PI) * theta;
  // 2/π (θ + sin θ cos θ (1 + 2/3 cos²θ + 2·4/(3·5) cos⁴θ + ... up to cos^(ν-3)θ))
  let term = 1;
  let sum = 1;
  for (let k = 2; k <= dof - 3; k += 2) {
    term *= (k / (k + 1)) * c2;
    sum += term;
  }
  return (2 / Math.PI) * (theta + s * Math.cos(theta) * sum);
}

/** z of a two-sided 95% interval (the bootstrap's 2.5% and 97.5% points, sacreBLEU's n//40). */
const Z95 = 1.959963984540054;

/** Coverage of the nominal 95% bootstrap percentile interval of a mean of n normal units (see above). */
export function bootstrapCoverage95(units: number): number {
  if (units < 2) return 0;
  return studentTCentral(Z95 * Math.sqrt((units - 1) / units), units - 1);
}

/** How many times the nominal miss rate (5%) a bootstrap interval may miss before it is flagged. */
const MISS_RATIO = 1.5;

/** The fewest units whose 95% bootstrap interval misses at most 1.5 times as often as it says: 18. */
export const MIN_BOOTSTRAP_UNITS: number = (() => {
  let n = 2;
  while (1 - bootstrapCoverage95(n) > MISS_RATIO * 0.05) n++;
  return n;
})();

/** Whether a bootstrap over `units` units is too weak for its 95% interval and p-value. */
export function tooFewForBootstrap(units: number): boolean {
  return units < MIN_BOOTSTRAP_UNITS;
}

/**
 * `{ lowUnits: true }` to spread into a result whose bootstrap ran over too few units, else no key
 * at all. `bootstrapped` false (no bootstrap was run) never marks it.
 */
export function lowUnitsField(units: number, bootstrapped = true): { lowUnits?: true } {
  return bootstrapped && tooFewForBootstrap(units) ? { lowUnits: true as const } : {};
}
