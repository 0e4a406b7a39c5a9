/**
 * NLI runner throughput on this machine: the full-size random roberta-large on realistic SGD pairs
 * (premise = ground-truth system utterance, hypothesis = a candidate reference from the rules),
 * batched runner vs one pair at a time, in one run; plus the dedupe saving over the whole SGD
 * test candidate set (no model needed for that part).
 *
 *   npm run bench:nli -- [--model DIR] [--dtype fp32[,fp16][,q8][,q8-tensor]] [--pairs 96] [--passes 1] [--round N] [--threads N] [--budget 2048[,8192...]]
 *     [--pad 0.15,1] [--batch-size 16] [--no-single] [--data-dir DIR] [--device cpu|auto|cuda] [--json FILE]
 *
 * The model defaults to .cache/models/large-random-roberta; each dtype's ONNX file (onnx/model.onnx,
 * onnx/model_fp16.onnx, onnx/model_q8_row.onnx, onnx/model_quantized.onnx) is built into it when absent, with the random-model
 * builder and the size, seed and std of the model already there.
 * Every (dtype, budget, padding cap) is a contender, plus one pair at a time per dtype. On CPU each
 * contender runs the whole timed set in turn (switching sessions every 16 pairs cost ~15% by itself:
 * each session's weights and arenas leave the caches); --passes N repeats that on N fresh sets (the
 * pair cache would answer repeats) with the order of contenders rotated, so load from other
 * processes falls on all alike; --round N interleaves them every N pairs instead. With several
 * dtypes a side-by-side table gives pairs/s, tokens/s and the ratio to the first dtype, and each
 * later dtype's probabilities are compared with the first's (max |diff|, argmax agreement) next to
 * how much the first dtype's own probabilities vary across the pairs. On CPU the
 * contenders are interleaved round by round over the same pairs (so load from other processes falls
 * on all alike); on CUDA each runs alone over the whole set with its session closed afterwards, so
 * the GPU memory it held can be read per contender (nvidia-smi).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { resolveDataDir } from '../src/data/data-dir.js';
import { buildRandomRoberta, onnxFileName, RANDOM_MODEL_MANIFEST, type RandomModelManifest } from '../src/nli/onnx-builder/index.js';
import { planBatches } from '../src/nli/batcher.js';
import { parseDtype, resolveModel, type NliDtype } from '../src/nli/model-store.js';
import { padRows } from '../src/nli/feeds.js';
import { openSession, type NliDevice } from '../src/nli/session.js';
import { createNliRunner, type NliRunner, type NliRunnerStats } from '../src/nli/runner.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { argmaxLabel, type NliPair, type NliProbs } from '../src/nli/types.js';
import { sgdCandidatePairs, spreadSample } from './lib/sgd-pairs.js';
import { CpuTorchPeer, torchPairsPerSec, type TorchPeerResult } from './lib/cpu-torch-peer.js';

const program = new Command('bench-nli')
  .option('--model <dir>', 'model directory', '.cache/models/large-random-roberta')
  .option('--pairs <n>', 'pairs in the timed set', (v) => Number(v), 96)
  .option('--threads <n>', 'intra-op threads (default: all cores)', (v) => Number(v))
  .option('--budget <list>', 'padded-token budget(s) per batch, comma-separated: a sweep', '2048')
  .option('--dtype <list>', 'dtype(s) to compare side by side, comma-separated (fp32, fp16, q8, q8-tensor; int8 = q8)', 'fp32')
  .option('--no-single', 'leave out the one-pair-at-a-time contender')
  .option('--pad <list>', 'padding caps to try (share of a batch that may be padding; 1 = no cap)', '0.15,1')
  .option('--batch-size <n>', 'max pairs per batch', (v) => Number(v), 16)
  .option('--device <d>', 'auto|cpu|cuda', 'cpu')
  .option('--data-dir <dir>', 'data directory (default: resolveDataDir)')
  .option('--round <n>', 'CPU: interleave the contenders every N pairs (default: each runs the whole set in turn)', (v) => Number(v))
  .option('--passes <n>', 'CPU: timed sets per contender, each of fresh pairs; figures are summed, ratios also given per pass', (v) => Number(v), 1)
  .option('--json <file>', 'also write the figures as JSON')
  .option('--sequential', 'run each contender alone over the whole set, then the model alone (default with --device cuda)')
  .option('--dump-ids <file>', 'write the timed set as token ids (JSON) for the PyTorch peer')
  .option('--peer-torch [dir]', 'CPU: time the PyTorch peer (fp32 eager and quantize_dynamic int8) after each pass on the same token ids', '')
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ model: string; pairs: number; threads?: number; budget: string; dtype: string; single: boolean; pad: string; batchSize: number; device: NliDevice; dataDir?: string; json?: string; dumpIds?: string; sequential?: boolean; round?: number; passes: number; peerTorch: string | boolean }>();

const dtypes = o.dtype.split(',').map((d) => parseDtype(d.trim()) as NliDtype);
const budgets = o.budget.split(',').map(Number);
const modelDir = path.resolve(o.model);
for (const dtype of dtypes) {
  if (existsSync(path.join(modelDir, onnxFileName(dtype))) || (dtype === 'fp32' && existsSync(path.join(modelDir, 'model.onnx')))) continue;
  // Another dtype of the model already there: same size, seed and spread, or the columns compare two models.
  const manifestFile = path.join(modelDir, RANDOM_MODEL_MANIFEST);
  const have = existsSync(manifestFile) ? (JSON.parse(readFileSync(manifestFile, 'utf8')) as RandomModelManifest) : undefined;
  console.log(`building the random roberta (${have?.size ?? 'large'}, ${dtype}) into ${modelDir} ...`);
  buildRandomRoberta({ outDir: modelDir, size: have?.size ?? 'large', seed: have?.seed, std: have?.std, dtype });
}

// 1. The real SGD candidate set: every (system utterance, candidate reference) pair SGSAcc asks for.
const dataDir = resolveDataDir(o.dataDir).dir;
const cand = sgdCandidatePairs(dataDir);
const all = cand.distinct;
console.log(
  `SGD test: ${cand.turns} system turns, ${cand.requested} candidate pairs requested, ${all.length} distinct ` +
    `-> issued/requested ${(all.length / cand.requested).toFixed(3)} (dedupe saves ${(100 * (1 - all.length / cand.requested)).toFixed(1)}%), ` +
    `expansion ${cand.expandSeconds.toFixed(1)} s`,
);

// 2. The timed set: distinct pairs in the order SGSAcc submits them, from four places in the test set.
// Pass k takes the k-th next run of pairs at each of the four places (pass 0: the usual set).
const passes = o.device === 'cuda' || o.sequential ? 1 : Math.max(1, Math.floor(o.passes));
const passSamples = Array.from({ length: passes }, (_, k) => spreadSample(all, o.pairs, 4, k));
const sample = passSamples[0];
// The PyTorch peer, in this run: `--peer-torch` alone means the peer folder beside the checkout.
const peerDir = o.peerTorch === true ? path.resolve('../shared/tools/peer-torch') : o.peerTorch ? path.resolve(o.peerTorch) : undefined;
if (peerDir && (o.device === 'cuda' || o.sequential)) throw new Error('--peer-torch times the CPU peer between passes; on CUDA use gpu/run.sh');
const peer = peerDir ? new CpuTorchPeer(peerDir, modelDir, o.threads ?? os.availableParallelism()) : undefined;
let peerResult: TorchPeerResult | undefined;
if (o.dumpIds) {
  // The PyTorch peer (gpu/peer_torch.py) times the very same token ids.
  const tok = PairTokenizer.fromFiles(path.join(modelDir, 'tokenizer.json'), undefined, JSON.parse(readFileSync(path.join(modelDir, 'config.json'), 'utf8')));
  writeFileSync(o.dumpIds, JSON.stringify({ padId: tok.padId, ids: sample.map((p) => tok.encodePair(p.premise, p.hypothesis).ids) }));
  console.log(`wrote the timed set's token ids to ${o.dumpIds}`);
}

interface Figure {
  mode: string;
  dtype: NliDtype;
  budget?: number;
  gpuMiB?: number;
  seconds: number;
  pairsPerSec: number;
  tokensPerSec: number;
  stats: NliRunnerStats;
}

interface Contender {
  mode: string;
  dtype: NliDtype;
  budget?: number;
  oneByOne: boolean;
  gpuMiB?: number;
  runner: NliRunner;
  seconds: number;
  probs: NliProbs[];
  before: NliRunnerStats;
  /** Pairs timed, over all passes. */
  timedPairs?: number;
}

const cuda = o.device === 'cuda';
const LABELS = ['entailment', 'neutral', 'contradiction'] as const;
// Each contender alone over the whole set (the default on CUDA: a dedicated device needs no interleaving).
const sequential = o.sequential ?? cuda;
// Pairs outside the timed set warm each session up: the first batches of a shape allocate arenas
// and pick kernels, and pairs from the timed set would land in the runner's pair cache.
const inSample = new Set(passSamples.flat());
const warmup = all.filter((p) => !inSample.has(p)).slice(0, cuda ? 2048 : 4);

async function contender(mode: string, dtype: NliDtype, maxBatchTokens: number, maxBatchSize: number, oneByOne: boolean, maxPadFraction = 1): Promise<Contender> {
  const runner = await createNliRunner({ model: modelDir, dtype, device: o.device, threads: o.threads, maxBatchTokens, maxBatchSize, maxPadFraction });
  if (oneByOne) for (const p of warmup.slice(0, 4)) await runner.scoreOne(p);
  else await runner.score(warmup);
  return { mode, dtype, budget: oneByOne ? undefined : maxBatchTokens, oneByOne, runner, seconds: 0, probs: [], before: runner.stats() };
}

/** GPU memory in use (MiB) as nvidia-smi reports it; undefined where there is none. */
function gpuMemoryMiB(): number | undefined {
  try {
    return Number(execFileSync('nvidia-smi', ['--query-gpu=memory.used', '--format=csv,noheader,nounits'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0]);
  } catch {
    return undefined;
  }
}

async function timeOn(c: Contender, pairs: NliPair[]): Promise<void> {
  const t = performance.now();
  if (c.oneByOne) for (const p of pairs) c.probs.push(await c.runner.scoreOne(p));
  else c.probs.push(...(await c.runner.score(pairs)));
  c.seconds += (performance.now() - t) / 1000;
}

/** The x86 flags that pick ONNX Runtime's int8 kernels (docs/nli.md "q8 arithmetic"). */
function int8CpuFlags(): string {
  try {
    const flags = new Set(readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1].trim().split(/\s+/) ?? []);
    return ['avx2', 'avx512bw', 'avx512_vnni', 'avx_vnni', 'amx_int8'].filter((f) => flags.has(f)).join(' ') || 'none of avx2/avx512bw/vnni/amx';
  } catch {
    return 'unknown (no /proc/cpuinfo)';
  }
}
const cpuFlags = int8CpuFlags();
console.log(`cpu: ${os.cpus()[0]?.model} x ${os.cpus().length}, int8 flags: ${cpuFlags}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

const lengths = sample.map((p) => p.premise.length + p.hypothesis.length);
console.log(
  `timed set: ${sample.length} distinct SGD pairs (${Math.min(...lengths)}-${Math.max(...lengths)} chars), model ${modelDir}, dtypes ${dtypes.join(', ')}, ` +
    `device ${o.device}, threads ${o.threads ?? `default (${os.availableParallelism()} cores)`}, ${sequential ? 'each contender alone over the whole set' : o.round ? `interleaved in rounds of ${o.round} pairs` : `each contender over the whole set in turn, ${passes} pass(es)`}`,
);

let meanTokens = 0;
// Tokenization alone, for scale: at GPU rates it is a share of the wall time worth knowing.
{
  const cfgPath = path.join(modelDir, 'config.json');
  const tok = PairTokenizer.fromFiles(path.join(modelDir, 'tokenizer.json'), existsSync(path.join(modelDir, 'tokenizer_config.json')) ? path.join(modelDir, 'tokenizer_config.json') : undefined, JSON.parse(readFileSync(cfgPath, 'utf8')));
  const t = performance.now();
  let tokens = 0;
  for (const p of sample) tokens += tok.encodePair(p.premise, p.hypothesis).ids.length;
  const sec = (performance.now() - t) / 1000;
  console.log(`tokenization alone (one thread, memo cold): ${(sample.length / sec).toFixed(0)} pairs/s, ${tokens} tokens (mean ${(tokens / sample.length).toFixed(1)} per pair)`);
  meanTokens = tokens / sample.length;
}

const plan: [string, NliDtype, number, number, boolean, number][] = [];
for (const dtype of dtypes) {
  if (o.single) plan.push([`${dtype} one pair at a time`, dtype, 1_000_000, 1, true, 1]);
  for (const budget of budgets) {
    for (const pad of o.pad.split(',').map(Number)) plan.push([`${dtype} batched (${budget} tok, <=${o.batchSize}, pad<=${pad})`, dtype, budget, o.batchSize, false, pad]);
  }
}
const contenders: Contender[] = [];
/** CPU: seconds of each contender in each pass, for per-pass ratios. */
const passSeconds: number[][] = [];
const modelOnly: { dtype: NliDtype; budget: number; pairsPerSec: number; tokensPerSec: number; batches: number }[] = [];
if (sequential) {
  for (const args of plan) {
    const c = await contender(...args);
    // One pair at a time on a GPU is latency-bound: a slice of the set says as much as all of it.
    const pairs = c.oneByOne ? sample.slice(0, Math.min(sample.length, 512)) : sample;
    await timeOn(c, pairs);
    c.gpuMiB = gpuMemoryMiB();
    contenders.push(c);
    c.timedPairs = pairs.length;
  }
  // The model alone: the same pairs pre-tokenized, length-sorted and cut into batches of the
  // largest budget, straight into the ONNX session. The gap to the runner's figure is host work
  // (tokenization, building tensors, the pool), i.e. what a faster host side could still win.
  for (const dtype of dtypes) {
    const resolved = resolveModel(modelDir, dtype);
    const tok = PairTokenizer.fromFiles(resolved.tokenizerPath, resolved.tokenizerConfigPath, JSON.parse(readFileSync(resolved.configPath, 'utf8')));
    const ids = sample.map((p) => tok.encodePair(p.premise, p.hypothesis).ids).sort((a, b) => a.length - b.length);
    const budget = Math.max(...budgets);
    const batches = planBatches(ids.map((r) => r.length), { maxBatchTokens: budget, maxBatchSize: o.batchSize });
    const session = await openSession(resolved.onnxPath, { device: o.device, threads: o.threads });
    for (const b of planBatches(ids.slice(0, 1024).map((r) => r.length), { maxBatchTokens: budget, maxBatchSize: o.batchSize })) await session.run(padRows(b.map((i) => ids[i]), tok.padId));
    const t = performance.now();
    for (const b of batches) await session.run(padRows(b.map((i) => ids[i]), tok.padId));
    const sec = (performance.now() - t) / 1000;
    await session.release();
    const tokens = ids.reduce((n, r) => n + r.length, 0);
    modelOnly.push({ dtype, budget, pairsPerSec: ids.length / sec, tokensPerSec: tokens / sec, batches: batches.length });
    console.log(`${`${dtype} model only (pre-tokenized, ${budget} tok)`.padEnd(44)} ${sec.toFixed(2).padStart(7)} s  ${(ids.length / sec).toFixed(2).padStart(9)} pairs/s  ${(tokens / sec).toFixed(0).padStart(8)} tokens/s  ${batches.length} batches`);
  }
} else {
  for (const args of plan) contenders.push(await contender(...args));
  for (let k = 0; k < passes; k++) {
    const pairs = passSamples[k];
    // Rotate who goes first, so a change of load during a pass does not always hit the same contender.
    const order = contenders.map((_, i) => contenders[(i + k) % contenders.length]);
    const before = contenders.map((c) => c.seconds);
    for (let start = 0; start < pairs.length; start += o.round ?? pairs.length) {
      const chunk = pairs.slice(start, start + (o.round ?? pairs.length));
      for (const c of order) await timeOn(c, chunk);
    }
    passSeconds.push(contenders.map((c, i) => c.seconds - before[i]));
    for (const c of contenders) c.timedPairs = (c.timedPairs ?? 0) + pairs.length;
    if (peer) {
      const fp32 = resolveModel(modelDir, 'fp32');
      const tok = PairTokenizer.fromFiles(fp32.tokenizerPath, fp32.tokenizerConfigPath, JSON.parse(readFileSync(fp32.configPath, 'utf8')));
      console.log(`pass ${k + 1}: the PyTorch peer on the same ${pairs.length} pairs (load ${os.loadavg()[0].toFixed(2)})`);
      await peer.timePass(fp32.onnxPath, pairs.map((p) => tok.encodePair(p.premise, p.hypothesis).ids), tok.padId);
    }
  }
  peerResult = peer?.done();
}
const figures: Figure[] = [];
for (const c of contenders) {
  const after = c.runner.stats();
  await c.runner.close();
  const stats = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - c.before[k as keyof NliRunnerStats]])) as unknown as NliRunnerStats;
  const timed = c.timedPairs ?? sample.length;
  const fig: Figure = { mode: c.mode, dtype: c.dtype, budget: c.budget, gpuMiB: c.gpuMiB, seconds: c.seconds, pairsPerSec: timed / c.seconds, tokensPerSec: stats.tokens / c.seconds, stats };
  figures.push(fig);
  console.log(
    `${c.mode.padEnd(44)} ${c.seconds.toFixed(2).padStart(7)} s  ${fig.pairsPerSec.toFixed(2).padStart(9)} pairs/s  ${fig.tokensPerSec.toFixed(0).padStart(8)} tokens/s  ` +
      `${stats.batches} batches, padding efficiency ${(stats.tokens / stats.paddedTokens).toFixed(2)}${c.gpuMiB !== undefined ? `, GPU memory ${c.gpuMiB} MiB` : ''}`,
  );
}
// Dense FLOPs per token of the encoder (QKV + output projections 4d^2, feed-forward 2*d*ff, times
// two for multiply-add), to show how close each mode runs to the hardware's peak.
const cfg = JSON.parse(readFileSync(path.join(modelDir, 'config.json'), 'utf8')) as { hidden_size: number; intermediate_size: number; num_hidden_layers: number };
const flopsPerToken = 2 * cfg.num_hidden_layers * (4 * cfg.hidden_size ** 2 + 2 * cfg.hidden_size * cfg.intermediate_size);
console.log(`dense encoder FLOPs: ${(flopsPerToken / 1e9).toFixed(2)} GFLOP/token, ${((flopsPerToken * meanTokens) / 1e9).toFixed(1)} GFLOP per pair at the timed set's mean length`);
for (const f of figures) {
  const computed = f.stats.paddedTokens / f.seconds;
  console.log(`${f.mode.padEnd(44)} ~${((computed * flopsPerToken) / 1e9).toFixed(0)} GFLOP/s effective (padding included)`);
}
// Agreement with the first contender of the same dtype (one pair at a time when it ran): batching
// changes only float rounding, which fp16 makes coarser, so each dtype gets its own figure.
let maxDiff = 0;
const maxDiffByDtype: Record<string, number> = {};
for (const dtype of dtypes) {
  const same = contenders.filter((c) => c.dtype === dtype);
  const base = same[0];
  let d = 0;
  for (const c of same.slice(1)) {
    const n = Math.min(c.probs.length, base.probs.length);
    for (let i = 0; i < n; i++) {
      for (const k of LABELS) d = Math.max(d, Math.abs(c.probs[i][k] - base.probs[i][k]));
    }
  }
  maxDiffByDtype[dtype] = d;
  maxDiff = Math.max(maxDiff, d);
}
const bestOf = (dtype: NliDtype) => figures.filter((f) => f.dtype === dtype && f.budget !== undefined).reduce<Figure | undefined>((a, b) => (!a || b.pairsPerSec > a.pairsPerSec ? b : a), undefined);
const speedups: Record<string, number> = {};
for (const dtype of dtypes) {
  const best = bestOf(dtype);
  const single = figures.find((f) => f.dtype === dtype && f.budget === undefined);
  if (best && single) {
    speedups[dtype] = best.pairsPerSec / single.pairsPerSec;
    console.log(`${dtype}: best batched over one-at-a-time ${speedups[dtype].toFixed(2)}x pairs/s (${best.mode})`);
  }
}
/** A setting without its dtype: the row of the side-by-side table. */
const setting = (f: { mode: string; dtype: NliDtype }) => f.mode.slice(f.dtype.length + 1);
interface DtypeComparison {
  dtype: NliDtype;
  vs: NliDtype;
  /** Best batched of dtype over best batched of vs (pairs/s), over all passes and per pass. */
  bestRatio?: number;
  passRatios: number[];
  /** Between the first contender of each dtype (one pair at a time when it ran). */
  maxProbDiff: number;
  argmaxAgreement: number;
  /** How far vs's own probabilities move across the pairs: a diff means little unless this is larger. */
  referenceSpread: number;
}
const comparisons: DtypeComparison[] = [];
if (dtypes.length > 1) {
  const base = dtypes[0];
  const cell = (f: Figure | undefined) => (f ? `${f.pairsPerSec.toFixed(2).padStart(8)} ${f.tokensPerSec.toFixed(0).padStart(6)}` : '-'.padStart(15));
  console.log(`\nside by side: pairs/s and tokens/s per dtype, and pairs/s over ${base}`);
  console.log(`${'setting'.padEnd(36)}${dtypes.map((d) => `${d.padStart(8)} ${'tok/s'.padStart(6)}`).join('  ')}${dtypes.slice(1).map((d) => `${`${d}/${base}`.padStart(11)}`).join('')}`);
  for (const st of [...new Set(figures.map(setting))]) {
    const row = dtypes.map((d) => figures.find((f) => f.dtype === d && setting(f) === st));
    const ratios = row.slice(1).map((f) => (f && row[0] ? `${(f.pairsPerSec / row[0].pairsPerSec).toFixed(2)}x` : '-'));
    console.log(`${st.padEnd(36)}${row.map(cell).join('  ')}${ratios.map((r) => r.padStart(11)).join('')}`);
  }
  const ref = contenders.find((c) => c.dtype === base)!;
  const spread = Math.max(...LABELS.map((k) => Math.max(...ref.probs.map((p) => p[k])) - Math.min(...ref.probs.map((p) => p[k]))));
  for (const dtype of dtypes.slice(1)) {
    const best = bestOf(dtype);
    const baseBest = bestOf(base);
    const passRatios = best && baseBest ? passSeconds.map((secs) => secs[figures.indexOf(baseBest)] / secs[figures.indexOf(best)]) : [];
    const other = contenders.find((c) => c.dtype === dtype)!;
    const n = Math.min(other.probs.length, ref.probs.length);
    let diff = 0;
    let agree = 0;
    for (let i = 0; i < n; i++) {
      for (const k of LABELS) diff = Math.max(diff, Math.abs(other.probs[i][k] - ref.probs[i][k]));
      if (argmaxLabel(other.probs[i]) === argmaxLabel(ref.probs[i])) agree++;
    }
    const cmp: DtypeComparison = { dtype, vs: base, bestRatio: best && baseBest ? best.pairsPerSec / baseBest.pairsPerSec : undefined, passRatios, maxProbDiff: diff, argmaxAgreement: agree / n, referenceSpread: spread };
    comparisons.push(cmp);
    if (best && baseBest) {
      const range = passRatios.length > 1 ? `; per pass ${passRatios.map((r) => r.toFixed(2)).join(', ')}` : '';
      console.log(`best ${dtype} / best ${base}: ${cmp.bestRatio!.toFixed(2)}x pairs/s (${best.pairsPerSec.toFixed(2)} vs ${baseBest.pairsPerSec.toFixed(2)}${range})`);
    }
    console.log(
      `${dtype} vs ${base} (${setting(other)}): max |prob diff| ${diff.toExponential(1)}, argmax agreement ${agree}/${n}; ` +
        `${base}'s own probabilities span ${spread.toExponential(1)} across these pairs`,
    );
  }
}
console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`max |prob diff| between contenders of one dtype: ${dtypes.map((d) => `${d} ${maxDiffByDtype[d].toExponential(1)}`).join(', ')}`);
// The two int8 schemes side by side (issue #30: the per-row scheme must keep the per-tensor one's speed).
let q8Schemes: { ratio: number; passRatios: number[]; single?: number } | undefined;
{
  const row = bestOf('q8');
  const tensor = bestOf('q8-tensor');
  if (row && tensor) {
    const passRatios = passSeconds.map((secs) => secs[figures.indexOf(tensor)] / secs[figures.indexOf(row)]);
    const rowOne = figures.find((f) => f.dtype === 'q8' && f.budget === undefined);
    const tensorOne = figures.find((f) => f.dtype === 'q8-tensor' && f.budget === undefined);
    q8Schemes = { ratio: row.pairsPerSec / tensor.pairsPerSec, passRatios, single: rowOne && tensorOne ? rowOne.pairsPerSec / tensorOne.pairsPerSec : undefined };
    console.log(
      `best q8 (per row) / best q8-tensor: ${q8Schemes.ratio.toFixed(3)}x pairs/s (${row.pairsPerSec.toFixed(2)} vs ${tensor.pairsPerSec.toFixed(2)}` +
        `${passRatios.length > 1 ? `; per pass ${passRatios.map((r) => r.toFixed(3)).join(', ')}` : ''})` +
        `${q8Schemes.single !== undefined ? `; one pair at a time ${q8Schemes.single.toFixed(3)}x` : ''}`,
    );
  }
}
const ratio = speedups[dtypes[0]];

/** todeval vs the PyTorch peer: like for like (fp32 with fp32, q8 with int8, one at a time with batch 1). */
interface PeerComparison {
  ours: string;
  theirs: string;
  ratio: number;
  passRatios: number[];
}
const peerComparisons: PeerComparison[] = [];
if (peerResult) {
  console.log(`\nthe PyTorch peer (torch ${peerResult.torch}, eager, same token ids, timed after each pass): logits vs ORT fp32 max |diff| ${Math.max(...peerResult.checks.map((c) => Math.max(c.batch, c.single))).toExponential(1)}`);
  for (const f of peerResult.figures) console.log(`${f.mode.padEnd(44)} ${torchPairsPerSec(f).toFixed(2).padStart(9)} pairs/s  (per pass ${f.seconds.map((s, k) => (f.pairs[k] / s).toFixed(2)).join(', ')})`);
  const bestTorch = (int8: boolean, single: boolean) =>
    peerResult!.figures.filter((f) => f.mode.includes('int8') === int8 && (f.batch === 1) === single).reduce<(typeof peerResult.figures)[number] | undefined>((a, b) => (!a || torchPairsPerSec(b) > torchPairsPerSec(a) ? b : a), undefined);
  const ourPass = (f: Figure, k: number) => passSamples[k].length / passSeconds[k][figures.indexOf(f)];
  const compare = (ours: Figure | undefined, theirs: ReturnType<typeof bestTorch>) => {
    if (!ours || !theirs) return;
    const cmp: PeerComparison = {
      ours: ours.mode,
      theirs: theirs.mode,
      ratio: ours.pairsPerSec / torchPairsPerSec(theirs),
      passRatios: passSeconds.map((_, k) => ourPass(ours, k) / (theirs.pairs[k] / theirs.seconds[k])),
    };
    peerComparisons.push(cmp);
    console.log(`${ours.mode} / ${theirs.mode}: ${cmp.ratio.toFixed(2)}x pairs/s${cmp.passRatios.length > 1 ? ` (per pass ${cmp.passRatios.map((r) => r.toFixed(2)).join(', ')})` : ''}`);
  };
  for (const dtype of dtypes) {
    if (dtype === 'fp16') continue;
    const int8 = dtype === 'q8' || dtype === 'q8-tensor';
    compare(bestOf(dtype), bestTorch(int8, false));
    compare(
      figures.find((f) => f.dtype === dtype && f.budget === undefined),
      bestTorch(int8, true),
    );
  }
}

if (o.json) {
  writeFileSync(
    o.json,
    JSON.stringify(
      {
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, int8Flags: cpuFlags },
        dedupe: { requested: cand.requested, distinct: all.length, ratio: all.length / cand.requested },
        sample: sample.length,
        device: o.device,
        dtypes,
        figures,
        modelOnly,
        speedup: ratio,
        speedups,
        maxProbDiff: maxDiff,
        maxProbDiffByDtype: maxDiffByDtype,
        passes,
        comparisons,
        peerTorch: peerResult,
        peerComparisons,
        q8Schemes,
        loadAverage: os.loadavg(),
      },
      null,
      2,
    ),
  );
}
