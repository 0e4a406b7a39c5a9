/**
 * NLI runner throughput on this machine: the full-size random roberta-large on realistic SGD pairs
 * (premise = ground-truth system utterance, hypothesis = a candidate reference from the rules),
 * batched runner vs one pair at a time, in one run; plus the dedupe saving over the whole SGD
 * test candidate set (no model needed for that part).
 *
 *   npm run bench:nli -- [--model DIR] [--pairs 96] [--round 16] [--threads N] [--budget 2048] [--pad 0.15,1] [--batch-size 16]
 *     [--data-dir DIR] [--device cpu|auto|cuda] [--json FILE]
 *
 * The model defaults to .cache/models/large-random-roberta, built if absent with
 * `npm run model:random -- --size large --out .cache/models/large-random-roberta`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { loadDataset } from '../src/adapters/load.js';
import { resolveDataDir } from '../src/data/data-dir.js';
import { PairCache } from '../src/nli/pair-cache.js';
import { createNliRunner, type NliRunner, type NliRunnerStats } from '../src/nli/runner.js';
import type { NliDevice } from '../src/nli/session.js';
import type { NliPair, NliProbs } from '../src/nli/types.js';
import { buildValueIndex, expandTurn, loadRules } from '../src/rules/index.js';

const program = new Command('bench-nli')
  .option('--model <dir>', 'model directory', '.cache/models/large-random-roberta')
  .option('--pairs <n>', 'pairs in the timed set', (v) => Number(v), 96)
  .option('--threads <n>', 'intra-op threads (default: all cores)', (v) => Number(v))
  .option('--budget <n>', 'padded-token budget per batch', (v) => Number(v), 2048)
  .option('--pad <list>', 'padding caps to try (share of a batch that may be padding; 1 = no cap)', '0.15,1')
  .option('--batch-size <n>', 'max pairs per batch', (v) => Number(v), 16)
  .option('--device <d>', 'auto|cpu|cuda', 'cpu')
  .option('--data-dir <dir>', 'data directory (default: resolveDataDir)')
  .option('--round <n>', 'pairs per interleaved round', (v) => Number(v), 16)
  .option('--json <file>', 'also write the figures as JSON');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ model: string; pairs: number; threads?: number; budget: number; pad: string; batchSize: number; device: NliDevice; dataDir?: string; json?: string; round: number }>();

const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const modelDir = path.resolve(repoRoot, o.model);
if (!existsSync(path.join(modelDir, 'onnx', 'model.onnx')) && !existsSync(path.join(modelDir, 'model.onnx'))) {
  console.log(`building the random roberta-large into ${modelDir} ...`);
  execFileSync('npx', ['tsx', 'scripts/build-random-roberta.ts', '--size', 'large', '--out', modelDir], { cwd: repoRoot, stdio: 'inherit' });
}

// 1. The real SGD candidate set: every (system utterance, candidate reference) pair SGSAcc asks for.
const t0 = performance.now();
const dataDir = resolveDataDir(o.dataDir).dir;
const ds = loadDataset({ dataset: 'sgd', dataDir, split: 'test' });
const rules = loadRules('sgd');
const values = buildValueIndex(ds.turns);
const requested: NliPair[] = [];
for (const turn of ds.turns) {
  for (const ref of expandTurn(turn, ds.schema, rules, values)) {
    for (const h of ref.candidates) requested.push({ premise: turn.utterance, hypothesis: h });
  }
}
const unique = new Map<string, NliPair>();
for (const p of requested) unique.set(PairCache.key(p.premise, p.hypothesis), p);
const expandSeconds = (performance.now() - t0) / 1000;
console.log(
  `SGD test: ${ds.turns.length} system turns, ${requested.length} candidate pairs requested, ${unique.size} distinct ` +
    `-> issued/requested ${(unique.size / requested.length).toFixed(3)} (dedupe saves ${(100 * (1 - unique.size / requested.length)).toFixed(1)}%), ` +
    `expansion ${expandSeconds.toFixed(1)} s`,
);

// 2. The timed set: distinct pairs in the order SGSAcc submits them (turn by turn, each turn's
// candidates together), taken in blocks from four places spread over the test set, so it has the
// real mix of turn lengths and the real clustering of lengths among a turn's candidates.
const all = [...unique.values()];
const blocks = 4;
const perBlock = Math.ceil(o.pairs / blocks);
const sample: NliPair[] = [];
for (let b = 0; b < blocks && sample.length < o.pairs; b++) {
  const from = Math.floor((b * all.length) / blocks);
  sample.push(...all.slice(from, from + Math.min(perBlock, o.pairs - sample.length)));
}

interface Figure {
  mode: string;
  seconds: number;
  pairsPerSec: number;
  tokensPerSec: number;
  stats: NliRunnerStats;
}

interface Contender {
  mode: string;
  oneByOne: boolean;
  runner: NliRunner;
  seconds: number;
  probs: NliProbs[];
  before: NliRunnerStats;
}

async function contender(mode: string, maxBatchTokens: number, maxBatchSize: number, oneByOne: boolean, maxPadFraction = 1): Promise<Contender> {
  const runner = await createNliRunner({ model: modelDir, device: o.device, threads: o.threads, maxBatchTokens, maxBatchSize, maxPadFraction });
  // Warm-up outside the clock: first runs allocate arenas and pick kernels.
  await runner.score([{ premise: 'Warm up the session.', hypothesis: 'This is a warm-up.' }, { premise: 'Another warm-up pair, a bit longer.', hypothesis: 'Warm.' }]);
  return { mode, oneByOne, runner, seconds: 0, probs: [], before: runner.stats() };
}

const lengths = sample.map((p) => p.premise.length + p.hypothesis.length);
console.log(
  `timed set: ${sample.length} distinct SGD pairs (${Math.min(...lengths)}-${Math.max(...lengths)} chars), model ${path.relative(repoRoot, modelDir)}, ` +
    `device ${o.device}, threads ${o.threads ?? `default (${os.availableParallelism()} cores)`}, rounds of ${o.round} pairs`,
);
const contenders: Contender[] = [await contender('one pair at a time', 1_000_000, 1, true)];
for (const pad of o.pad.split(',').map(Number)) {
  contenders.push(await contender(`batched (${o.budget} tok, <=${o.batchSize}, pad<=${pad})`, o.budget, o.batchSize, false, pad));
}
// Interleave the contenders round by round over the same pairs, so load from other processes on a
// shared machine falls on all of them alike instead of skewing whichever ran last.
for (let start = 0; start < sample.length; start += o.round) {
  const chunk = sample.slice(start, start + o.round);
  for (const c of contenders) {
    const t = performance.now();
    if (c.oneByOne) for (const p of chunk) c.probs.push(await c.runner.scoreOne(p));
    else c.probs.push(...(await c.runner.score(chunk)));
    c.seconds += (performance.now() - t) / 1000;
  }
}
const figures: Figure[] = [];
for (const c of contenders) {
  const after = c.runner.stats();
  await c.runner.close();
  const stats = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - c.before[k as keyof NliRunnerStats]])) as unknown as NliRunnerStats;
  const fig = { mode: c.mode, seconds: c.seconds, pairsPerSec: sample.length / c.seconds, tokensPerSec: stats.tokens / c.seconds, stats };
  figures.push(fig);
  console.log(
    `${c.mode.padEnd(38)} ${c.seconds.toFixed(1).padStart(6)} s  ${fig.pairsPerSec.toFixed(2).padStart(7)} pairs/s  ${fig.tokensPerSec.toFixed(0).padStart(6)} tokens/s  ` +
      `${stats.batches} batches, padding efficiency ${(stats.tokens / stats.paddedTokens).toFixed(2)}`,
  );
}
// Dense FLOPs per token of the encoder (QKV + output projections 4d^2, feed-forward 2*d*ff, times
// two for multiply-add), to show how close each mode runs to the hardware's peak.
const cfg = JSON.parse(readFileSync(path.join(modelDir, 'config.json'), 'utf8')) as { hidden_size: number; intermediate_size: number; num_hidden_layers: number };
const flopsPerToken = 2 * cfg.num_hidden_layers * (4 * cfg.hidden_size ** 2 + 2 * cfg.hidden_size * cfg.intermediate_size);
for (const f of figures) {
  const computed = f.stats.paddedTokens / f.seconds;
  console.log(`${f.mode.padEnd(38)} ~${((computed * flopsPerToken) / 1e9).toFixed(0)} GFLOP/s effective (padding included, ${(flopsPerToken / 1e9).toFixed(2)} GFLOP/token)`);
}
const single = contenders[0];
let maxDiff = 0;
for (const c of contenders.slice(1)) {
  for (let i = 0; i < sample.length; i++) {
    for (const k of ['entailment', 'neutral', 'contradiction'] as const) maxDiff = Math.max(maxDiff, Math.abs(c.probs[i][k] - single.probs[i][k]));
  }
}
const best = figures.slice(1).reduce((a, b) => (b.pairsPerSec > a.pairsPerSec ? b : a));
const ratio = best.pairsPerSec / figures[0].pairsPerSec;
console.log(`speedup of the best batched setting over one-at-a-time: ${ratio.toFixed(2)}x pairs/s (${best.mode}; max |batched - single| prob diff ${maxDiff.toExponential(1)})`);

if (o.json) {
  writeFileSync(
    o.json,
    JSON.stringify(
      {
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
        dedupe: { requested: requested.length, distinct: unique.size, ratio: unique.size / requested.length },
        sample: sample.length,
        figures,
        speedup: ratio,
        maxProbDiff: maxDiff,
      },
      null,
      2,
    ),
  );
}
