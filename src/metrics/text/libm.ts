/**
 * exp and log rounded correctly (the double nearest the true value), for BLEU where its digits are
 * printed in full: V8's Math.exp and Math.log are within one unit in the last place but differ
 * from the C library's (which Python's math module calls, and sacreBLEU with it) in about one
 * call in twenty, while the C library's exp and log are correctly rounded in all but about one
 * call in a thousand. Computed in double-double arithmetic (about 106 bits): exp by a Taylor series
 * of a reduced argument squared back up, log by one Newton step on that exp.
 */

type DD = [hi: number, lo: number];

const SPLIT = 134217729; // 2^27 + 1: Veltkamp's split of a double into two 26-bit halves

function twoSum(a: number, b: number): DD {
  const s = a + b;
  const bb = s - a;
  return [s, a - (s - bb) + (b - bb)];
}

function quickTwoSum(a: number, b: number): DD {
  const s = a + b;
  return [s, b - (s - a)];
}

function twoProd(a: number, b: number): DD {
  const p = a * b;
  let c = SPLIT * a;
  const ah = c - (c - a);
  const al = a - ah;
  c = SPLIT * b;
  const bh = c - (c - b);
  const bl = b - bh;
  return [p, ah * bh - p + ah * bl + al * bh + al * bl];
}

function add(a: DD, b: DD): DD {
  const [s, e] = twoSum(a[0], b[0]);
  const [t, f] = twoSum(a[1], b[1]);
  const [s2, e2] = quickTwoSum(s, e + t);
  return quickTwoSum(s2, e2 + f);
}

function mul(a: DD, b: DD): DD {
  const [p, e] = twoProd(a[0], b[0]);
  return quickTwoSum(p, e + (a[0] * b[1] + a[1] * b[0]));
}

/** a / n for a small integer n. */
function divInt(a: DD, n: number): DD {
  const q = a[0] / n;
  const [p, e] = twoProd(q, n);
  return quickTwoSum(q, (a[0] - p - e + a[1]) / n);
}

const LN2: DD = [0.6931471805599453, 2.3190468138462996e-17];
const SQUARINGS = 10; // exp(r) = exp(r / 2^10)^(2^10): a series of 9 terms then suffices

/** exp(x) as a double-double, scaled by 2^k kept apart: [hi, lo, k]. */
function expParts(x: number): [number, number, number] {
  const k = Math.round(x / LN2[0]);
  // r = x - k ln2, with k ln2 to double-double precision.
  const kln2 = add(twoProd(k, LN2[0]), twoProd(k, LN2[1]));
  const r = add([x, 0], [-kln2[0], -kln2[1]]);
  const s: DD = [r[0] / 2 ** SQUARINGS, r[1] / 2 ** SQUARINGS];
  // e = exp(s) - 1 by its series (Horner): s (1 + s/2 (1 + s/3 (... (1 + s/9)))).
  let e: DD = [1, 0];
  for (let n = 9; n >= 2; n--) e = add([1, 0], divInt(mul(s, e), n));
  e = mul(s, e);
  // (1 + e)^2 - 1 = 2e + e^2, ten times.
  for (let i = 0; i < SQUARINGS; i++) e = add([2 * e[0], 2 * e[1]], mul(e, e));
  const [hi, lo] = add([1, 0], e);
  return [hi, lo, k];
}

/** e^x, correctly rounded but in rare hard cases (and for results below 2^-1022). */
export function expRounded(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x > 709.8) return Math.exp(x); // overflow: Infinity
  if (x < -745.2) return 0;
  if (x === 0) return 1;
  const [hi, lo, k] = expParts(x);
  const rounded = quickTwoSum(hi, lo)[0];
  // 2^k in two steps, so that k down to -1074 does not underflow the factor itself.
  const half = Math.trunc(k / 2);
  return rounded * 2 ** half * 2 ** (k - half);
}

/** ln(y), correctly rounded but in rare hard cases. */
export function logRounded(y: number): number {
  if (!(y > 0) || !Number.isFinite(y)) return Math.log(y);
  if (y === 1) return 0;
  // One Newton step from V8's value (within an ulp): z + (y - e^z) / e^z.
  const z = Math.log(y);
  const [hi, lo, k] = expParts(z);
  const scale = 2 ** k;
  const ez: DD = [hi * scale, lo * scale];
  const diff = add([y, 0], [-ez[0], -ez[1]]);
  const t = (diff[0] + diff[1]) / ez[0];
  return z + t;
}
