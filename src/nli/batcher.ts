/** Limits on one forward pass: padded tokens (rows x longest row) and rows. */
export interface BatchLimits {
  maxBatchTokens: number;
  maxBatchSize: number;
  /**
   * Largest share of a batch's padded tokens that may be padding. On CPU every padded token costs
   * as much as a real one and one pair already fills the matrix units, so batching only pays when
   * rows are of nearly equal length; undefined: no cap.
   */
  maxPadFraction?: number;
}

function fitsPadding(longest: number, rows: number, realTokens: number, limits: BatchLimits): boolean {
  if (limits.maxPadFraction === undefined) return true;
  const padded = longest * rows;
  return padded - realTokens <= limits.maxPadFraction * padded;
}

/**
 * Split items, already sorted by length, into consecutive batches within the limits. Sorting first
 * keeps rows of similar length together so dynamic padding wastes little; a single row longer than
 * the token budget still gets a batch of its own. The runner takes batches one at a time from a
 * pool that keeps growing (takeBatch); this is the same cut applied to a fixed list.
 */
export function planBatches(lengths: number[], limits: BatchLimits): number[][] {
  const batches: number[][] = [];
  for (let start = 0; start < lengths.length; ) {
    // At least one row, so a limit of zero rows cannot stall the loop.
    const n = Math.max(1, takeBatch((i) => lengths[start + i], lengths.length - start, limits));
    batches.push(Array.from({ length: n }, (_, i) => start + i));
    start += n;
  }
  return batches;
}

/** How many rows from the front of a length-sorted list make the next batch. */
export function takeBatch(sortedLengths: (i: number) => number, available: number, limits: BatchLimits): number {
  let n = 0;
  let longest = 0;
  let real = 0;
  while (n < available && n < limits.maxBatchSize) {
    const len = sortedLengths(n);
    const nextLongest = Math.max(longest, len);
    if (n > 0 && (nextLongest * (n + 1) > limits.maxBatchTokens || !fitsPadding(nextLongest, n + 1, real + len, limits))) break;
    longest = nextLongest;
    real += len;
    n++;
  }
  return n;
}
