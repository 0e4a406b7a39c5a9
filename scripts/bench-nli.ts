/**
 * NLI runner throughput on this machine: the full-size random roberta-large on realistic SGD pairs
 * (premise = ground-truth system utterance, hypothesis = a candidate reference from the rules),
 * every contender side by side in one run; plus the dedupe saving over the whole SGD test candidate
 * set (no model needed for that part).
 *
 *   npm run bench:nli -- [--model DIR] [--dtype fp32[,fp16][,q8][,q8-tensor]] [--q8-file FILE]... [--pairs 32] [--passes 3]
 *     [--round 16] [--threads N] [--budget 2048[,8192...]] [--pad 0.15,1] [--batch-size 16] [--no-single]
 *     [--peer-torch [DIR]] [--torch-batch 16] [--peer-pad X] [--session-alone] [--fresh-lengths] [--data-dir DIR] [--device cpu|auto|cuda] [--json FILE] [--dump-ids FILE]
 *
 * The model defaults to .cache/models/large-random-roberta; each dtype's ONNX file (onnx/model.onnx,
 * onnx/model_fp16.onnx, onnx/model_q8_row.onnx, onnx/model_quantized.onnx) is built into it when
 * absent, with the random-model builder and the size, seed and std of the model already there.
 *
 * Contenders: every (dtype, budget, padding cap), one pair at a time per dtype (unless --no-single),
 * each --q8-file FILE (another int8 graph of the same model, e.g. the file before a change of the
 * quantizer: "before vs after" in one run), and with --peer-torch the PyTorch peer (fp32 eager and
 * quantize_dynamic int8, batched and one pair at a time unless --no-single) as a persistent process
 * fed over a pipe (scripts/lib/cpu-torch-peer.ts). The peer gets the round's token ids in the very
 * batches todeval's runner would cut (its planner on the length-sorted round, with --peer-pad as
 * the padding cap), so torch and ONNX Runtime multiply matrices of the same shapes; --peer-pad 1
 * gives it plain sorted chunks of --torch-batch rows instead. --session-alone adds each dtype's ONNX
 * session on those same batches with no runner around it (no tokenizer in its clock, as in torch's).
 *
 * On CPU, each of --passes passes takes fresh pairs (the pair cache would answer repeats) and cuts
 * them into rounds of --round pairs; every contender runs every round, in an order rotated by one
 * each round, so whatever else the machine does during a pass falls on all contenders alike. Pass 1
 * is --pairs SGD pairs from four places in the test set; every later pass, and one untimed pass run
 * first, are their length twins (scripts/lib/length-twins.ts): other pairs, token for token as long,
 * so every pass multiplies matrices of the same shapes and the untimed pass has met each shape
 * before the clock runs (--fresh-lengths: each pass the next pairs at the four places, no untimed
 * pass, as before). So a pass's ratios differ from another's by drift alone. Ratios
 * are printed over the whole run and per pass, with their spread (the largest distance of a pass's
 * ratio from the whole run's), and the load average at the start and the end; the last lines are a
 * markdown table for docs/nli.md. On CUDA (or with --sequential) each contender runs alone over the
 * whole set with its session closed afterwards, so the GPU memory it held can be read per contender.
 *
 * Each dtype's probabilities are compared with fp32's (max |prob diff|, argmax equal), next to how
 * much fp32's own probabilities vary across the pairs; a --q8-file also with q8's.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { resolveDataDir } from '../src/data/data-dir.js';
import { buildRandomRoberta, onnxFileName, RANDOM_MODEL_MANIFEST, type RandomModelManifest } from '../src/nli/onnx-builder/index.js';
import { planBatches } from '../src/nli/batcher.js';
import { labelIndexFromConfig, probsFromLogits } from '../src/nli/labels.js';
import { parseDtype, resolveModel, type NliDtype } from '../src/nli/model-store.js';
import { padRows } from '../src/nli/feeds.js';
import { openSession, type NliDevice } from '../src/nli/session.js';
import { createNliRunner, type NliRunner, type NliRunnerStats } from '../src/nli/runner.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { argmaxLabel, type NliLabel, type NliPair, type NliProbs } from '../src/nli/types.js';
import { sgdCandidatePairs, spreadSample } from './lib/sgd-pairs.js';
import { lengthTwins } from './lib/length-twins.js';
import { TorchPeerProcess } from './lib/cpu-torch-peer.js';

const program = new Command('bench-nli')
  .option('--model <dir>', 'model directory', '.cache/models/large-random-roberta')
  .option('--pairs <n>', 'pairs per pass', (v) => Number(v), 32)
  .option('--threads <n>', 'intra-op threads, ours and the peer\'s (default: all cores)', (v) => Number(v))
  .option('--budget <list>', 'padded-token budget(s) per batch, comma-separated: a sweep', '2048')
  .option('--dtype <list>', 'dtype(s) to compare side by side, comma-separated (fp32, fp16, q8, q8-tensor; int8 = q8)', 'fp32')
  .option('--q8-file <file>', 'another int8 ONNX file of the same model as a contender (repeatable): before vs after a graph change', (v, acc: string[]) => [...acc, v], [] as string[])
  .option('--no-single', 'leave out the one-pair-at-a-time contenders')
  .option('--pad <list>', 'padding caps to try (share of a batch that may be padding; 1 = no cap)', '0.15,1')
  .option('--batch-size <n>', 'max pairs per batch', (v) => Number(v), 16)
  .option('--device <d>', 'auto|cpu|cuda', 'cpu')
  .option('--data-dir <dir>', 'data directory (default: resolveDataDir)')
  .option('--round <n>', 'CPU: pairs per round; every contender runs each round, the order rotated every round', (v) => Number(v), 16)
  .option('--passes <n>', 'CPU: passes, each over fresh pairs; ratios are given per pass and over all', (v) => Number(v), 3)
  .option('--json <file>', 'also write the figures as JSON')
  .option('--sequential', 'run each contender alone over the whole set, then the model alone (default with --device cuda)')
  .option('--dump-ids <file>', 'write the timed set as token ids (JSON) for gpu/peer_torch.py')
  .option('--peer-torch [dir]', 'CPU: the PyTorch peer (fp32 eager, quantize_dynamic int8) as contenders, a persistent process fed round by round (default dir ../shared/tools/peer-torch)')
  .option('--session-alone', 'CPU: also each dtype\'s ONNX session alone on the pre-tokenized round, in the batches the peer gets: like for like with torch, whose clock has no tokenizer either')
  .option('--fresh-lengths', 'CPU: every pass the next pairs at the four places of the test set, lengths differing from pass to pass, and no untimed pass first (the design before length twins)')
  .option('--torch-batch <n>', 'most rows per batch of the PyTorch peer and the sessions alone', (v) => Number(v), 16)
  .option('--peer-pad <x>', 'padding cap of the peer\'s (and the sessions alone\'s) batches, cut by the runner\'s own planner from the length-sorted round (default: the first --pad); 1: plain length-sorted chunks of --torch-batch rows', (v) => Number(v));
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{
  model: string;
  pairs: number;
  threads?: number;
  budget: string;
  dtype: string;
  q8File: string[];
  single: boolean;
  pad: string;
  batchSize: number;
  device: NliDevice;
  dataDir?: string;
  json?: string;
  dumpIds?: string;
  sequential?: boolean;
  round: number;
  passes: number;
  peerTorch?: string | boolean;
  torchBatch: number;
  sessionAlone?: boolean;
  peerPad?: number;
  freshLengths?: boolean;
}>();

const loadStart = os.loadavg();
const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
const dtypes = o.dtype.split(',').map((d) => parseDtype(d.trim()) as NliDtype);
const budgets = o.budget.split(',').map(Number);
const modelDir = path.resolve(o.model);
const cuda = o.device === 'cuda';
// Each contender alone over the whole set (the default on CUDA: a dedicated device needs no interleaving).
const sequential = o.sequential ?? cuda;
const peerDir = o.peerTorch === true ? path.resolve('../shared/tools/peer-torch') : o.peerTorch ? path.resolve(o.peerTorch) : undefined;
if (peerDir && sequential) throw new Error('--peer-torch runs beside the CPU contenders; on CUDA use gpu/run.sh');
if (o.q8File.length > 0 && sequential) throw new Error('--q8-file is a CPU contender of the interleaved rounds');
for (const f of o.q8File) if (!existsSync(f)) throw new Error(`--q8-file ${f}: no such file`);
if (!(o.round >= 1)) throw new Error('--round must be at least 1');

// The peer loads the fp32 export (its weights are the model's); build it too when it is absent.
for (const dtype of new Set<NliDtype>([...dtypes, ...(peerDir ? (['fp32'] as const) : [])])) {
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

// 2. The timed sets: distinct pairs in the order SGSAcc submits them, from four places in the test
// set (pass 0: the usual set). Later passes are its length twins, and one more twin set is the
// untimed pass; with --fresh-lengths pass k takes the k-th next run of pairs at each of the four places.
const passes = sequential ? 1 : Math.max(1, Math.floor(o.passes));
const twinned = !sequential && !o.freshLengths;
const sample = spreadSample(all, o.pairs, 4, 0);
const fp32Model = resolveModel(modelDir, dtypes.includes('fp32') || peerDir ? 'fp32' : dtypes[0]);
const modelConfig = JSON.parse(readFileSync(fp32Model.configPath, 'utf8')) as Record<string, unknown> & { hidden_size: number; intermediate_size: number; num_hidden_layers: number };
const tokenizer = PairTokenizer.fromFiles(fp32Model.tokenizerPath, fp32Model.tokenizerConfigPath, modelConfig);
const freshSamples = Array.from({ length: twinned ? 1 : passes }, (_, k) => spreadSample(all, o.pairs, 4, k));
// Pairs outside the timed sets warm each contender up: the first batches of a shape allocate arenas
// and pick kernels, and pairs from the timed set would land in the runner's pair cache.
const warmup = ((inSample) => all.filter((p) => !inSample.has(p)).slice(0, cuda ? 2048 : Math.max(16, o.round)))(new Set(freshSamples.flat()));
// The twins start halfway between the first two of the four places, away from the warm-up pairs.
const twins = twinned
  ? lengthTwins(all, sample, passes, (p) => tokenizer.encodePair(p.premise, p.hypothesis).ids.length, warmup, Math.floor(all.length / 8))
  : [];
/** The untimed pass (twins of pass 1), undefined with --fresh-lengths. */
const warmPass: NliPair[] | undefined = twins[0];
const passSamples = twinned ? [sample, ...twins.slice(1)] : freshSamples;
if (o.dumpIds) {
  // gpu/peer_torch.py times the very same token ids.
  writeFileSync(o.dumpIds, JSON.stringify({ padId: tokenizer.padId, ids: sample.map((p) => tokenizer.encodePair(p.premise, p.hypothesis).ids) }));
  console.log(`wrote the timed set's token ids to ${o.dumpIds}`);
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
const cpuModel = `${os.cpus()[0]?.model} x ${os.cpus().length}`;
console.log(`cpu: ${cpuModel}, int8 flags: ${cpuFlags}; load average at the start ${fmtLoad(loadStart)}`);

const lengths = sample.map((p) => p.premise.length + p.hypothesis.length);
console.log(
  `timed set: ${passes} pass(es) of ${sample.length} distinct SGD pairs (pass 1: ${Math.min(...lengths)}-${Math.max(...lengths)} chars), model ${modelDir}, dtypes ${dtypes.join(', ')}, ` +
    `device ${o.device}, threads ${o.threads ?? `default (${os.availableParallelism()} cores)`}, ` +
    `${sequential ? 'each contender alone over the whole set' : `interleaved in rounds of ${o.round} pairs, order rotated every round`}` +
    `${twinned ? `; passes 2-${passes} and an untimed pass first are length twins of pass 1 (other pairs, the same token lengths)` : passes > 1 ? '; each pass fresh pairs of their own lengths, no untimed pass (--fresh-lengths)' : ''}`,
);

let meanTokens = 0;
// Tokenization alone, for scale: at GPU rates it is a share of the wall time worth knowing.
{
  const t = performance.now();
  let tokens = 0;
  for (const p of sample) tokens += tokenizer.encodePair(p.premise, p.hypothesis).ids.length;
  const sec = (performance.now() - t) / 1000;
  console.log(`tokenization alone (one thread, memo cold): ${(sample.length / sec).toFixed(0)} pairs/s, ${tokens} tokens (mean ${(tokens / sample.length).toFixed(1)} per pair)`);
  meanTokens = tokens / sample.length;
}

const peerPad = o.peerPad ?? Number(o.pad.split(',')[0]);
/** How the peer's and the sessions-alone's batches are cut: the runner's planner, on the round sorted by length. */
const peerLimits = { maxBatchTokens: budgets[0], maxBatchSize: o.torchBatch, maxPadFraction: peerPad >= 1 ? undefined : peerPad };
const peerPlanLabel = `<=${o.torchBatch}${peerPad >= 1 ? '' : `, pad<=${peerPad}`}`;
function planRound(ids: number[][]): number[][] {
  const order = ids.map((_, i) => i).sort((a, b) => ids[a].length - ids[b].length);
  return planBatches(order.map((i) => ids[i].length), peerLimits).map((b) => b.map((j) => order[j]));
}

const LABELS: readonly NliLabel[] = ['entailment', 'neutral', 'contradiction'];
/** Dense FLOPs per token of the encoder (QKV + output projections 4d^2, feed-forward 2*d*ff, times two for multiply-add). */
const flopsPerToken = 2 * modelConfig.num_hidden_layers * (4 * modelConfig.hidden_size ** 2 + 2 * modelConfig.hidden_size * modelConfig.intermediate_size);

/** What a contender is, for the comparisons: its arithmetic and whether it takes one pair at a time. */
type Family = NliDtype | 'torch-fp32' | 'torch-int8';

interface Contender {
  name: string;
  family: Family;
  /** The extra int8 file it runs (--q8-file); undefined for the model directory's own files. */
  file?: string;
  oneByOne: boolean;
  batched: boolean;
  /** An ONNX session with no runner around it (--session-alone). */
  alone?: boolean;
  /** Seconds and pairs per pass. */
  passSeconds: number[];
  /**
   * CPU seconds per pass, all threads of the process that computed (ours: this one; torch: the
   * peer's). Another process's load barely moves them, so their per-pass ratios show what the
   * passes cost apart from drift; not a speed (a spinning thread is CPU time too).
   */
  passCpu: number[];
  /** CPU seconds over all its rounds so far. */
  cpu: number;
  passPairs: number[];
  /** Probabilities of every timed pair, in pass and pair order. */
  probs: NliProbs[];
  tokens: number;
  paddedTokens: number;
  batches: number;
  gpuMiB?: number;
  /** Scores a round: the pairs, and the same pairs as token ids (for the peer). Returns seconds. */
  round(pairs: NliPair[], ids: number[][]): Promise<number>;
  /** After the untimed pass: what follows is counted from here (tokens, batches; probabilities are cleared by the caller). */
  restart?(): void;
  close(): Promise<void>;
}

/** What a contender has timed and scored before its first round. */
function emptyTally(): Pick<Contender, 'passSeconds' | 'passCpu' | 'cpu' | 'passPairs' | 'probs' | 'tokens' | 'paddedTokens' | 'batches'> {
  return { passSeconds: [], passCpu: [], cpu: 0, passPairs: [], probs: [], tokens: 0, paddedTokens: 0, batches: 0 };
}

/** CPU seconds of this process (every thread: the main one, onnxruntime's, the runner's workers) since `from`. */
function cpuSince(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1e6;
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'todeval-bench-nli-'));
/** A model directory whose q8 file is `file`, the rest (config, tokenizer) the model's own. */
function q8FileDir(file: string, k: number): string {
  const dir = path.join(tmp, `q8-file-${k}`);
  mkdirSync(path.join(dir, 'onnx'), { recursive: true });
  for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']) {
    if (existsSync(path.join(modelDir, f))) symlinkSync(path.join(modelDir, f), path.join(dir, f));
  }
  symlinkSync(path.resolve(file), path.join(dir, onnxFileName('q8')));
  return dir;
}

async function ortContender(
  name: string,
  family: NliDtype,
  model: string,
  maxBatchTokens: number,
  maxBatchSize: number,
  oneByOne: boolean,
  maxPadFraction: number,
  file?: string,
): Promise<Contender> {
  const runner: NliRunner = await createNliRunner({ model, dtype: family, device: o.device, threads: o.threads, maxBatchTokens, maxBatchSize, maxPadFraction });
  if (oneByOne) for (const p of warmup.slice(0, 4)) await runner.scoreOne(p);
  else await runner.score(warmup);
  let before: NliRunnerStats = runner.stats();
  const c: Contender = {
    name,
    family,
    file,
    oneByOne,
    batched: !oneByOne,
    ...emptyTally(),
    async round(pairs) {
      const t = performance.now();
      const cpu = process.cpuUsage();
      if (oneByOne) for (const p of pairs) c.probs.push(await runner.scoreOne(p));
      else c.probs.push(...(await runner.score(pairs)));
      c.cpu += cpuSince(cpu);
      return (performance.now() - t) / 1000;
    },
    restart() {
      before = runner.stats();
    },
    async close() {
      const after = runner.stats();
      c.tokens = after.tokens - before.tokens;
      c.paddedTokens = after.paddedTokens - before.paddedTokens;
      c.batches = after.batches - before.batches;
      await runner.close();
    },
  };
  return c;
}

function torchContender(peer: TorchPeerProcess, variant: 'fp32' | 'int8', batch: number): Contender {
  const index = labelIndexFromConfig(modelConfig, fp32Model.configPath);
  const c: Contender = {
    name: `torch ${variant === 'fp32' ? 'fp32 eager' : `int8 quantize_dynamic[${peer.info?.int8Engine}]`} ${batch === 1 ? 'one pair at a time' : `batched (${peerPlanLabel})`}`,
    family: variant === 'fp32' ? 'torch-fp32' : 'torch-int8',
    oneByOne: batch === 1,
    batched: batch > 1,
    ...emptyTally(),
    async round(_pairs, ids) {
      const plan = batch === 1 ? ids.map((_, i) => [i]) : planRound(ids);
      const r = await peer.run(variant, batch, ids, tokenizer.padId, plan);
      c.probs.push(...r.logits.map((l) => probsFromLogits(l, 0, l.length, index)));
      c.tokens += r.real;
      c.paddedTokens += r.padded;
      c.batches += plan.length;
      c.cpu += r.cpuSeconds;
      return r.seconds;
    },
    async close() {},
  };
  return c;
}

/**
 * A dtype's ONNX session with nothing around it: the round's token ids, length-sorted and cut into
 * --torch-batch rows as the peer cuts them, padded and run. Against the runner it shows the host
 * work (tokenizer, pool, session thread); against torch, the model and nothing else on both sides.
 */
async function sessionContender(dtype: NliDtype): Promise<Contender> {
  const resolved = resolveModel(modelDir, dtype);
  const session = await openSession(resolved.onnxPath, { device: 'cpu', threads: o.threads, notice: () => {} });
  const index = labelIndexFromConfig(modelConfig, resolved.configPath);
  const c: Contender = {
    name: `${dtype} session alone (pre-tokenized, ${peerPlanLabel})`,
    family: dtype,
    oneByOne: false,
    batched: false,
    alone: true,
    ...emptyTally(),
    async round(_pairs, ids) {
      const t = performance.now();
      const cpu = process.cpuUsage();
      const out: NliProbs[] = new Array(ids.length);
      for (const idx of planRound(ids)) {
        const padded = padRows(idx.map((i) => ids[i]), tokenizer.padId);
        const logits = await session.run(padded);
        const n = logits.length / idx.length;
        // The runner's own softmax, so a session alone and the runner agree bit for bit on the same logits.
        idx.forEach((i, r) => (out[i] = probsFromLogits(logits, r * n, n, index)));
        c.tokens += idx.reduce((a, i) => a + ids[i].length, 0);
        c.paddedTokens += padded.rows * padded.width;
        c.batches++;
      }
      const seconds = (performance.now() - t) / 1000;
      c.cpu += cpuSince(cpu);
      c.probs.push(...out);
      return seconds;
    },
    async close() {
      await session.release();
    },
  };
  // Warm-up: the shapes of a short and a long batch.
  const warmIds = warmup.map((p) => tokenizer.encodePair(p.premise, p.hypothesis).ids);
  await c.round([], warmIds);
  c.probs.length = 0;
  c.tokens = c.paddedTokens = c.batches = 0;
  return c;
}

/** GPU memory in use (MiB) as nvidia-smi reports it; undefined where there is none. */
function gpuMemoryMiB(): number | undefined {
  try {
    return Number(execFileSync('nvidia-smi', ['--query-gpu=memory.used', '--format=csv,noheader,nounits'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0]);
  } catch {
    return undefined;
  }
}

/** The ORT contenders of the model directory and of each --q8-file, in the order of the table. */
function ortPlan(): Parameters<typeof ortContender>[] {
  const plan: Parameters<typeof ortContender>[] = [];
  const pads = o.pad.split(',').map(Number);
  const add = (label: string, family: NliDtype, model: string, file?: string) => {
    if (o.single) plan.push([`${label} one pair at a time`, family, model, 1_000_000, 1, true, 1, file]);
    for (const budget of budgets) {
      for (const pad of pads) plan.push([`${label} batched (${budget} tok, <=${o.batchSize}, pad<=${pad})`, family, model, budget, o.batchSize, false, pad, file]);
    }
  };
  for (const dtype of dtypes) add(dtype, dtype, modelDir);
  o.q8File.forEach((f, k) => add(`q8 file ${path.basename(f)}`, 'q8', q8FileDir(f, k), f));
  return plan;
}

const contenders: Contender[] = [];
const modelOnly: { dtype: NliDtype; budget: number; pairsPerSec: number; tokensPerSec: number; batches: number }[] = [];
let peer: TorchPeerProcess | undefined;
let peerCheck: { batch: number; single: number } | undefined;

/** Up to 8 rows of the timed set (the longest among them) through ORT fp32, for the peer's check. */
async function checkPeer(p: TorchPeerProcess): Promise<{ batch: number; single: number }> {
  const ids = sample.map((q) => tokenizer.encodePair(q.premise, q.hypothesis).ids);
  const n = Math.min(8, ids.length);
  const indices = Array.from({ length: n }, (_, i) => Math.floor((i * ids.length) / n));
  const longest = ids.reduce((b, r, i) => (r.length > ids[b].length ? i : b), 0);
  if (n > 1 && !indices.includes(longest)) indices[n - 1] = longest;
  const rows = indices.map((i) => ids[i]);
  const session = await openSession(fp32Model.onnxPath, { device: 'cpu', threads: o.threads, notice: () => {} });
  const split = (flat: Float32Array, k: number) => Array.from({ length: k }, (_, i) => Array.from(flat.subarray(i * 3, i * 3 + 3)));
  const batchLogits = split(await session.run(padRows(rows, tokenizer.padId)), n);
  const singleLogits: number[][] = [];
  for (const r of rows) singleLogits.push(split(await session.run(padRows([r], tokenizer.padId)), 1)[0]);
  await session.release();
  return p.check(rows, tokenizer.padId, batchLogits, singleLogits);
}

try {
  if (sequential) {
    for (const args of ortPlan()) {
      const c = await ortContender(...args);
      // One pair at a time on a GPU is latency-bound: a slice of the set says as much as all of it.
      const pairs = c.oneByOne ? sample.slice(0, Math.min(sample.length, 512)) : sample;
      const cpu0 = c.cpu;
      c.passSeconds.push(await c.round(pairs, []));
      c.passCpu.push(c.cpu - cpu0);
      c.passPairs.push(pairs.length);
      c.gpuMiB = gpuMemoryMiB();
      await c.close();
      contenders.push(c);
    }
    // The model alone: the same pairs pre-tokenized, length-sorted and cut into batches of the
    // largest budget, straight into the ONNX session. The gap to the runner's figure is host work
    // (tokenization, building tensors, the pool), i.e. what a faster host side could still win.
    for (const dtype of dtypes) {
      const resolved = resolveModel(modelDir, dtype);
      const ids = sample.map((p) => tokenizer.encodePair(p.premise, p.hypothesis).ids).sort((a, b) => a.length - b.length);
      const budget = Math.max(...budgets);
      const batches = planBatches(ids.map((r) => r.length), { maxBatchTokens: budget, maxBatchSize: o.batchSize });
      const session = await openSession(resolved.onnxPath, { device: o.device, threads: o.threads });
      for (const b of planBatches(ids.slice(0, 1024).map((r) => r.length), { maxBatchTokens: budget, maxBatchSize: o.batchSize })) await session.run(padRows(b.map((i) => ids[i]), tokenizer.padId));
      const t = performance.now();
      for (const b of batches) await session.run(padRows(b.map((i) => ids[i]), tokenizer.padId));
      const sec = (performance.now() - t) / 1000;
      await session.release();
      const tokens = ids.reduce((n, r) => n + r.length, 0);
      modelOnly.push({ dtype, budget, pairsPerSec: ids.length / sec, tokensPerSec: tokens / sec, batches: batches.length });
      console.log(`${`${dtype} model only (pre-tokenized, ${budget} tok)`.padEnd(52)} ${sec.toFixed(2).padStart(7)} s  ${(ids.length / sec).toFixed(2).padStart(9)} pairs/s  ${(tokens / sec).toFixed(0).padStart(8)} tokens/s  ${batches.length} batches`);
    }
  } else {
    for (const args of ortPlan()) contenders.push(await ortContender(...args));
    if (o.sessionAlone) for (const d of dtypes) contenders.push(await sessionContender(d));
    if (peerDir) {
      peer = await TorchPeerProcess.start(peerDir, modelDir, o.threads ?? os.availableParallelism());
      const info = peer.info!;
      console.log(`PyTorch peer: torch ${info.torch}, ${info.threads} threads, BLAS ${info.blas.join(', ') || '?'}, int8 engine ${info.int8Engine ?? 'none'}, loaded in ${info.loadSeconds.toFixed(1)} s`);
      peerCheck = await checkPeer(peer);
      console.log(`PyTorch peer vs ONNX Runtime fp32 logits (8 pairs): max |diff| padded batch ${peerCheck.batch.toExponential(1)}, each alone ${peerCheck.single.toExponential(1)}`);
      // A faster wrong model proves nothing.
      if (!(peerCheck.batch <= 1e-3 && peerCheck.single <= 1e-3)) throw new Error('--peer-torch: torch and ONNX Runtime disagree by more than 1e-3 on the same ids');
      const int8 = dtypes.some((d) => d === 'q8' || d === 'q8-tensor') || o.q8File.length > 0;
      const variants: ('fp32' | 'int8')[] = [...(dtypes.includes('fp32') ? (['fp32'] as const) : []), ...(int8 && info.int8Engine ? (['int8'] as const) : [])];
      const warmIds = warmup.map((p) => tokenizer.encodePair(p.premise, p.hypothesis).ids);
      for (const v of variants) {
        for (const b of o.single ? [1, o.torchBatch] : [o.torchBatch]) {
          const c = torchContender(peer, v, b);
          await peer.run(v, b, b === 1 ? warmIds.slice(0, 4) : warmIds, tokenizer.padId, b === 1 ? undefined : planRound(warmIds));
          contenders.push(c);
        }
      }
    }
    console.log(`contenders (${contenders.length}): ${contenders.map((c) => c.name).join('; ')}`);
    let roundNo = 0;
    /** Every contender through every round of a pass, the order rotated by one each round; seconds per contender. */
    const runPass = async (pairs: NliPair[]): Promise<Map<Contender, number>> => {
      const seconds = new Map(contenders.map((c) => [c, 0]));
      const cpuBefore = new Map(contenders.map((c) => [c, c.cpu]));
      for (let start = 0; start < pairs.length; start += o.round, roundNo++) {
        const chunk = pairs.slice(start, start + o.round);
        const ids = chunk.map((p) => tokenizer.encodePair(p.premise, p.hypothesis).ids);
        // Rotate who goes first every round, so a change of load never lands on one contender.
        for (let j = 0; j < contenders.length; j++) {
          const c = contenders[(j + roundNo) % contenders.length];
          seconds.set(c, seconds.get(c)! + (await c.round(chunk, ids)));
        }
      }
      for (const c of contenders) c.passCpu.push(c.cpu - cpuBefore.get(c)!);
      return seconds;
    };
    if (warmPass) {
      // Untimed: each contender meets every shape of the timed passes once before the clock runs.
      // A pass of shapes not met before cost more CPU than its repeats (2-layer model: torch int8
      // ~30%, onnxruntime q8 ~15%, fp32 either <=5%; docs/nli.md), and pass 1 alone would pay it.
      const seconds = await runPass(warmPass);
      console.log(`untimed pass (${warmPass.length} length twins of pass 1, load ${os.loadavg()[0].toFixed(2)}): ` + contenders.map((c) => `${c.name} ${(warmPass.length / seconds.get(c)!).toFixed(2)}`).join(', ') + ' pairs/s');
      for (const c of contenders) {
        c.probs.length = 0;
        c.tokens = c.paddedTokens = c.batches = 0;
        c.passCpu.length = 0;
        c.restart?.();
      }
    }
    for (let k = 0; k < passes; k++) {
      const pairs = passSamples[k];
      const seconds = await runPass(pairs);
      for (const c of contenders) {
        c.passSeconds.push(seconds.get(c)!);
        c.passPairs.push(pairs.length);
      }
      console.log(
        `pass ${k + 1} (${pairs.length} pairs, load ${os.loadavg()[0].toFixed(2)}): ` +
          contenders.map((c) => `${c.name} ${(pairs.length / c.passSeconds[k]).toFixed(2)}`).join(', ') +
          ' pairs/s',
      );
    }
    for (const c of contenders) await c.close();
  }
} finally {
  await peer?.close();
  rmSync(tmp, { recursive: true, force: true });
}
const loadEnd = os.loadavg();

const totalSeconds = (c: Contender) => c.passSeconds.reduce((a, b) => a + b, 0);
const pairsPerSec = (c: Contender) => c.passPairs.reduce((a, b) => a + b, 0) / totalSeconds(c);
const passRate = (c: Contender, k: number) => c.passPairs[k] / c.passSeconds[k];

interface Figure {
  mode: string;
  dtype: Family;
  file?: string;
  budget?: number;
  gpuMiB?: number;
  seconds: number;
  passSeconds: number[];
  /** CPU seconds per pass (see Contender.passCpu). */
  passCpu: number[];
  pairsPerSec: number;
  tokensPerSec: number;
  gflops: number;
  batches: number;
  paddingEfficiency: number;
}
const figures: Figure[] = contenders.map((c) => ({
  mode: c.name,
  dtype: c.family,
  file: c.file,
  budget: c.batched && c.family !== 'torch-fp32' && c.family !== 'torch-int8' ? Number(/\((\d+) tok/.exec(c.name)?.[1]) : undefined,
  gpuMiB: c.gpuMiB,
  seconds: totalSeconds(c),
  passSeconds: c.passSeconds,
  passCpu: c.passCpu,
  pairsPerSec: pairsPerSec(c),
  tokensPerSec: c.tokens / totalSeconds(c),
  gflops: (c.paddedTokens * flopsPerToken) / totalSeconds(c) / 1e9,
  batches: c.batches,
  paddingEfficiency: c.tokens / c.paddedTokens,
}));
console.log(`\ndense encoder FLOPs: ${(flopsPerToken / 1e9).toFixed(2)} GFLOP/token, ${((flopsPerToken * meanTokens) / 1e9).toFixed(1)} GFLOP per pair at the first set's mean length`);
for (const f of figures) {
  console.log(
    `${f.mode.padEnd(60)} ${f.seconds.toFixed(2).padStart(7)} s  ${f.pairsPerSec.toFixed(2).padStart(7)} pairs/s  ${f.tokensPerSec.toFixed(0).padStart(6)} tokens/s  ` +
      `${f.batches} batches, padding efficiency ${f.paddingEfficiency.toFixed(2)}, ~${f.gflops.toFixed(0)} GFLOP/s${f.gpuMiB !== undefined ? `, GPU memory ${f.gpuMiB} MiB` : ''}` +
      `${f.passSeconds.length > 1 ? `  (per pass ${contenders[figures.indexOf(f)].passSeconds.map((_, k) => passRate(contenders[figures.indexOf(f)], k).toFixed(2)).join(', ')}; CPU ms per pair ${f.passCpu.map((x, k) => ((1000 * x) / contenders[figures.indexOf(f)].passPairs[k]).toFixed(1)).join(', ')})` : ''}`,
  );
}

/** The fastest contender of a family, batched or one at a time, over the whole run. */
function best(family: Family, batched: boolean, file?: string): Contender | undefined {
  return contenders
    .filter((c) => c.family === family && c.batched === batched && c.oneByOne === !batched && c.file === file)
    .reduce<Contender | undefined>((a, b) => (!a || pairsPerSec(b) > pairsPerSec(a) ? b : a), undefined);
}

interface Ratio {
  label: string;
  ours: string;
  theirs: string;
  ratio: number;
  passRatios: number[];
  /** Largest |pass ratio / whole-run ratio - 1|. */
  spread: number;
  /** The same by CPU seconds per pair (theirs / ours): what each pass cost, apart from the machine's drift. */
  cpuRatio: number;
  cpuPassRatios: number[];
  cpuSpread: number;
}
const ratios: Ratio[] = [];
function ratio(label: string, a: Contender | undefined, b: Contender | undefined): void {
  if (!a || !b || a === b) return;
  const r = pairsPerSec(a) / pairsPerSec(b);
  const passRatios = a.passSeconds.map((_, k) => passRate(a, k) / passRate(b, k));
  const cpuPerPair = (c: Contender, k: number) => c.passCpu[k] / c.passPairs[k];
  const cpuRatio = b.passCpu.reduce((x, y) => x + y, 0) / a.passCpu.reduce((x, y) => x + y, 0);
  const cpuPassRatios = a.passCpu.map((_, k) => cpuPerPair(b, k) / cpuPerPair(a, k));
  const spreadOf = (per: number[], whole: number) => Math.max(...per.map((p) => Math.abs(p / whole - 1)));
  ratios.push({ label, ours: a.name, theirs: b.name, ratio: r, passRatios, spread: spreadOf(passRatios, r), cpuRatio, cpuPassRatios, cpuSpread: spreadOf(cpuPassRatios, cpuRatio) });
}
const base = dtypes[0];
const int8Families: NliDtype[] = dtypes.filter((d) => d === 'q8' || d === 'q8-tensor');
for (const batched of [true, false]) {
  const how = batched ? 'batched' : 'one at a time';
  for (const d of dtypes.slice(1)) ratio(`${d} / ${base}, ${how}`, best(d, batched), best(base, batched));
  if (int8Families.length === 2) ratio(`q8 (per row) / q8-tensor, ${how}`, best('q8', batched), best('q8-tensor', batched));
  for (const f of o.q8File) ratio(`q8 / q8 file ${path.basename(f)}, ${how}`, best('q8', batched), best('q8', batched, f));
  const torchOf = (family: 'torch-fp32' | 'torch-int8') => best(family, batched);
  if (dtypes.includes('fp32')) ratio(`fp32 / torch fp32, ${how}`, best('fp32', batched), torchOf('torch-fp32'));
  for (const d of int8Families) ratio(`${d} / torch int8, ${how}`, best(d, batched), torchOf('torch-int8'));
  for (const f of o.q8File) ratio(`q8 file ${path.basename(f)} / torch int8, ${how}`, best('q8', batched, f), torchOf('torch-int8'));
}
// The sessions alone (marked neither batched nor one at a time, so best() never picks them).
const alone = (d: NliDtype) => contenders.find((c) => c.family === d && c.alone);
for (const d of dtypes) ratio(`${d} runner / ${d} session alone`, best(d, true), alone(d));
if (dtypes.includes('fp32')) ratio('fp32 session alone / torch fp32, batched', alone('fp32'), best('torch-fp32', true));
for (const d of int8Families) ratio(`${d} session alone / torch int8, batched`, alone(d), best('torch-int8', true));
const pct = (x: number) => `±${(100 * x).toFixed(0)}%`;
if (ratios.length > 0) {
  console.log(`\nratios of pairs/s over the whole run, per pass, and the spread (largest distance of a pass from the whole run):`);
  for (const r of ratios) {
    console.log(`  ${r.label.padEnd(44)} ${r.ratio.toFixed(2).padStart(5)}x  per pass ${r.passRatios.map((p) => p.toFixed(2)).join(', ')}  spread ${pct(r.spread)}   (${r.ours} vs ${r.theirs})`);
    console.log(`  ${'  by CPU seconds per pair'.padEnd(44)} ${r.cpuRatio.toFixed(2).padStart(5)}x  per pass ${r.cpuPassRatios.map((p) => p.toFixed(2)).join(', ')}  spread ${pct(r.cpuSpread)}`);
  }
}

// Agreement: every dtype's (and each q8 file's) first contender against fp32's first, pair by pair;
// each --q8-file also against q8's. The same pairs in the same order in every contender.
interface Agreement {
  label: string;
  maxProbDiff: number;
  argmaxEqual: number;
  identical: number;
  pairs: number;
}
const agreements: Agreement[] = [];
function agree(label: string, a: Contender | undefined, b: Contender | undefined): void {
  if (!a || !b || a === b) return;
  const n = Math.min(a.probs.length, b.probs.length);
  let diff = 0;
  let same = 0;
  let identical = 0;
  for (let i = 0; i < n; i++) {
    let d = 0;
    for (const k of LABELS) d = Math.max(d, Math.abs(a.probs[i][k] - b.probs[i][k]));
    diff = Math.max(diff, d);
    if (d === 0) identical++;
    if (argmaxLabel(a.probs[i]) === argmaxLabel(b.probs[i])) same++;
  }
  agreements.push({ label, maxProbDiff: diff, argmaxEqual: same, identical, pairs: n });
}
const first = (family: Family, file?: string) => contenders.find((c) => c.family === family && c.file === file);
const fp32Ref = first('fp32');
let fp32Spread = 0;
if (fp32Ref) {
  for (const d of dtypes.filter((x) => x !== 'fp32')) agree(`${d} vs fp32`, first(d), fp32Ref);
  for (const f of o.q8File) agree(`q8 file ${path.basename(f)} vs fp32`, first('q8', f), fp32Ref);
  agree('torch fp32 vs fp32', first('torch-fp32'), fp32Ref);
  agree('torch int8 vs fp32', first('torch-int8'), fp32Ref);
  fp32Spread = Math.max(...LABELS.map((k) => Math.max(...fp32Ref.probs.map((p) => p[k])) - Math.min(...fp32Ref.probs.map((p) => p[k]))));
}
for (const f of o.q8File) agree(`q8 file ${path.basename(f)} vs q8`, first('q8', f), first('q8'));
// Batched against one at a time within one family: batching may change float rounding only.
for (const c of contenders.filter((x) => x.batched)) {
  const single = contenders.find((x) => x.oneByOne && x.family === c.family && x.file === c.file);
  agree(`${c.name} vs one at a time`, c, single);
}
if (agreements.length > 0) {
  console.log(`\nagreement on the ${fp32Ref?.probs.length ?? contenders[0]?.probs.length} timed pairs (fp32's own probabilities span ${fp32Spread.toExponential(1)} across them):`);
  for (const a of agreements) {
    console.log(`  ${a.label.padEnd(60)} max |prob diff| ${a.maxProbDiff.toExponential(1)}, argmax equal ${a.argmaxEqual}/${a.pairs}, bit-identical ${a.identical}/${a.pairs}`);
  }
}
if (peerCheck) console.log(`PyTorch peer logits vs ORT fp32 on the same ids: ${Math.max(peerCheck.batch, peerCheck.single).toExponential(1)}`);
console.log(`load average at the start ${fmtLoad(loadStart)}, at the end ${fmtLoad(loadEnd)}`);

// The markdown table for docs/nli.md: the run's conditions, every contender, the ratios, agreement.
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
} catch {
  // not a checkout
}
if (!sequential) {
  const md: string[] = [];
  md.push(
    `\nMarkdown for docs/nli.md:\n\n` +
      `${new Date().toISOString().slice(0, 10)}, todeval ${commit}, \`bench:nli -- ${process.argv.slice(2).filter((a) => a !== '--').join(' ')}\`; ` +
      `${cpuModel} (int8 flags ${cpuFlags}), ${modelConfig.num_hidden_layers} layers x ${modelConfig.hidden_size}; ${passes} passes of ${o.pairs} fresh SGD pairs in rounds of ${o.round}, ` +
      `every contender every round, order rotated${twinned ? ', passes 2 on and an untimed pass first of the same token lengths as pass 1' : ''}; load average ${loadStart[0].toFixed(1)} at the start, ${loadEnd[0].toFixed(1)} at the end.\n`,
  );
  md.push(`| contender | pairs/s | per pass |`);
  md.push(`|---|---|---|`);
  for (const c of contenders) md.push(`| ${c.name} | ${pairsPerSec(c).toFixed(2)} | ${c.passSeconds.map((_, k) => passRate(c, k).toFixed(2)).join(', ')} |`);
  if (ratios.length > 0) {
    md.push('', `| ratio (pairs/s) | whole run | per pass | spread | by CPU s/pair: per pass | spread |`, `|---|---|---|---|---|---|`);
    for (const r of ratios) {
      md.push(`| ${r.label} | ${r.ratio.toFixed(2)}x | ${r.passRatios.map((p) => p.toFixed(2)).join(', ')} | ${pct(r.spread)} | ${r.cpuPassRatios.map((p) => p.toFixed(2)).join(', ')} | ${pct(r.cpuSpread)} |`);
    }
  }
  if (agreements.length > 0) {
    md.push('', `| agreement (${fp32Ref?.probs.length ?? 0} pairs; fp32 spans ${fp32Spread.toExponential(1)}) | max \\|prob diff\\| | argmax equal | bit-identical |`, `|---|---|---|---|`);
    for (const a of agreements) md.push(`| ${a.label} | ${a.maxProbDiff.toExponential(1)} | ${a.argmaxEqual}/${a.pairs} | ${a.identical}/${a.pairs} |`);
  }
  console.log(md.join('\n'));
}

if (o.json) {
  writeFileSync(
    o.json,
    JSON.stringify(
      {
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, int8Flags: cpuFlags },
        commit,
        dedupe: { requested: cand.requested, distinct: all.length, ratio: all.length / cand.requested },
        sample: sample.length,
        device: o.device,
        dtypes,
        passes,
        lengthTwins: twinned,
        round: o.round,
        figures,
        modelOnly,
        ratios,
        agreements,
        fp32Spread,
        peerTorch: peer ? { ...peer.info, check: peerCheck } : undefined,
        loadAverage: { start: loadStart, end: loadEnd },
      },
      null,
      2,
    ),
  );
}
