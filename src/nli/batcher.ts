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
 * the token budget still gets a batch of its own.
 */
export function planBatches(lengths: number[], limits: BatchLimits): number[][] {
  const batches: number[][] = [];
  let current: number[] = [];
  let longest = 0;
  let real = 0;
  for (let i = 0; i < lengths.length; i++) {
    const len = lengths[i];
    const nextLongest = Math.max(longest, len);
    const fits =
      current.length < limits.maxBatchSize &&
      nextLongest * (current.length + 1) <= limits.maxBatchTokens &&
      fitsPadding(nextLongest, current.length + 1, real + len, limits);
    if (current.length > 0 && !fits) {
      batches.push(current);
      current = [];
      longest = 0;
      real = 0;
    }
    current.push(i);
    longest = Math.max(longest, len);
    real += len;
  }
  if (current.length > 0) batches.push(current);
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
