/**
 * NumPy's default generator, `numpy.random.default_rng(seed)`, reproduced draw for draw: its
 * SeedSequence seeding, the PCG64 bit generator (128-bit LCG with the XSL-RR output, 64 bits per
 * step, 32-bit draws served from the two halves of one step, low half first), and the two draws
 * sacreBLEU's significance tests make: `integers(0, n)` with Lemire's bounded method on 32-bit
 * draws (what `choice(n, size, replace=True)` calls) and `integers(2, dtype=bool)` (one bit of a
 * 32-bit draw per value, least significant first).
 *
 * The 128-bit state lives in four 32-bit limbs: products are split into 16-bit halves so every
 * intermediate is an exact double, and the low words come from Math.imul. No BigInt in the loop.
 */
import { randomBytes } from 'node:crypto';

const TWO_32 = 4294967296;

// PCG_DEFAULT_MULTIPLIER_128 = 0x2360ED051FC65DA4_4385DF649FCCF645, least significant limb first,
// and the 16-bit halves of the three low limbs.
const M0 = 0x9fccf645;
const M1 = 0x4385df64;
const M2 = 0x1fc65da4;
const M3 = 0x2360ed05;
const M0L = M0 & 0xffff;
const M0H = M0 >>> 16;
const M1L = M1 & 0xffff;
const M1H = M1 >>> 16;
const M2L = M2 & 0xffff;
const M2H = M2 >>> 16;

/** NumPy's SeedSequence mixing constants (bit_generator.pyx). */
const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL_SIZE = 4;

/** A seed as NumPy takes one: a non-negative integer, a sequence of them, or null for OS entropy. */
export type Seed = number | bigint | readonly (number | bigint)[] | null;

/** NumPy's `_coerce_to_uint32_array` for integers: 32-bit words, least significant first ([0] for 0). */
function intToWords(n: number | bigint): number[] {
  if (typeof n === 'number' && !Number.isSafeInteger(n)) throw new RangeError('a seed number must be a safe integer (use a bigint)');
  let v = BigInt(n);
  if (v < 0n) throw new RangeError('a seed must be a non-negative integer');
  if (v === 0n) return [0];
  const words: number[] = [];
  while (v > 0n) {
    words.push(Number(v & 0xffffffffn));
    v >>= 32n;
  }
  return words;
}

/**
 * NumPy's SeedSequence (pool of four 32-bit words, no spawn key): the same entropy gives the same
 * state words as `np.random.SeedSequence(entropy).generate_state(n)`.
 */
export class SeedSequence {
  readonly pool = new Uint32Array(POOL_SIZE);
  /** The entropy actually used (drawn from the OS when none was given), as NumPy keeps it. */
  readonly entropy: number | bigint | readonly (number | bigint)[];

  constructor(entropy: Seed = null) {
    if (entropy === null) {
      const bytes = randomBytes(16);
      this.entropy = BigInt(`0x${bytes.toString('hex')}`);
    } else {
      this.entropy = entropy;
    }
    const words = Array.isArray(this.entropy) ? (this.entropy as (number | bigint)[]).flatMap(intToWords) : intToWords(this.entropy as number | bigint);
    this.mix(words);
  }

  private mix(entropy: number[]): void {
    let hashConst = INIT_A;
    const hashmix = (value: number): number => {
      value = (value ^ hashConst) >>> 0;
      hashConst = Math.imul(hashConst, MULT_A) >>> 0;
      value = Math.imul(value, hashConst) >>> 0;
      return (value ^ (value >>> 16)) >>> 0;
    };
    const mix = (x: number, y: number): number => {
      const r = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
      return (r ^ (r >>> 16)) >>> 0;
    };
    const pool = this.pool;
    for (let i = 0; i < POOL_SIZE; i++) pool[i] = hashmix(i < entropy.length ? entropy[i] : 0);
    for (let src = 0; src < POOL_SIZE; src++) {
      for (let dst = 0; dst < POOL_SIZE; dst++) if (src !== dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
    }
    for (let src = POOL_SIZE; src < entropy.length; src++) {
      for (let dst = 0; dst < POOL_SIZE; dst++) pool[dst] = mix(pool[dst], hashmix(entropy[src]));
    }
  }

  /** `generate_state(nWords, np.uint32)`. */
  generateState(nWords: number): Uint32Array {
    const out = new Uint32Array(nWords);
    let hashConst = INIT_B;
    for (let i = 0; i < nWords; i++) {
      let v = (this.pool[i % POOL_SIZE] ^ hashConst) >>> 0;
      hashConst = Math.imul(hashConst, MULT_B) >>> 0;
      v = Math.imul(v, hashConst) >>> 0;
      out[i] = (v ^ (v >>> 16)) >>> 0;
    }
    return out;
  }
}

/** NumPy's PCG64 bit generator, seeded as `PCG64(SeedSequence(seed))`. */
export class Pcg64 {
  // State and increment, least significant 32-bit limb first.
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;
  private i0 = 0;
  private i1 = 0;
  private i2 = 0;
  private i3 = 0;
  // The high half of the last 64-bit output, served by the next 32-bit draw (pcg64_next32).
  private hasUint32 = false;
  private uinteger = 0;
  // The last output, high and low words.
  private outHi = 0;
  private outLo = 0;
  readonly seedSequence: SeedSequence;

  constructor(seed: Seed | SeedSequence = null) {
    this.seedSequence = seed instanceof SeedSequence ? seed : new SeedSequence(seed);
    // generate_state(4, uint64) is eight 32-bit words read as four little-endian 64-bit words
    // w0..w3; the seed is w0:w1 (high:low) and the stream w2:w3 (pcg64_set_seed).
    const w = this.seedSequence.generateState(8);
    const seed128 = [w[2], w[3], w[0], w[1]];
    const seq = [w[6], w[7], w[4], w[5]];
    // pcg_setseq_128_srandom_r: state = 0; inc = (seq << 1) | 1; step; state += seed; step.
    this.i0 = ((seq[0] << 1) | 1) >>> 0;
    this.i1 = ((seq[1] << 1) | (seq[0] >>> 31)) >>> 0;
    this.i2 = ((seq[2] << 1) | (seq[1] >>> 31)) >>> 0;
    this.i3 = ((seq[3] << 1) | (seq[2] >>> 31)) >>> 0;
    this.step();
    let t = this.s0 + seed128[0];
    this.s0 = t >>> 0;
    t = this.s1 + seed128[1] + (t >= TWO_32 ? 1 : 0);
    this.s1 = t >>> 0;
    t = this.s2 + seed128[2] + (t >= TWO_32 ? 1 : 0);
    this.s2 = t >>> 0;
    this.s3 = (this.s3 + seed128[3] + (t >= TWO_32 ? 1 : 0)) >>> 0;
    this.step();
  }

  /**
   * state = state * MULT + inc (mod 2^128): the limb products written out (a helper call per
   * product, or module-level scratch variables, cost a third of the draw time measured).
   */
  private step(): void {
    const s0 = this.s0;
    const s1 = this.s1;
    const s2 = this.s2;
    const s3 = this.s3;
    // 16-bit halves of the state limbs; the multiplier's are constants (M*L, M*H).
    const a0l = s0 & 0xffff;
    const a0h = s0 >>> 16;
    const a1l = s1 & 0xffff;
    const a1h = s1 >>> 16;
    const a2l = s2 & 0xffff;
    const a2h = s2 >>> 16;
    // s0 * M0 as hi00:lo00
    const p00ll = a0l * M0L;
    const p00lh = a0l * M0H;
    const p00hl = a0h * M0L;
    const m00 = (p00ll >>> 16) + (p00lh & 0xffff) + (p00hl & 0xffff);
    const lo00 = (((m00 & 0xffff) << 16) | (p00ll & 0xffff)) >>> 0;
    const hi00 = a0h * M0H + (p00lh >>> 16) + (p00hl >>> 16) + (m00 >>> 16);
    // s0 * M1 as hi01:lo01
    const p01ll = a0l * M1L;
    const p01lh = a0l * M1H;
    const p01hl = a0h * M1L;
    const m01 = (p01ll >>> 16) + (p01lh & 0xffff) + (p01hl & 0xffff);
    const lo01 = (((m01 & 0xffff) << 16) | (p01ll & 0xffff)) >>> 0;
    const hi01 = a0h * M1H + (p01lh >>> 16) + (p01hl >>> 16) + (m01 >>> 16);
    // s1 * M0 as hi10:lo10
    const p10ll = a1l * M0L;
    const p10lh = a1l * M0H;
    const p10hl = a1h * M0L;
    const m10 = (p10ll >>> 16) + (p10lh & 0xffff) + (p10hl & 0xffff);
    const lo10 = (((m10 & 0xffff) << 16) | (p10ll & 0xffff)) >>> 0;
    const hi10 = a1h * M0H + (p10lh >>> 16) + (p10hl >>> 16) + (m10 >>> 16);
    // s0 * M2 as hi02:lo02
    const p02ll = a0l * M2L;
    const p02lh = a0l * M2H;
    const p02hl = a0h * M2L;
    const m02 = (p02ll >>> 16) + (p02lh & 0xffff) + (p02hl & 0xffff);
    const lo02 = (((m02 & 0xffff) << 16) | (p02ll & 0xffff)) >>> 0;
    const hi02 = a0h * M2H + (p02lh >>> 16) + (p02hl >>> 16) + (m02 >>> 16);
    // s1 * M1 as hi11:lo11
    const p11ll = a1l * M1L;
    const p11lh = a1l * M1H;
    const p11hl = a1h * M1L;
    const m11 = (p11ll >>> 16) + (p11lh & 0xffff) + (p11hl & 0xffff);
    const lo11 = (((m11 & 0xffff) << 16) | (p11ll & 0xffff)) >>> 0;
    const hi11 = a1h * M1H + (p11lh >>> 16) + (p11hl >>> 16) + (m11 >>> 16);
    // s2 * M0 as hi20:lo20
    const p20ll = a2l * M0L;
    const p20lh = a2l * M0H;
    const p20hl = a2h * M0L;
    const m20 = (p20ll >>> 16) + (p20lh & 0xffff) + (p20hl & 0xffff);
    const lo20 = (((m20 & 0xffff) << 16) | (p20ll & 0xffff)) >>> 0;
    const hi20 = a2h * M0H + (p20lh >>> 16) + (p20hl >>> 16) + (m20 >>> 16);
    // Every column sum stays below 2^36: exact in a double, carried by division.
    let t = lo00 + this.i0;
    const r0 = t >>> 0;
    t = (t - r0) / TWO_32 + hi00 + lo01 + lo10 + this.i1;
    const r1 = t >>> 0;
    t = (t - r1) / TWO_32 + hi01 + hi10 + lo02 + lo11 + lo20 + this.i2;
    const r2 = t >>> 0;
    t =
      (t - r2) / TWO_32 +
      hi02 +
      hi11 +
      hi20 +
      (Math.imul(s0, M3) >>> 0) +
      (Math.imul(s1, M2) >>> 0) +
      (Math.imul(s2, M1) >>> 0) +
      (Math.imul(s3, M0) >>> 0) +
      this.i3;
    this.s0 = r0;
    this.s1 = r1;
    this.s2 = r2;
    this.s3 = t >>> 0;
  }

  /** One step and its XSL-RR output into outHi:outLo. */
  private next(): void {
    this.step();
    const xh = (this.s3 ^ this.s1) >>> 0;
    const xl = (this.s2 ^ this.s0) >>> 0;
    const rot = this.s3 >>> 26;
    if (rot === 0) {
      this.outHi = xh;
      this.outLo = xl;
    } else if (rot < 32) {
      this.outLo = ((xl >>> rot) | (xh << (32 - rot))) >>> 0;
      this.outHi = ((xh >>> rot) | (xl << (32 - rot))) >>> 0;
    } else if (rot === 32) {
      this.outLo = xh;
      this.outHi = xl;
    } else {
      const r = rot - 32;
      this.outLo = ((xh >>> r) | (xl << (32 - r))) >>> 0;
      this.outHi = ((xl >>> r) | (xh << (32 - r))) >>> 0;
    }
  }

  /** `next_uint32`: the low half of a fresh 64-bit output, and its high half on the next call. */
  nextUint32(): number {
    if (this.hasUint32) {
      this.hasUint32 = false;
      return this.uinteger;
    }
    this.next();
    this.hasUint32 = true;
    this.uinteger = this.outHi;
    return this.outLo;
  }

  /** `next_uint64` (what `random_raw()` returns); a buffered 32-bit half is left as it is. */
  nextUint64(): bigint {
    this.next();
    return (BigInt(this.outHi) << 32n) | BigInt(this.outLo);
  }
}

/**
 * The draws of `numpy.random.Generator(PCG64(seed))` that sacreBLEU's tests use. Arrays are filled
 * in C order, so a (rows, cols) draw is rows * cols values in sequence.
 */
export class NumpyGenerator {
  readonly bitGenerator: Pcg64;

  constructor(seed: Seed | SeedSequence = null) {
    this.bitGenerator = new Pcg64(seed);
  }

  /**
   * `integers(0, high, size=out.length, dtype=np.int64)` (and so `choice(high, size, replace=True)`)
   * for high <= 2^32: Lemire's method on 32-bit draws, rejecting only the biased low products.
   */
  integers(high: number, out: Int32Array | Uint32Array | Float64Array): typeof out {
    if (!Number.isInteger(high) || high < 1 || high > TWO_32) throw new RangeError(`integers: high must be an integer in 1..2^32 (got ${high})`);
    const rng = high - 1;
    const bg = this.bitGenerator;
    if (rng === 0) {
      out.fill(0);
      return out;
    }
    if (rng === 0xffffffff) {
      for (let i = 0; i < out.length; i++) out[i] = bg.nextUint32();
      return out;
    }
    const rngExcl = high;
    // (UINT32_MAX - rng) % rng_excl, the largest biased leftover + 1.
    const threshold = (TWO_32 - rngExcl) % rngExcl;
    for (let i = 0; i < out.length; i++) {
      let x = bg.nextUint32();
      let leftover = Math.imul(x, rngExcl) >>> 0;
      if (leftover < rngExcl) {
        while (leftover < threshold) {
          x = bg.nextUint32();
          leftover = Math.imul(x, rngExcl) >>> 0;
        }
      }
      // The high word of x * rngExcl, exactly: x = x1 * 2^16 + x0 keeps every product below 2^48.
      out[i] = Math.floor(((x >>> 16) * rngExcl + Math.floor(((x & 0xffff) * rngExcl) / 65536)) / 65536);
    }
    return out;
  }

  /** `choice(n, size=count, replace=True)`: `integers(0, n)`. */
  choice(n: number, out: Int32Array | Uint32Array | Float64Array): typeof out {
    return this.integers(n, out);
  }

  /**
   * `integers(2, size=count, dtype=bool)` as a stream: values come one by one from a single fill of
   * `count` values, so a caller may consume a (rows, cols) draw row by row without holding it all.
   */
  boolStream(): BoolStream {
    return new BoolStream(this.bitGenerator);
  }

  /** `integers(2, size=out.length, dtype=bool)` as 0/1 bytes. */
  bools(out: Uint8Array): Uint8Array {
    const s = this.boolStream();
    for (let i = 0; i < out.length; i++) out[i] = s.next();
    return out;
  }
}

/** One `random_bounded_bool_fill`: its 32-bit buffer lives as long as the fill does. */
export class BoolStream {
  private buf = 0;
  private bcnt = 0;

  constructor(private readonly bg: Pcg64) {}

  next(): number {
    if (this.bcnt === 0) {
      this.buf = this.bg.nextUint32();
      this.bcnt = 31;
    } else {
      this.buf >>>= 1;
      this.bcnt--;
    }
    return this.buf & 1;
  }

  /** The next 8 values as one byte, value k in bit k (the order next() would return them). */
  nextByte(): number {
    let b = 0;
    for (let k = 0; k < 8; k++) b |= this.next() << k;
    return b;
  }
}
