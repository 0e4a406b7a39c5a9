/**
 * `np.mean` of a float64 vector, bit for bit as NumPy 1.24 (Debian's python3-numpy, the one our
 * sacreBLEU parity is checked against) computes it: pairwise summation in blocks of 128 with eight
 * accumulators, over chunks of 8192 values (the reduction's buffer) added in order, then / n.
 * NumPy 2.x sums the whole vector pairwise without the chunks; the two agree up to 8192 values.
 * sacreBLEU centres the bootstrap differences on this mean before counting how many exceed the
 * observed one, so the count is only exact when the mean is.
 */
const BLOCK = 128;
const CHUNK = 8192;

/** numpy's pairwise_sum over values[start .. start+n). */
export function pairwiseSum(values: ArrayLike<number>, start: number, n: number): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += values[start + i];
    return res;
  }
  if (n <= BLOCK) {
    let r0 = values[start];
    let r1 = values[start + 1];
    let r2 = values[start + 2];
    let r3 = values[start + 3];
    let r4 = values[start + 4];
    let r5 = values[start + 5];
    let r6 = values[start + 6];
    let r7 = values[start + 7];
    let i = 8;
    for (; i < n - (n % 8); i += 8) {
      r0 += values[start + i];
      r1 += values[start + i + 1];
      r2 += values[start + i + 2];
      r3 += values[start + i + 3];
      r4 += values[start + i + 4];
      r5 += values[start + i + 5];
      r6 += values[start + i + 6];
      r7 += values[start + i + 7];
    }
    let res = r0 + r1 + (r2 + r3) + (r4 + r5 + (r6 + r7));
    for (; i < n; i++) res += values[start + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(values, start, n2) + pairwiseSum(values, start + n2, n - n2);
}

/** `np.sum` of a float64 vector (NumPy 1.24). */
export function numpySum(values: ArrayLike<number>): number {
  let acc = 0;
  for (let start = 0; start < values.length; start += CHUNK) {
    const part = pairwiseSum(values, start, Math.min(CHUNK, values.length - start));
    acc = start === 0 ? part : acc + part;
  }
  return acc;
}

/** `np.mean` of a float64 vector (NumPy 1.24): NaN for an empty one. */
export function numpyMean(values: ArrayLike<number>): number {
  return numpySum(values) / values.length;
}
