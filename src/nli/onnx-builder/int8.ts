/**
 * The weight side of int8 quantization: symmetric, per output column (or per tensor for embedding
 * tables), rounded half to even as numpy's rint. The graphs that use these weights are written by
 * quantize.ts, for both q8 schemes.
 */

/**
 * Symmetric int8 range without -128, as ORT uses for symmetric int8 weights: scale = max|w| / 127
 * keeps 0 exact and the grid the same on both sides.
 */
export const INT8_QMAX = 127;

/**
 * 7-bit weights for the row scheme: |w_q| <= 63, so that a pair of u8 x s8 products, 2 * 255 * 63 =
 * 32130, fits the int16 that AVX2's and AVX-512BW's vpmaddubsw adds pairs in (<= 32767); see
 * docs/nli.md "q8 arithmetic".
 */
export const INT7_QMAX = 63;

/** Round half to even, as numpy's rint (and so ORT's Python quantizer) rounds. */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  // Math.round sends .5 up; at an exact tie step back to the even neighbour.
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

function quantizeValue(v: number, scale: number, qmax: number): number {
  const q = roundHalfEven(v / scale);
  return q > qmax ? qmax : q < -qmax ? -qmax : q;
}

/** An all-zero tensor gets scale 1, so the division is defined and every value quantizes to 0. */
function scaleOf(amax: number, qmax: number): number {
  return amax > 0 ? Math.fround(amax / qmax) : 1;
}

export interface Int8PerColumn {
  values: Int8Array;
  /** One float32 scale per output column: w[i][j] ~ values[i][j] * scales[j]. */
  scales: Float32Array;
}

/**
 * Per output column (per channel) symmetric int8 of a [rows, cols] row-major matrix, the MatMul
 * weight layout [in, out]: each column (one output feature) gets its own scale, so a column of small
 * weights is not flattened to zero by one large weight elsewhere in the matrix.
 */
export function quantizePerColumn(w: Float32Array, rows: number, cols: number, qmax: number = INT8_QMAX): Int8PerColumn {
  if (w.length !== rows * cols) throw new Error(`matrix of ${w.length} values is not ${rows} x ${cols}`);
  const amax = new Float64Array(cols);
  for (let i = 0; i < rows; i++) {
    const row = i * cols;
    for (let j = 0; j < cols; j++) {
      const a = Math.abs(w[row + j]);
      if (a > amax[j]) amax[j] = a;
    }
  }
  const scales = Float32Array.from(amax, (a) => scaleOf(a, qmax));
  const values = new Int8Array(w.length);
  for (let i = 0; i < rows; i++) {
    const row = i * cols;
    for (let j = 0; j < cols; j++) values[row + j] = quantizeValue(w[row + j], scales[j], qmax);
  }
  return { values, scales };
}

/** One scale for the whole tensor: what ORT's Gather quantization does to embedding tables. */
export function quantizePerTensor(w: Float32Array): { values: Int8Array; scale: number } {
  // Indexed loops, not `for...of` and Int8Array.from(w, fn): V8 runs those through the iterator
  // protocol, and on roberta-large's 51M-value word embeddings that took about 20 s of CPU and as
  // much again of garbage collection, against well under a second this way (the same values).
  const n = w.length;
  let amax = 0;
  for (let i = 0; i < n; i++) amax = Math.max(amax, Math.abs(w[i]));
  const scale = scaleOf(amax, INT8_QMAX);
  const values = new Int8Array(n);
  for (let i = 0; i < n; i++) values[i] = quantizeValue(w[i], scale, INT8_QMAX);
  return { values, scale };
}
