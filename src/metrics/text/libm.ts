/**
 * exp and log rounded correctly (the double nearest the true value), for BLEU where its digits are
 * printed in full: V8's Math.exp and Math.log are within one unit in the last place but differ
 * from the C library's (which Python's math module calls, and sacreBLEU with it) in about one
 * call in twenty, while the C library's exp and log are correctly rounded in all but about one
 * call in a thousand. Computed in double-double arithmetic (about 106 bits): exp by a Taylor series
 * of a reduced argument squared back up, log by one Newton step on that exp.
 */

// Double-doubles travel as two numbers, and each step leaves its result in R = (hi, lo) rather than in
// a new [hi, lo] pair: a sentence-level BLEU run calls expParts five times a segment, each some
// 180 steps, and allocating their pairs made the garbage collector a quarter of its CPU time. The
// operations and their order are those of the textbook pair functions, so the bits are the same.
// (A Float64Array, not two module-level lets: V8 checks a module binding for its temporal dead
// zone at every use, which made the first version slower than the pairs it replaced.)
const R = new Float64Array(2);

const SPLIT = 134217729; // 2^27 + 1: Veltkamp's split of a double into two 26-bit halves

/** (R[0], R[1]) = a + b exactly. */
function twoSum(a: number, b: number): void {
  const s = a + b;
  const bb = s - a;
  R[0] = s;
  R[1] = a - (s - bb) + (b - bb);
}

/** (R[0], R[1]) = a + b exactly, given |a| >= |b|. */
function quickTwoSum(a: number, b: number): void {
  const s = a + b;
  R[0] = s;
  R[1] = b - (s - a);
}

/** (R[0], R[1]) = a * b exactly. */
function twoProd(a: number, b: number): void {
  const p = a * b;
  let c = SPLIT * a;
  const ah = c - (c - a);
  const al = a - ah;
  c = SPLIT * b;
  const bh = c - (c - b);
  const bl = b - bh;
  R[0] = p;
  R[1] = ah * bh - p + ah * bl + al * bh + al * bl;
}

/** (R[0], R[1]) = (ah, al) + (bh, bl). */
function add(ah: number, al: number, bh: number, bl: number): void {
  twoSum(ah, bh);
  const s = R[0];
  const e = R[1];
  twoSum(al, bl);
  const t = R[0];
  const f = R[1];
  quickTwoSum(s, e + t);
  quickTwoSum(R[0], R[1] + f);
}

/** (R[0], R[1]) = (ah, al) * (bh, bl). */
function mul(ah: number, al: number, bh: number, bl: number): void {
  twoProd(ah, bh);
  quickTwoSum(R[0], R[1] + (ah * bl + al * bh));
}

/** (R[0], R[1]) = (ah, al) / n for a small integer n. */
function divInt(ah: number, al: number, n: number): void {
  const q = ah / n;
  twoProd(q, n);
  quickTwoSum(q, (ah - R[0] - R[1] + al) / n);
}

const LN2_HI = 0.6931471805599453;
const LN2_LO = 2.3190468138462996e-17;
const SQUARINGS = 10; // exp(r) = exp(r / 2^10)^(2^10): a series of 9 terms then suffices

/** exp(x) as a double-double (R[0], R[1]), scaled by 2^k kept apart: returns k. */
function expParts(x: number): number {
  const k = Math.round(x / LN2_HI);
  // r = x - k ln2, with k ln2 to double-double precision.
  twoProd(k, LN2_HI);
  const ph = R[0];
  const pl = R[1];
  twoProd(k, LN2_LO);
  add(ph, pl, R[0], R[1]);
  add(x, 0, -R[0], -R[1]);
  const sh = R[0] / 2 ** SQUARINGS;
  const sl = R[1] / 2 ** SQUARINGS;
  // e = exp(s) - 1 by its series (Horner): s (1 + s/2 (1 + s/3 (... (1 + s/9)))).
  let eh = 1;
  let el = 0;
  for (let n = 9; n >= 2; n--) {
    mul(sh, sl, eh, el);
    divInt(R[0], R[1], n);
    add(1, 0, R[0], R[1]);
    eh = R[0];
    el = R[1];
  }
  mul(sh, sl, eh, el);
  eh = R[0];
  el = R[1];
  // (1 + e)^2 - 1 = 2e + e^2, ten times.
  for (let i = 0; i < SQUARINGS; i++) {
    mul(eh, el, eh, el);
    add(2 * eh, 2 * el, R[0], R[1]);
    eh = R[0];
    el = R[1];
  }
  add(1, 0, eh, el);
  return k;
}

/** e^x, correctly rounded but in rare hard cases (and for results below 2^-1022). */
export function expRounded(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x > 709.8) return Math.exp(x); // overflow: Infinity
  if (x < -745.2) return 0;
  if (x === 0) return 1;
  const k = expParts(x);
  quickTwoSum(R[0], R[1]);
  const rounded = R[0];
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
  const k = expParts(z);
  const scale = 2 ** k;
  const ezh = R[0] * scale;
  const ezl = R[1] * scale;
  add(y, 0, -ezh, -ezl);
  const t = (R[0] + R[1]) / ezh;
  return z + t;
}
