import { createHash } from 'node:crypto';

/**
 * xoshiro128** seeded per tensor from sha256(seed/name): a tensor's values depend only on the seed
 * and its name, never on the order tensors are generated in, so tests can regenerate any one weight.
 */
export class Xoshiro128 {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number, stream: string) {
    const h = createHash('sha256').update(`${seed}/${stream}`).digest();
    this.s0 = h.readUInt32LE(0);
    this.s1 = h.readUInt32LE(4);
    this.s2 = h.readUInt32LE(8);
    this.s3 = h.readUInt32LE(12);
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1; // the all-zero state is a fixed point
  }

  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in (0, 1): never 0, so log() in Box-Muller stays finite. */
  nextOpenUnit(): number {
    return (this.nextUint32() + 0.5) / 4294967296;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** Fills `out` with normal(0, std) float32 values (Box-Muller; V8's Math.log/cos/sin are fdlibm ports, so results are the same on every platform). */
export function fillNormal(out: Float32Array, rng: Xoshiro128, std: number): Float32Array {
  const n = out.length;
  let i = 0;
  while (i < n) {
    const r = Math.sqrt(-2 * Math.log(rng.nextOpenUnit())) * std;
    const theta = 2 * Math.PI * rng.nextOpenUnit();
    out[i++] = r * Math.cos(theta);
    if (i < n) out[i++] = r * Math.sin(theta);
  }
  return out;
}
