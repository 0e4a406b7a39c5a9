// Significance that refuses to mislead (issue 31) and the one resample spec (issue 32): exact
// randomization on few units, p never below what the units allow, the bootstrap flagged on too few
// units, resample counts bounded with a clear error, `--seed none` drawn, printed and signed, BLEU's
// float32 rule the same in `bleu`, `compare` and `--confidence`, and the commands ending on
// SIGTERM within a second with 143 and nothing written.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { runConfidence } from '../src/metrics/significance/confidence.js';
import { metricItems, ratioMetric } from '../src/metrics/significance/items.js';
import { bootstrapConfidence, pairedApproximateRandomization, pairedBootstrap } from '../src/metrics/significance/paired.js';
import { resampleSpec, testSignature } from '../src/metrics/significance/spec.js';
import type { StatMetric } from '../src/metrics/significance/types.js';
import { bootstrapCoverage95, MIN_BOOTSTRAP_UNITS, randomizationFloor, studentTCentral } from '../src/metrics/significance/units.js';
import { bleuStatMetric, bleuTestSignature, compareBleu } from '../src/metrics/text/bleu-significance.js';
import { compareRuns } from '../src/report/stats/compare.js';
import type { ItemSource } from '../src/report/stats/item-files.js';
import { makeSignature } from '../src/util/signature.js';
import { CLI_ARGV, runCli } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';

/** |score(a) - score(b)| over every swap pattern, counted here without the library's tables. */
function enumeratedP(base: number[][], sys: number[][], metric: StatMetric): number {
  const n = base.length;
  const w = metric.width;
  const stat = (mask: number) => {
    const a = new Float64Array(w);
    const b = new Float64Array(w);
    for (let i = 0; i < n; i++) {
      const swap = (mask >> i) & 1;
      for (let j = 0; j < w; j++) {
        a[j] += swap ? base[i][j] : sys[i][j];
        b[j] += swap ? sys[i][j] : base[i][j];
      }
    }
    return Math.abs(metric.score(a, 0) - metric.score(b, 0));
  };
  const observed = stat(0);
  let reach = 0;
  for (let mask = 0; mask < 2 ** n; mask++) if (stat(mask) >= observed * (1 - 1e-9)) reach++;
  return reach / 2 ** n;
}

const flat = (rows: number[][]) => Float64Array.from(rows.flat());

describe('randomization on few units', () => {
  const rate = ratioMetric('acc');
  const base = [[3, 4], [1, 5], [4, 4], [1, 3], [2, 2]];
  const sys = [[1, 4], [0, 5], [2, 4], [0, 3], [0, 2]];

  it('counts every swap pattern when 2^n is at most the trials: the exact p-value, never below 2 / 2^n', () => {
    const r = pairedApproximateRandomization(flat(base), [flat(sys)], rate, { trials: 10000 });
    expect(r.exact).toBe(true);
    expect(r.systems[0].pValue).toBe(enumeratedP(base, sys, rate));
    // The system loses on every unit: only itself and its complement reach the observed difference.
    expect(r.systems[0].pValue).toBe(2 / 2 ** 5);
    // The seed does not matter to an exact test.
    expect(pairedApproximateRandomization(flat(base), [flat(sys)], rate, { trials: 10000, seed: 7 }).systems[0].pValue).toBe(r.systems[0].pValue);
  });

  it('on BLEU too, with mixed winners', () => {
    const refs = [['the cat sat on the mat', 'a dog ran in the park today', 'we booked the hotel for two nights']];
    const a = { name: 'a', lines: ['the cat sat on a mat', 'a dog ran in the park', 'we booked a hotel for two nights'] };
    const b = { name: 'b', lines: ['the cat sat on the mat', 'dog ran park today', 'booked the hotel for nights'] };
    const r = compareBleu(refs, [a, b], { test: 'ar' });
    expect(r.exact).toBe(true);
    expect(r.segments).toBe(3);
    const m = bleuStatMetric();
    // Per-segment statistics from BLEU of each single segment (BLEU's own rows).
    const rows = (lines: string[]) => lines.map((_, i) => Array.from(compareBleuSegments(refs, lines, i)));
    expect(r.systems[1].pValue).toBe(enumeratedP(rows(a.lines), rows(b.lines), m));
    expect(r.systems[1].pValue).toBeGreaterThanOrEqual(2 / 8);
  });

  it('a drawn p-value is floored at 2 / 2^n: 14 units, 10000 trials (2^14 > 10000)', () => {
    expect(randomizationFloor(14)).toBe(2 / 2 ** 14);
    const b = Array.from({ length: 14 }, () => [5, 5]);
    const s = Array.from({ length: 14 }, () => [0, 5]);
    const r = pairedApproximateRandomization(flat(b), [flat(s)], rate, { trials: 10000 });
    expect(r.exact).toBe(false);
    // sacreBLEU's (0 + 1) / (10000 + 1) would be below what 14 units allow.
    expect(r.systems[0].pValue).toBe(2 / 2 ** 14);
  });
});

/** BLEU's statistics row of segment i (the sum of the rows is what compareBleu scores). */
function compareBleuSegments(refs: string[][], lines: string[], i: number): number[] {
  const one = compareBleu([[refs[0][i]]], [{ name: 's', lines: [lines[i]] }]).systems[0];
  return [one.sysLen, one.refLen, ...one.counts, ...one.totals];
}

describe('the bootstrap on too few units', () => {
  it('the threshold comes from the t distribution: a 95% interval of n units covers P(|T_{n-1}| <= 1.96 sqrt((n-1)/n))', () => {
    // Student's t table: the 97.5% points of 1, 4 and 9 degrees of freedom.
    expect(studentTCentral(12.7062047, 1)).toBeCloseTo(0.95, 6);
    expect(studentTCentral(2.7764451, 4)).toBeCloseTo(0.95, 6);
    expect(studentTCentral(2.2621572, 9)).toBeCloseTo(0.95, 6);
    expect(1 - bootstrapCoverage95(MIN_BOOTSTRAP_UNITS)).toBeLessThanOrEqual(0.075);
    expect(1 - bootstrapCoverage95(MIN_BOOTSTRAP_UNITS - 1)).toBeGreaterThan(0.075);
    expect(MIN_BOOTSTRAP_UNITS).toBe(18);
  });

  it('flags lowUnits in compare and --confidence, not above the threshold', () => {
    const run = (name: string, n: number, ok: (i: number) => boolean): ItemSource => ({
      file: `${name}.jsonl`,
      kind: 'evaluate-items',
      name,
      signature: makeSignature({ metric: 'x', predictions: name }),
      items: { acc: metricItems(ratioMetric('Acc'), 'dialogue', Array.from({ length: n }, (_, i) => `d${i}`), null, Array.from({ length: n }, (_, i) => [ok(i) ? 1 : 0, 1])) },
    });
    const few = compareRuns([run('a', 3, () => true), run('b', 3, (i) => i > 0)]);
    expect(few.comparisons[0].lowUnits).toBe(true);
    const enough = compareRuns([run('a', MIN_BOOTSTRAP_UNITS, () => true), run('b', MIN_BOOTSTRAP_UNITS, (i) => i > 0)]);
    expect(enough.comparisons[0].lowUnits).toBeUndefined();
    const ar = compareRuns([run('a', 3, () => true), run('b', 3, (i) => i > 0)], { test: 'ar' });
    expect(ar.comparisons[0]).toMatchObject({ exact: true });
    expect(ar.comparisons[0].lowUnits).toBeUndefined();
    expect(runConfidence(run('a', 3, () => true).items).metrics.acc.lowUnits).toBe(true);
  });
});

describe('one resample spec', () => {
  it('resolves defaults once and writes the signature fields in sacreBLEU order', () => {
    const s = resampleSpec({ test: 'ar', confidence: true });
    expect(s).toMatchObject({ test: 'ar', n: 10000, confidenceN: 1000, seed: 12345, unit: 'dialogue' });
    expect(testSignature(s, 'turn')).toBe('bs:1000|ar:10000|seed:12345|unit:turn');
    expect(bleuTestSignature(2, { tokenize: 'intl' }, resampleSpec({ test: 'bs', samples: 50, seed: 3 }))).toBe('nrefs:2|bs:50|seed:3|case:mixed|eff:no|tok:intl|smooth:exp|version:2.x');
    expect(bleuTestSignature(1, {}, null)).toBe('nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x');
  });

  it('seed none is drawn once and signed', () => {
    const s = resampleSpec({ test: 'bs', seed: null });
    expect(Number.isSafeInteger(s.seed)).toBe(true);
    expect(s.seedLabel).toBe(s.seed);
    // The drawn seed repeats the run.
    const stats = flat([[1, 2], [0, 2], [2, 2]]);
    const m = ratioMetric('a');
    expect(bootstrapConfidence(stats, m, { seed: s.seed })).toEqual(bootstrapConfidence(stats, m, { seed: s.seed as number }));
  });

  it("BLEU's float32 rule is the metric's: compare and --confidence sum as `bleu` does past 2^24", () => {
    const f = JSON.parse(readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'significance', 'bleu-float32.json'), 'utf8')) as { seed: number; samples: number; stats: number[][]; mean: number; ci: number };
    const metric = bleuStatMetric();
    expect(metric.float32).toBe(true);
    const stats = Float64Array.from(f.stats.flat());
    // No float32 option given: the metric's rule applies, and sacreBLEU's rounded figures come out.
    const r = bootstrapConfidence(stats, metric, { samples: f.samples, seed: f.seed });
    expect(Math.abs(r.ci - f.ci)).toBeLessThan(1e-12);
    const ids = f.stats.map((_, i) => `s${i}`);
    const src = (name: string): ItemSource => ({ file: name, kind: 'evaluate-items', name, signature: makeSignature({ metric: 'x', predictions: name }), items: { bleu: metricItems(metric, 'item', ids, null, f.stats) } });
    const c = compareRuns([src('a'), src('b')], { samples: f.samples, seed: f.seed });
    expect(Math.abs(c.comparisons[0].systems[0].ci! - f.ci)).toBeLessThan(1e-12);
    expect(Math.abs(runConfidence({ bleu: metricItems(metric, 'item', ids, null, f.stats) }, { samples: f.samples, seed: f.seed }).metrics.bleu.ci - f.ci)).toBeLessThan(1e-12);
  });

  it('a resample count past the memory budget is refused, naming the largest that fits', () => {
    const stats = flat([[1, 2], [0, 2]]);
    expect(() => pairedBootstrap(stats, [stats], ratioMetric('a'), { samples: 1e12 })).toThrow(/1000000000000 bootstrap resamples need .* of memory \(32 bytes each\); at most \d+ fit in the/);
    expect(() => pairedApproximateRandomization(flat(Array.from({ length: 40 }, () => [1, 2])), [flat(Array.from({ length: 40 }, () => [0, 2]))], ratioMetric('a'), { trials: 1e12 })).toThrow(/randomization trials need/);
  });
});

// ---- the commands ----

const T = tempDir('significance-limits');
const refs = path.join(T, 'ref.txt');
const sysA = path.join(T, 'a.txt');
const sysB = path.join(T, 'b.txt');
{
  // 300 segments of a small vocabulary, from a fixed linear congruential sequence: read and
  // tokenized in moments, so a signal lands in the resampling (3 million resamples: minutes).
  let x = 12345;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31);
  const words = 'the a cat dog sat on mat hotel booked for two nights at restaurant please'.split(' ');
  const text = () => Array.from({ length: 300 }, () => Array.from({ length: 12 }, () => words[next() % words.length]).join(' ')).join('\n') + '\n';
  writeFileSync(refs, text());
  writeFileSync(sysA, text());
  writeFileSync(sysB, text());
  writeFileSync(path.join(T, 'r3.txt'), 'a b c d\ne f g h\ni j k l\n');
  writeFileSync(path.join(T, 'a3.txt'), 'a b c d\ne f g x\ni j k l\n');
  writeFileSync(path.join(T, 'b3.txt'), 'a x c d\ne f g x\ni y k l\n');
}

/** Starts `todeval ARGS`, waits for `ready(stderr)` (a line printed once its signal handlers are in place), waits `delayMs`, sends SIGTERM; how it ended and how long that took. */
async function terminate(args: string[], delayMs: number, ready: (stderr: string) => boolean, stdin: 'ignore' | 'pipe' = 'ignore'): Promise<{ code: number | null; signal: string | null; afterMs: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...CLI_ARGV, ...args], { cwd: REPO_ROOT, stdio: [stdin, 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((res) => child.on('exit', (code, signal) => res({ code, signal })));
  try {
    const start = Date.now();
    while (!ready(stderr)) {
      if (Date.now() - start > 90_000) throw new Error(`never ready: ${stderr}`);
      if (child.exitCode !== null) throw new Error(`ended before the signal: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, delayMs));
    expect(child.exitCode).toBeNull();
    const sent = performance.now();
    child.kill('SIGTERM');
    const end = await exited;
    return { ...end, afterMs: performance.now() - sent, stdout, stderr };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

describe('todeval bleu and compare as commands', () => {
  it('bleu --paired-bs-n 3000000 sent SIGTERM after 2 s exits 143 within 1 s, printing no result', async () => {
    // --seed none: the drawn-seed line says the resampling is about to start.
    const r = await terminate(['bleu', '-r', refs, '-i', sysA, sysB, '--paired-bs', '--paired-bs-n', '3000000', '--seed', 'none'], 2000, (e) => e.includes('drew seed'));
    expect(r).toMatchObject({ code: 143, signal: null, stdout: '' });
    expect(r.afterMs).toBeLessThan(1000);
  }, 120_000);

  it('bleu -i - on a pipe that stays silent ends on SIGTERM with 143', async () => {
    // --seed none with --confidence: the drawn-seed line comes before standard input is read.
    const r = await terminate(['bleu', '-r', refs, '-i', '-', '--confidence', '--seed', 'none'], 500, (e) => e.includes('drew seed'), 'pipe');
    expect(r).toMatchObject({ code: 143, signal: null, stdout: '' });
    expect(r.afterMs).toBeLessThan(1000);
  }, 120_000);

  it('--seed none prints the drawn seed, which is in the signature and repeats the run', async () => {
    const args = ['bleu', '-r', path.join(T, 'r3.txt'), '-i', path.join(T, 'a3.txt'), path.join(T, 'b3.txt'), '--paired-bs', '--paired-bs-n', '200', '--json'];
    const drawn = await runCli([...args, '--seed', 'none']);
    expect(drawn.code).toBe(0);
    const seed = /drew seed (\d+) \(repeat this run with --seed \1\)/.exec(drawn.stderr)?.[1];
    expect(seed).toBeDefined();
    const j = JSON.parse(drawn.stdout) as { seed: number; signature: string; lowUnits?: boolean };
    expect(j.seed).toBe(Number(seed));
    expect(j.signature).toContain(`|seed:${seed}|`);
    expect(j.lowUnits).toBe(true);
    const again = await runCli([...args, '--seed', seed!]);
    expect(JSON.parse(again.stdout)).toEqual(j);
  }, 120_000);

  it('counts without their switch, an empty corpus, and help text that says each default once', async () => {
    const r3 = ['-r', path.join(T, 'r3.txt'), '-i', path.join(T, 'a3.txt')];
    for (const [flag, needs] of [['--paired-bs-n', '--paired-bs'], ['--paired-ar-n', '--paired-ar'], ['--confidence-n', '--confidence']]) {
      const r = await runCli(['bleu', ...r3, flag, '5']);
      expect(r.code, flag).toBe(2);
      expect(r.stderr.trim()).toBe(`todeval: ${flag} has no effect without ${needs}: add ${needs}, or leave ${flag} out`);
    }
    writeFileSync(path.join(T, 'empty.txt'), '');
    const empty = await runCli(['bleu', '-r', path.join(T, 'empty.txt'), '-i', path.join(T, 'empty.txt')]);
    expect(empty.code).toBe(2);
    expect(empty.stderr.trim()).toMatch(/empty\.txt: the reference has no lines/);
    for (const cmd of ['bleu', 'compare', 'report', 'score', 'evaluate']) {
      const help = (await runCli([cmd, '--help'])).stdout.replace(/\n\s+/g, ' ');
      expect(help, cmd).not.toMatch(/\(default[ :][^)]*\)\s*\(default: /);
    }
  }, 240_000);

  it('a .gz file that is not gzip, or is cut short, is one line in words (not Z_DATA_ERROR)', async () => {
    const bad = path.join(T, 'bad.gz');
    writeFileSync(bad, 'plain text, not gzip\n');
    const r = await runCli(['bleu', '-r', bad, '-i', path.join(T, 'a3.txt')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`todeval: ${bad}: cannot read reference: not valid gzip data (named .gz, but corrupt or not compressed)`);
    const cut = path.join(T, 'cut.gz');
    writeFileSync(cut, gzipSync(readFileSync(refs)).subarray(0, 200));
    const c = await runCli(['bleu', '-r', cut, '-i', path.join(T, 'a3.txt')]);
    expect(c.code).toBe(2);
    expect(c.stderr.trim()).toBe(`todeval: ${cut}: cannot read reference: gzip data cut short (the file is truncated)`);
  }, 60_000);

  it('the memory bound as a command: one line, exit 2', async () => {
    const r = await runCli(['bleu', '-r', path.join(T, 'r3.txt'), '-i', path.join(T, 'a3.txt'), path.join(T, 'b3.txt'), '--paired-bs', '--paired-bs-n', '100000000'], { TODEVAL_RESAMPLE_MEMORY: String(2 ** 30) });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^todeval: 100000000 bootstrap resamples need 3\.0 GiB of memory \(32 bytes each\); at most 33554432 fit in the 1\.0 GiB resampling may use/);
    expect(existsSync(path.join(T, 'nothing'))).toBe(false);
  }, 60_000);
});
