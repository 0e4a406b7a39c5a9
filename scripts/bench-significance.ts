/**
 * sacreBLEU's paired tests at its WMT17 scale, ours and sacreBLEU's side by side in one run:
 *   npm run bench:significance [-- --sacrebleu CHECKOUT] [--python /usr/bin/python3] [--tokenize none] [--tests bs,ar]
 * The work: 16 systems of 3,004 segments, paired bootstrap (1,000 resamples) and approximate
 * randomization (10,000 trials) of 15 systems against the first, statistics extraction included
 * on both sides. With --sacrebleu (a sacreBLEU source checkout with its test/ folder) both run on
 * the WMT17 systems sacreBLEU's test suite ships and sacreBLEU is timed (its python needs NumPy and
 * sacreBLEU's dependencies); without it ours runs on a synthetic corpus of the same shape and
 * sacreBLEU is skipped with a message. Prints wall and CPU seconds, the ratios, where our time goes
 * and the load average (timings on a shared machine are noisy: compare CPU seconds).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_AR_TRIALS, DEFAULT_BOOTSTRAP_SAMPLES, pairedApproximateRandomization, pairedBootstrap } from '../src/metrics/significance/paired.js';
import { NumpyGenerator } from '../src/metrics/significance/pcg64.js';
import { bleuStatMetric, compareBleu, type BleuComparison } from '../src/metrics/text/bleu-significance.js';
import type { BleuTokenizerName } from '../src/metrics/text/bleu-tokenizers.js';
import { BLEU_STATS_WIDTH, BleuReferences } from '../src/metrics/text/bleu.js';
import { benchCorpus, timed } from './lib/text-bench-corpus.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const checkout = arg('--sacrebleu');
const python = arg('--python') ?? '/usr/bin/python3';
const tokenize = (arg('--tokenize') ?? 'none') as BleuTokenizerName;
const tests = new Set((arg('--tests') ?? 'bs,ar').split(','));
const samples = DEFAULT_BOOTSTRAP_SAMPLES;
const trials = DEFAULT_AR_TRIALS;

// compareBleu takes {name, lines} systems.
const read = await benchCorpus(checkout, python);
const corpus = { ...read, systems: read.systems.map(([name, lines]) => ({ name, lines })) };
const n = corpus.refs[0].length;
console.log(`data: ${corpus.source}; tokenize ${tokenize}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);

// Ours, end to end (statistics extraction included), as `todeval bleu --paired-bs|--paired-ar` runs.
const oursBs = tests.has('bs') ? timed(() => compareBleu(corpus.refs, corpus.systems, { tokenize, test: 'bs', samples })) : undefined;
const oursAr = tests.has('ar') ? timed(() => compareBleu(corpus.refs, corpus.systems, { tokenize, test: 'ar', samples: trials })) : undefined;

// Where our time goes: the same work in its parts.
const extraction = timed(() => {
  const refs = new BleuReferences(corpus.refs, { tokenize });
  return corpus.systems.map((s) => refs.segmentStats(s.lines));
});
const stats = extraction.value;
const metric = bleuStatMetric({ tokenize });
const choiceDraws = timed(() => {
  const gen = new NumpyGenerator(12345);
  const row = new Int32Array(n);
  for (let t = 0; t < samples; t++) gen.choice(n, row);
});
const boolDraws = timed(() => {
  const s = new NumpyGenerator(12345).boolStream();
  for (let i = 0; i < trials * n; i++) s.next();
});
const sums = new Float64Array(BLEU_STATS_WIDTH);
for (let i = 0; i < stats[0].length; i++) sums[i % BLEU_STATS_WIDTH] += stats[0][i];
const scoring = timed(() => {
  let x = 0;
  for (let i = 0; i < 200_000; i++) x += metric.score(sums, 0);
  return x;
});
const perScore = scoring.cpu / 200_000;
const bsTest = timed(() => pairedBootstrap(stats[0], stats.slice(1), metric, { samples, float32: true }));
const arTest = timed(() => pairedApproximateRandomization(stats[0], stats.slice(1), metric, { trials }));
const bsScores = corpus.systems.length * samples;
const arScores = 2 * (corpus.systems.length - 1) * trials;

const s = (x: number) => `${x.toFixed(2)} s`;
console.log(`\nours (CPU seconds of one run; wall in brackets):`);
if (oursBs) console.log(`  paired bootstrap, ${samples} resamples:        ${s(oursBs.cpu)} (${s(oursBs.wall)})`);
if (oursAr) console.log(`  approximate randomization, ${trials} trials: ${s(oursAr.cpu)} (${s(oursAr.wall)})`);
console.log(`where it goes:`);
console.log(`  statistics of ${corpus.systems.length} systems (tokenize, n-grams, clipping): ${s(extraction.cpu)} (in each run above)`);
console.log(`  bootstrap: ${s(bsTest.cpu)} = draws ${s(choiceDraws.cpu)} (${samples} x ${n} Lemire integers) + ${bsScores.toLocaleString('en-US')} BLEU scores ${s(bsScores * perScore)} + resample sums ${s(Math.max(0, bsTest.cpu - choiceDraws.cpu - bsScores * perScore))}`);
console.log(`  randomization: ${s(arTest.cpu)} = draws ${s(boolDraws.cpu)} (${trials} x ${n} bits) + ${arScores.toLocaleString('en-US')} BLEU scores ${s(arScores * perScore)} + table sums ${s(Math.max(0, arTest.cpu - boolDraws.cpu - arScores * perScore))}`);

if (!checkout) {
  console.log('\nsacreBLEU: skipped (pass --sacrebleu CHECKOUT, a sacreBLEU source checkout, to time it on its WMT17 systems beside ours)');
  process.exit(0);
}

// sacreBLEU on the same systems, same seed, in one Python process per test.
const tmp = mkdtempSync(path.join(tmpdir(), 'todeval-bench-significance-'));
try {
  const dataFile = path.join(tmp, 'systems.json');
  writeFileSync(dataFile, JSON.stringify({ refs: corpus.refs, systems: corpus.systems.map((x) => [x.name, x.lines]) }));
  const script = `
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
os.environ['SACREBLEU_SEED'] = '12345'
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest
d = json.load(open(sys.argv[2]))
systems = [tuple(x) for x in d['systems']]
w0, c0 = time.perf_counter(), time.process_time()
metric = BLEU(references=d['refs'], tokenize=sys.argv[3])
sigs, scores = PairedTest(systems, {'BLEU': metric}, references=None, test_type=sys.argv[4], n_samples=int(sys.argv[5]))()
print(json.dumps({'wall': time.perf_counter() - w0, 'cpu': time.process_time() - c0, 'p': [r.p_value for r in scores['BLEU']]}))
`;
  const version = path.join(checkout, 'sacrebleu', 'version.py');
  if (!existsSync(version)) throw new Error(`${version} is absent: a git checkout needs one (scripts/significance-fixtures.py writes it)`);
  const runSacrebleu = (test: 'bs' | 'ar', count: number) => {
    const r = spawnSync(python, ['-c', script, checkout, dataFile, tokenize, test, String(count)], { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (r.status !== 0) throw new Error(`sacreBLEU failed: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as { wall: number; cpu: number; p: (number | null)[] };
  };
  const theirsBs = oursBs && runSacrebleu('bs', samples);
  const theirsAr = oursAr && runSacrebleu('ar', trials);
  const same = (ours: BleuComparison, theirs: { p: (number | null)[] }) =>
    ours.systems.every((x, i) => x.pValue === theirs.p[i] || (x.pValue === 1 && theirs.p[i] === 1 / (ours.n! + 1)));
  console.log(`\nsacreBLEU (${python}), same data and seed:`);
  if (oursBs && theirsBs) console.log(`  paired bootstrap:          ${s(theirsBs.cpu)} CPU (${s(theirsBs.wall)} wall); ours ${(theirsBs.cpu / oursBs.cpu).toFixed(1)}x faster in CPU, ${(theirsBs.wall / oursBs.wall).toFixed(1)}x in wall; p-values identical: ${same(oursBs.value, theirsBs) ? 'yes' : 'NO'}`);
  if (oursAr && theirsAr) console.log(`  approximate randomization: ${s(theirsAr.cpu)} CPU (${s(theirsAr.wall)} wall); ours ${(theirsAr.cpu / oursAr.cpu).toFixed(1)}x faster in CPU, ${(theirsAr.wall / oursAr.wall).toFixed(1)}x in wall; p-values identical: ${same(oursAr.value, theirsAr) ? 'yes' : 'NO'}`);
  console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
