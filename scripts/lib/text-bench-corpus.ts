/**
 * The corpus the text-metric benches time (bench:significance, bench:text-metrics): sacreBLEU's
 * WMT17 systems when a checkout is given, else a synthetic corpus of the same shape, so ours can be
 * timed where sacreBLEU cannot run. Also the one timer both use (wall and CPU seconds side by side).
 */
import { performance } from 'node:perf_hooks';
import { NumpyGenerator } from '../../src/metrics/significance/pcg64.js';
import { readWmt17 } from './sacrebleu-wmt17.js';

export interface BenchCorpus {
  refs: string[][];
  /** [name, one line per segment], as readWmt17 gives them. */
  systems: [string, string[]][];
  /** Where the corpus came from, for the bench's first line. */
  source: string;
}

/**
 * 16 systems x 3,004 segments of pseudo-words, noisy copies of one reference; with `moveBlocks`
 * about half the lines also move a block of three words to the end (TER's shifts have work to do).
 * Seeded, so every run times the same corpus.
 */
export function syntheticCorpus(opts: { moveBlocks?: boolean } = {}): BenchCorpus {
  const gen = new NumpyGenerator(2017);
  const draw = (high: number) => gen.integers(high, new Int32Array(1))[0];
  const word = () => `w${draw(4000)}`;
  const ref = Array.from({ length: 3004 }, () => Array.from({ length: 12 + draw(30) }, word));
  const systems = Array.from({ length: 16 }, (_, k): [string, string[]] => {
    const rate = 300 + 20 * k; // per mille of words replaced
    const lines = ref.map((toks) => {
      const out = toks.map((t) => (draw(1000) < rate ? word() : t));
      if (opts.moveBlocks && out.length > 6 && draw(2) === 0) out.push(...out.splice(draw(3), 3));
      return out.join(' ');
    });
    return [`system-${k + 1}`, lines];
  });
  return { refs: [ref.map((t) => t.join(' '))], systems, source: 'a synthetic corpus of the same shape (16 systems x 3,004 segments)' };
}

/** sacreBLEU's WMT17 systems from `checkout` (read by `python`), else the synthetic corpus. */
export async function benchCorpus(checkout: string | undefined, python: string, opts: { moveBlocks?: boolean } = {}): Promise<BenchCorpus> {
  if (!checkout) return syntheticCorpus(opts);
  const w = await readWmt17(checkout, python);
  return { refs: w.refs, systems: w.systems, source: `sacreBLEU's WMT17 systems (${w.file})` };
}

/** f's value with the wall and CPU seconds it took (on a shared machine CPU time is the fairer figure). */
export function timed<T>(f: () => T): { value: T; wall: number; cpu: number } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = f();
  const c = process.cpuUsage(c0);
  return { value, wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 };
}
