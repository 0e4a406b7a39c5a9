/**
 * sacreBLEU's significance tests (sacrebleu/significance.py, 2.x) over any metric of summed
 * per-item statistics, with its exact draws and rules, so that BLEU gets sacreBLEU's p-values,
 * bootstrap means and intervals for the same seed:
 * - paired bootstrap: one `default_rng(seed).choice(n, size=(samples, n))` shared by every system;
 *   p = (c + 1) / (samples + 1) where c counts the centred sample differences |sys - base| - mean
 *   that exceed the observed |sys - base|;
 * - approximate randomization: `default_rng(seed).integers(2, size=(trials, n), dtype=bool)` picks
 *   which system each item's statistics go to; c counts trials whose |a - b| exceeds the observed;
 * - confidence: the bootstrap scores sorted, the n//40-th from each end, their mean (NumPy's).
 * One rule differs on purpose: a system whose statistics equal the baseline's item for item gets
 * p = 1, where sacreBLEU's strict count gives 1 / (samples + 1) (docs/significance.md). And where
 * the units are few, randomization does not draw: with 2^n swap patterns no more than the trials
 * asked for, it enumerates them all (an exact test), and a drawn p-value is never reported below
 * 2 / 2^n, the least any test on n paired units can give (units.ts). On sacreBLEU's own test data
 * (thousands of segments) neither rule changes a number.
 *
 * Each test is a generator that yields between blocks of resamples (steps.ts): the commands let
 * the event loop run between blocks, so Ctrl-C and SIGTERM end a long run within a second.
 *
 * A resample is column sums over typed arrays: no per-sample allocation. The bootstrap multiplies
 * each item's row by how often it was drawn; randomization adds precomputed per-byte tables of
 * baseline-minus-system differences, eight items per lookup (see where the time goes in
 * docs/significance.md).
 */
import { liveRows, seededRows, type DrawRows } from './draws.js';
import { numpyMean } from './numpy-sum.js';
import { NumpyGenerator, type Seed } from './pcg64.js';
import { assertFits, DEFAULT_AR_TRIALS, DEFAULT_BOOTSTRAP_SAMPLES, resolveSeed } from './spec.js';
import { runSteps, type Steps } from './steps.js';
import type { ConfidenceResult, ItemStats, StatMetric, SystemResult } from './types.js';
import { randomizationFloor } from './units.js';

export { DEFAULT_AR_TRIALS, DEFAULT_BOOTSTRAP_SAMPLES, DEFAULT_SEED } from './spec.js';

export interface ResampleOptions {
  /** NumPy seed (default 12345, sacreBLEU's); null draws one (spec.ts resolveSeed). */
  seed?: Seed;
  /**
   * Sum bootstrap statistics in float32, as sacreBLEU does (`np.array(stats, dtype='float32')`).
   * Integer sums below 2^24 are exact either way; past that the float32 rounding is reproduced.
   * Default: the metric's own rule (StatMetric.float32; BLEU's is true), so that every command
   * that resamples a metric sums it the same way.
   */
  float32?: boolean;
  /**
   * sacreBLEU's p-values to the letter, for `todeval sacrebleu`: (c + 1) / (samples + 1) even for a
   * system identical to the baseline, randomization always drawn (never the exact test on few
   * items) and its p-values not floored. Default: todeval's (p = 1 for identical statistics, the
   * exact test and the floor, docs/significance.md).
   */
  asSacrebleu?: boolean;
}

function float32Rule(metric: StatMetric, opts: ResampleOptions): boolean {
  return opts.float32 ?? metric.float32 === true;
}

function itemCount(stats: ItemStats, width: number, what: string): number {
  if (stats.length % width !== 0) throw new Error(`${what}: ${stats.length} statistics are not rows of ${width}`);
  return stats.length / width;
}

function checkSystems(baseline: ItemStats, systems: readonly ItemStats[], metric: StatMetric): number {
  const n = itemCount(baseline, metric.width, 'baseline');
  systems.forEach((s, k) => {
    const m = itemCount(s, metric.width, `system ${k + 1}`);
    if (m !== n) throw new Error(`system ${k + 1} has ${m} items, the baseline ${n}: paired tests need the same items`);
  });
  if (n === 0) throw new Error('no items to resample');
  return n;
}

/** Column sums in item order (exact for integer statistics). */
export function columnSums(stats: ItemStats, width: number): Float64Array {
  const sums = new Float64Array(width);
  for (let i = 0; i < stats.length; i++) sums[i % width] += stats[i];
  return sums;
}

function scoreOf(stats: ItemStats, metric: StatMetric): number {
  return metric.score(columnSums(stats, metric.width), 0);
}

function identical(a: ItemStats, b: ItemStats): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** sacreBLEU's `estimate_ci`: sorted scores, the n//40-th from each end, mean of the sorted array. */
export function estimateCi(scores: ArrayLike<number>): Omit<ConfidenceResult, 'score'> {
  const sorted = Float64Array.from(scores).sort();
  const n = sorted.length;
  const lowerIdx = Math.floor(n / 40);
  const upperIdx = n - lowerIdx - 1;
  const low = sorted[lowerIdx];
  const high = sorted[upperIdx];
  return { mean: numpyMean(sorted), ci: 0.5 * (high - low), low, high };
}

/** sacreBLEU's `_compute_p_value`: (c + 1) / (n + 1), c the statistics strictly above `observed`. */
export function pValueOf(stats: ArrayLike<number>, observed: number): number {
  let c = 0;
  for (let i = 0; i < stats.length; i++) if (stats[i] > observed) c++;
  return (c + 1) / (stats.length + 1);
}

/**
 * The distinct statistic columns of several systems: a column equal item for item to the same
 * column of an earlier system is summed once and shared (denominators usually are: validation,
 * SER's checked values and BLEU's reference length depend on the data, not on the system).
 * `source[c]` is the (system, column) summed as distinct column c; `columnOf[s * d + j]` is the
 * distinct column holding system s's column j.
 */
function distinctColumns(systems: readonly ItemStats[], d: number, n: number): { source: [number, number][]; columnOf: Int32Array } {
  const source: [number, number][] = [];
  const columnOf = new Int32Array(systems.length * d);
  for (let s = 0; s < systems.length; s++) {
    for (let j = 0; j < d; j++) {
      let found = -1;
      for (let c = 0; c < source.length && found < 0; c++) {
        const [s2, j2] = source[c];
        if (j2 !== j) continue;
        const a = systems[s];
        const b = systems[s2];
        let same = true;
        for (let i = 0; i < n && same; i++) same = a[i * d + j] === b[i * d + j];
        if (same) found = c;
      }
      if (found < 0) {
        found = source.length;
        source.push([s, j]);
      }
      columnOf[s * d + j] = found;
    }
  }
  return { source, columnOf };
}

/**
 * Bootstrap scores of several systems over the same draws: `samples` rows of `choice(n, n)` from
 * `rows`, each system's statistics summed over the drawn items. Returns one Float64Array of
 * `samples` scores per system; yields after every block of SAMPLE_BLOCK resamples.
 */
function* bootstrapScores(systems: readonly ItemStats[], metric: StatMetric, n: number, samples: number, rows: DrawRows, float32: boolean): Steps<Float64Array[]> {
  // Each system's scores, the differences and estimateCi's sorted copy: (k + 2) doubles a resample.
  assertFits(samples, 8 * (systems.length + 2), 'bootstrap resamples');
  const d = metric.width;
  const { source, columnOf } = distinctColumns(systems, d, n);
  const width = source.length;
  // Items outermost, distinct columns inside: a drawn item touches one contiguous row.
  const data = new Float64Array(n * width);
  let maxAbs = 0;
  let integral = true;
  for (let c = 0; c < width; c++) {
    const [s, j] = source[c];
    const st = systems[s];
    for (let i = 0; i < n; i++) {
      const v = float32 ? Math.fround(st[i * d + j]) : st[i * d + j];
      data[i * width + c] = v;
      maxAbs = Math.max(maxAbs, Math.abs(v));
      if (!Number.isInteger(v)) integral = false;
    }
  }
  // A float32 sum of integers is exact while every partial sum stays below 2^24 (n draws of at most
  // maxAbs each): then the float64 sum below is the same number and the cheaper path is taken.
  const emulate = float32 && !(integral && n * maxAbs < 2 ** 24);
  const out = systems.map(() => new Float64Array(samples));
  const score = scorer(out, metric, columnOf, float32);
  const idx = new Int32Array(n);
  if (emulate) {
    const acc = new Float64Array(width);
    for (let t0 = 0; t0 < samples; t0 += SAMPLE_BLOCK) {
      float32Block(data, n, width, t0, Math.min(SAMPLE_BLOCK, samples - t0), rows, idx, acc, score);
      yield;
    }
    return out;
  }
  const { packed, fields, perRow } = packColumns(data, n, width);
  const block = Math.min(samples, SAMPLE_BLOCK);
  const counts = new Int32Array(n * block);
  const acc = new Float64Array(block * perRow);
  const unpacked = new Float64Array(width);
  for (let t0 = 0; t0 < samples; t0 += block) {
    const tb = Math.min(block, samples - t0);
    countedBlock(packed, n, perRow, block, tb, rows, idx, counts, acc);
    for (let u = 0; u < tb; u++) {
      unpack(acc, u * perRow, fields, unpacked);
      score(unpacked, t0 + u);
    }
    yield;
  }
  return out;
}

/**
 * Writes every system's score of one resample's distinct-column sums into out[s][t]; with float32
 * sums, by the metric's float32 score where it has one (sacreBLEU's float32 ratios of chrF and TER).
 */
function scorer(out: Float64Array[], metric: StatMetric, columnOf: Int32Array, float32: boolean): (acc: Float64Array, t: number) => void {
  const d = metric.width;
  const row = new Float64Array(d);
  const score = float32 && metric.scoreFloat32 ? metric.scoreFloat32.bind(metric) : metric.score.bind(metric);
  return (acc, t) => {
    for (let s = 0; s < out.length; s++) {
      for (let j = 0; j < d; j++) row[j] = acc[columnOf[s * d + j]];
      out[s][t] = score(row, 0);
    }
  };
}

/** NumPy adds the drawn rows in order into a float32 accumulator: resamples t0 .. t0 + tb. */
function float32Block(data: Float64Array, n: number, width: number, t0: number, tb: number, rows: DrawRows, idx: Int32Array, acc: Float64Array, score: (acc: Float64Array, t: number) => void): void {
  for (let t = t0; t < t0 + tb; t++) {
    rows.next(idx);
    acc.fill(0);
    for (let i = 0; i < n; i++) {
      const base = idx[i] * width;
      for (let q = 0; q < width; q++) acc[q] = Math.fround(acc[q] + data[base + q]);
    }
    score(acc, t);
  }
}

/**
 * One block of `tb` resamples' packed sums into acc (resample u at u * perRow). A resample's sums
 * are each item's row times the number of times it was drawn: each item's row is read once per
 * block and added into the block's accumulators, which stay in cache, instead of streaming every
 * row through memory once per sample.
 */
function countedBlock(packed: Float64Array, n: number, perRow: number, block: number, tb: number, rows: DrawRows, idx: Int32Array, counts: Int32Array, acc: Float64Array): void {
  counts.fill(0);
  for (let u = 0; u < tb; u++) {
    rows.next(idx);
    for (let i = 0; i < n; i++) counts[idx[i] * block + u]++;
  }
  acc.fill(0);
  // Unrolled by four: V8 does not vectorize, and the unrolled loop runs about 20% faster.
  const by4 = perRow - (perRow % 4);
  for (let i = 0; i < n; i++) {
    const base = i * perRow;
    const at = i * block;
    for (let u = 0; u < tb; u++) {
      const c = counts[at + u];
      if (c === 0) continue;
      const into = u * perRow;
      let q = 0;
      for (; q < by4; q += 4) {
        acc[into + q] += c * packed[base + q];
        acc[into + q + 1] += c * packed[base + q + 1];
        acc[into + q + 2] += c * packed[base + q + 2];
        acc[into + q + 3] += c * packed[base + q + 3];
      }
      for (; q < perRow; q++) acc[into + q] += c * packed[base + q];
    }
  }
}

/** Where a column lives in a packed row: which number, and at which power of two. */
interface PackedField {
  column: number;
  slot: number;
  shift: number;
}

/**
 * Several small non-negative integer columns per double: a resample's sum of a column is at most
 * n times its largest value (the counts of a resample add up to n), so if those bounds' bit widths
 * add up to at most 53 the columns' sums share one exact double without carrying into each other.
 * BLEU's ten counts per system need about 19 bits each, so two share a double and the
 * multiply-adds of the bootstrap halve. Other columns keep a double of their own.
 */
function packColumns(data: Float64Array, n: number, width: number): { packed: Float64Array; fields: PackedField[]; perRow: number } {
  const bits: number[] = [];
  for (let c = 0; c < width; c++) {
    let max = 0;
    let ok = true;
    for (let i = 0; i < n && ok; i++) {
      const v = data[i * width + c];
      if (v < 0 || !Number.isInteger(v)) ok = false;
      else if (v > max) max = v;
    }
    const bound = n * max;
    bits.push(ok && bound < 2 ** 53 ? Math.max(1, Math.ceil(Math.log2(bound + 1))) : 0);
  }
  const fields: PackedField[] = [];
  let slot = -1;
  let used = 53;
  for (let c = 0; c < width; c++) {
    const b = bits[c];
    if (b === 0 || used + b > 53) {
      slot++;
      used = 0;
    }
    fields.push({ column: c, slot, shift: used });
    used = b === 0 ? 53 : used + b;
  }
  const perRow = slot + 1;
  const packed = new Float64Array(n * perRow);
  for (let i = 0; i < n; i++) {
    for (const f of fields) packed[i * perRow + f.slot] += data[i * width + f.column] * 2 ** f.shift;
  }
  return { packed, fields, perRow };
}

/** The column sums out of packed sums (exact: each field's sum stays below its power of two). */
function unpack(acc: Float64Array, at: number, fields: readonly PackedField[], out: Float64Array): void {
  for (let k = fields.length - 1; k >= 0; k--) {
    const f = fields[k];
    const v = acc[at + f.slot];
    if (k + 1 < fields.length && fields[k + 1].slot === f.slot) continue;
    // The slot's last field: peel the slot's fields from the highest shift down.
    let rest = v;
    for (let m = k; m >= 0 && fields[m].slot === f.slot; m--) {
      const g = fields[m];
      const scale = 2 ** g.shift;
      const value = g.shift === 0 ? rest : Math.floor(rest / scale);
      out[g.column] = value;
      rest -= value * scale;
    }
  }
}

/** Bootstrap resamples per pass of bootstrapScores. */
const SAMPLE_BLOCK = 64;

/** Bootstrap confidence of one system (sacreBLEU's `--confidence`, `_bootstrap_resample`). */
export function bootstrapConfidence(stats: ItemStats, metric: StatMetric, opts: ResampleOptions & { samples?: number } = {}): ConfidenceResult {
  return runSteps(bootstrapConfidenceSteps(stats, metric, opts));
}

export function* bootstrapConfidenceSteps(stats: ItemStats, metric: StatMetric, opts: ResampleOptions & { samples?: number } = {}): Steps<ConfidenceResult> {
  const n = itemCount(stats, metric.width, 'system');
  if (n === 0) throw new Error('no items to resample');
  const samples = opts.samples ?? DEFAULT_BOOTSTRAP_SAMPLES;
  const [scores] = yield* bootstrapScores([stats], metric, n, samples, seededRows(resolveSeed(opts.seed).seed, n, samples), float32Rule(metric, opts));
  return { score: scoreOf(stats, metric), ...estimateCi(scores) };
}

export interface PairedResult {
  baseline: SystemResult;
  systems: SystemResult[];
  /** Items (units) resampled. */
  units: number;
  /**
   * Randomization only: every one of the 2^units swap patterns was counted (2^units was no more
   * than the trials asked for), so p is the exact randomization p-value.
   */
  exact?: boolean;
}

/**
 * Paired bootstrap resampling (sacreBLEU `--paired-bs`): every system against the baseline on the
 * same `samples` resamples of the items; each gets a p-value, a bootstrap mean and a 95% interval.
 */
export function pairedBootstrap(baseline: ItemStats, systems: readonly ItemStats[], metric: StatMetric, opts: ResampleOptions & { samples?: number } = {}): PairedResult {
  return runSteps(pairedBootstrapSteps(baseline, systems, metric, opts));
}

export function* pairedBootstrapSteps(baseline: ItemStats, systems: readonly ItemStats[], metric: StatMetric, opts: ResampleOptions & { samples?: number } = {}): Steps<PairedResult> {
  const n = checkSystems(baseline, systems, metric);
  const samples = opts.samples ?? DEFAULT_BOOTSTRAP_SAMPLES;
  const [base, ...rest] = yield* bootstrapScores([baseline, ...systems], metric, n, samples, seededRows(resolveSeed(opts.seed).seed, n, samples), float32Rule(metric, opts));
  const baseScore = scoreOf(baseline, metric);
  const diffs = new Float64Array(samples);
  return {
    units: n,
    baseline: { score: baseScore, pValue: null, ...estimateCi(base) },
    systems: systems.map((sys, k) => {
      const score = scoreOf(sys, metric);
      const scores = rest[k];
      for (let t = 0; t < samples; t++) diffs[t] = Math.abs(scores[t] - base[t]);
      const mean = numpyMean(diffs);
      for (let t = 0; t < samples; t++) diffs[t] -= mean;
      const pValue = identical(sys, baseline) && !opts.asSacrebleu ? 1 : pValueOf(diffs, Math.abs(baseScore - score));
      return { score, pValue, ...estimateCi(scores) };
    }),
  };
}

/**
 * Trial selectors of approximate randomization, eight items to a byte: bit b of the byte at
 * [g * trials + t] says whether item 8g + b swaps in trial t (NumPy's bool draw, made in C order
 * over (trials, n), stored group-major so that a pass over one group's trials reads contiguously).
 */
function* randomizationCodes(n: number, trials: number, gen: NumpyGenerator): Steps<Uint8Array> {
  const groups = Math.ceil(n / 8);
  const codes = new Uint8Array(trials * groups);
  const stream = gen.boolStream();
  const tail = n % 8;
  const full = tail === 0 ? groups : groups - 1;
  for (let t0 = 0; t0 < trials; t0 += TRIAL_BLOCK) {
    const end = Math.min(trials, t0 + TRIAL_BLOCK);
    for (let t = t0; t < end; t++) {
      for (let g = 0; g < full; g++) codes[g * trials + t] = stream.nextByte();
      if (tail !== 0) {
        let b = 0;
        for (let k = 0; k < tail; k++) b |= stream.next() << k;
        codes[full * trials + t] = b;
      }
    }
    yield;
  }
  return codes;
}

/** Every swap pattern of n items once, in randomizationCodes' layout: pattern t swaps the items of t's set bits. */
function allSwapPatterns(n: number): Uint8Array {
  const patterns = 2 ** n;
  const groups = Math.ceil(n / 8);
  const codes = new Uint8Array(patterns * groups);
  for (let g = 0; g < groups; g++) {
    for (let t = 0; t < patterns; t++) codes[g * patterns + t] = Math.floor(t / 2 ** (8 * g)) & 0xff;
  }
  return codes;
}

/**
 * Ties of the exact test: a pattern counts when its statistic reaches the observed one. The
 * statistics of integer counts are exact, and a pattern equal to the observed one (itself, its
 * complement) computes the same sums; for other statistics the sums of at most 30 terms (2^n no
 * more than a count that fits memory) round at about 30 * 2^-53 relative, which a score's
 * condition number would have to amplify ten-thousand-fold to reach 1e-9.
 */
const TIE = 1e-9;

/**
 * Paired approximate randomization (sacreBLEU `--paired-ar`): in each trial every item's
 * statistics go to pseudo-system a from the baseline (and to b from the system) or the other way
 * round; p counts trials whose |score(a) - score(b)| exceeds the observed difference. With
 * `confidenceSamples` > 0, bootstrap intervals as sacreBLEU's `n_ar_confidence`: the baseline's from
 * a fresh generator, each system's from draws that follow the trials'.
 *
 * With few items (2^n no more than the trials), the test is exact instead: all 2^n patterns, each
 * once, p = the share of patterns whose statistic reaches the observed one (the identity pattern
 * included, so p ≥ 2 / 2^n). Drawn p-values are floored at 2 / 2^n (units.ts).
 */
export function pairedApproximateRandomization(
  baseline: ItemStats,
  systems: readonly ItemStats[],
  metric: StatMetric,
  opts: ResampleOptions & { trials?: number; confidenceSamples?: number } = {},
): PairedResult {
  return runSteps(pairedApproximateRandomizationSteps(baseline, systems, metric, opts));
}

export function* pairedApproximateRandomizationSteps(
  baseline: ItemStats,
  systems: readonly ItemStats[],
  metric: StatMetric,
  opts: ResampleOptions & { trials?: number; confidenceSamples?: number } = {},
): Steps<PairedResult> {
  const n = checkSystems(baseline, systems, metric);
  const asked = opts.trials ?? DEFAULT_AR_TRIALS;
  const exact = !opts.asSacrebleu && n < 31 && 2 ** n <= asked;
  const trials = exact ? 2 ** n : asked;
  const groups = Math.ceil(n / 8);
  // The selectors (a byte per group of eight items) and the statistics.
  assertFits(trials, groups + 8, 'randomization trials');
  const seed = resolveSeed(opts.seed).seed;
  const float32 = float32Rule(metric, opts);
  const d = metric.width;
  const gen = new NumpyGenerator(seed);
  const codes = exact ? allSwapPatterns(n) : yield* randomizationCodes(n, trials, gen);
  const confidence = opts.confidenceSamples ?? -1;
  // The systems' intervals use draws that follow the trials' in the same generator.
  const systemCi = confidence > 0 ? yield* bootstrapScores(systems, metric, n, confidence, liveRows(gen, n), float32) : undefined;
  const baseScore = scoreOf(baseline, metric);
  const baseTotals = columnSums(baseline, d);
  const table = new Float64Array(groups * 256 * d);
  const diff = new Float64Array(8 * d);
  const stats = new Float64Array(trials);

  const baselineCi = confidence > 0 ? yield* bootstrapConfidenceSteps(baseline, metric, { seed, samples: confidence, float32 }) : undefined;
  const results: SystemResult[] = [];
  for (let k = 0; k < systems.length; k++) {
    const sys = systems[k];
    const score = scoreOf(sys, metric);
    const sysTotals = columnSums(sys, d);
    // a = system totals + sum over swapped items of (baseline - system); b = baseline totals - that.
    // Per group of eight items, the 256 possible swap patterns' sums are tabled once per system.
    const live: number[] = [];
    for (let g = 0; g < groups; g++) {
      diff.fill(0);
      let any = false;
      for (let bit = 0; bit < 8 && g * 8 + bit < n; bit++) {
        const i = g * 8 + bit;
        for (let j = 0; j < d; j++) {
          const v = baseline[i * d + j] - sys[i * d + j];
          diff[bit * d + j] = v;
          if (v !== 0) any = true;
        }
      }
      if (!any) continue;
      live.push(g);
      const base = g * 256 * d;
      for (let j = 0; j < d; j++) table[base + j] = 0;
      // Pattern c = (c without its top bit) + the top bit's item.
      for (let c = 1; c < 256; c++) {
        const top = 31 - Math.clz32(c);
        const prev = base + (c ^ (1 << top)) * d;
        const into = base + c * d;
        for (let j = 0; j < d; j++) table[into + j] = table[prev + j] + diff[top * d + j];
      }
    }
    yield* randomizationStats(codes, Int32Array.from(live), table, d, sysTotals, baseTotals, metric, stats);
    const observed = Math.abs(baseScore - score);
    let pValue: number;
    if (opts.asSacrebleu) pValue = pValueOf(stats, observed);
    else if (identical(sys, baseline)) pValue = 1;
    else if (exact) {
      let reach = 0;
      for (let t = 0; t < trials; t++) if (stats[t] >= observed * (1 - TIE)) reach++;
      pValue = reach / trials;
    } else pValue = Math.max(pValueOf(stats, observed), randomizationFloor(n));
    const ci = systemCi ? estimateCi(systemCi[k]) : undefined;
    results.push({ score, pValue, mean: ci?.mean ?? null, ci: ci?.ci ?? null, low: ci?.low ?? null, high: ci?.high ?? null });
  }
  return {
    units: n,
    exact,
    baseline: { score: baseScore, pValue: null, mean: baselineCi?.mean ?? null, ci: baselineCi?.ci ?? null, low: baselineCi?.low ?? null, high: baselineCi?.high ?? null },
    systems: results,
  };
}

/**
 * |score(a) - score(b)| of every trial: a = system totals + the tabled differences of the items the
 * trial swaps, b = baseline totals - the same (out[t] for trial t). Trials go in blocks whose
 * accumulators are read sequentially while one group's 256-row table stays in the L1 cache: looking
 * tables up trial by trial instead misses the cache on almost every lookup (4x slower measured).
 */
function* randomizationStats(
  codes: Uint8Array,
  live: Int32Array,
  table: Float64Array,
  d: number,
  sysTotals: Float64Array,
  baseTotals: Float64Array,
  metric: StatMetric,
  out: Float64Array,
): Steps<void> {
  const trials = out.length;
  const block = Math.min(trials, TRIAL_BLOCK);
  const acc = new Float64Array(block * d);
  const a = new Float64Array(d);
  const b = new Float64Array(d);
  for (let t0 = 0; t0 < trials; t0 += block) {
    trialBlock(codes, live, table, d, trials, t0, Math.min(block, trials - t0), acc);
    const tn = Math.min(block, trials - t0);
    for (let u = 0; u < tn; u++) {
      for (let j = 0; j < d; j++) {
        a[j] = sysTotals[j] + acc[u * d + j];
        b[j] = baseTotals[j] - acc[u * d + j];
      }
      out[t0 + u] = Math.abs(metric.score(a, 0) - metric.score(b, 0));
    }
    yield;
  }
}

/** The tabled differences of trials t0 .. t0 + tn summed into acc (trial u at u * d). */
function trialBlock(codes: Uint8Array, live: Int32Array, table: Float64Array, d: number, trials: number, t0: number, tn: number, acc: Float64Array): void {
  const by4 = d - (d % 4);
  acc.fill(0);
  for (let q = 0; q < live.length; q++) {
    const g = live[q];
    const tableAt = g * 256 * d;
    const codeAt = g * trials + t0;
    for (let u = 0; u < tn; u++) {
      const at = tableAt + codes[codeAt + u] * d;
      const ab = u * d;
      let j = 0;
      for (; j < by4; j += 4) {
        acc[ab + j] += table[at + j];
        acc[ab + j + 1] += table[at + j + 1];
        acc[ab + j + 2] += table[at + j + 2];
        acc[ab + j + 3] += table[at + j + 3];
      }
      for (; j < d; j++) acc[ab + j] += table[at + j];
    }
  }
}

/** Trials per pass of randomizationStats (their accumulators: 8192 * width doubles). */
const TRIAL_BLOCK = 8192;
