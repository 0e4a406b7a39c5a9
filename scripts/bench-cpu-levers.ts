/**
 * The CPU levers left after precision, measured side by side in one run, per dtype, on bench:nli's
 * SGD pairs (pre-tokenized, so only the model is timed):
 *
 *   1. ORT graph optimization level: disabled / basic / extended / all (the runner uses all);
 *   2. a saved optimized model (optimizedModelFilePath written once at level all, then loaded with
 *      optimizations off): session-creation time and run speed against optimizing at every load;
 *   3. one session with N intra-op threads vs N sessions with one thread each, running their halves
 *      of the batches concurrently;
 *   4. the padded-token budget and rows per batch (the runner's CPU default: 2048 tokens, 16 rows);
 *   5. ORT's intra-op threads spinning while they wait for work (its default) or sleeping: spinning
 *      wins on an idle machine and may lose on a busy one, where a spinning thread holds a core.
 *
 *   npm run bench:cpu-levers -- [--model DIR] [--dtype fp32,q8] [--pairs 96] [--passes 2] [--threads 2]
 *     [--levers opt,saved,sessions,budget,spin] [--json FILE]
 *
 * Contenders of one lever are created together and take turns over each pass's fresh pairs, with the
 * order rotated every pass, so load from other processes falls on all alike; only ratios within a
 * lever mean anything on a shared machine. Sessions of one lever are released before the next.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import ort from 'onnxruntime-node';
import { resolveDataDir } from '../src/data/data-dir.js';
import { planBatches } from '../src/nli/batcher.js';
import { parseDtype, resolveModel, type NliDtype } from '../src/nli/model-store.js';
import { CPU_LIMITS } from '../src/nli/runner.js';
import { paddedFeeds } from '../src/nli/session.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { sgdCandidatePairs, spreadSample } from './lib/sgd-pairs.js';

const program = new Command('bench-cpu-levers')
  .option('--model <dir>', 'model directory', '.cache/models/large-random-roberta')
  .option('--dtype <list>', 'dtype(s), comma-separated (fp32, q8; int8 = q8)', 'fp32,q8')
  .option('--pairs <n>', 'pairs per pass', (v) => Number(v), 96)
  .option('--passes <n>', 'passes per lever, each over fresh pairs', (v) => Number(v), 2)
  .option('--threads <n>', 'intra-op threads of the one-session contenders', (v) => Number(v), os.availableParallelism())
  .option('--levers <list>', 'which levers: opt,saved,sessions,budget,spin', 'opt,saved,sessions,budget,spin')
  .option('--data-dir <dir>', 'data directory (default: resolveDataDir)')
  .option('--json <file>', 'also write the figures as JSON');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ model: string; dtype: string; pairs: number; passes: number; threads: number; levers: string; dataDir?: string; json?: string }>();
const dtypes = o.dtype.split(',').map((d) => parseDtype(d.trim()) as NliDtype);
const levers = new Set(o.levers.split(',').map((l) => l.trim()));

const all = sgdCandidatePairs(resolveDataDir(o.dataDir).dir).distinct;
const passPairs = Array.from({ length: o.passes }, (_, k) => spreadSample(all, o.pairs, 4, k));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'todeval-levers-'));

type Level = 'disabled' | 'basic' | 'extended' | 'all';
function options(level: Level, threads: number, extra: ort.InferenceSession.SessionOptions = {}): ort.InferenceSession.SessionOptions {
  // The runner's own options (src/nli/session.ts) apart from the lever under test.
  return { graphOptimizationLevel: level, enableMemPattern: false, executionMode: 'sequential', intraOpNumThreads: threads, interOpNumThreads: 1, executionProviders: ['cpu'], logSeverityLevel: 3, ...extra };
}

/** A way of scoring a pass's token rows: its sessions and how it feeds them. */
interface Contender {
  name: string;
  createSeconds: number;
  sessions: ort.InferenceSession[];
  limits: { maxBatchTokens: number; maxBatchSize: number };
  seconds: number[];
  pairs: number[];
}

async function create(name: string, file: string, opts: ort.InferenceSession.SessionOptions[], limits = { maxBatchTokens: CPU_LIMITS.maxBatchTokens, maxBatchSize: CPU_LIMITS.maxBatchSize }): Promise<Contender> {
  const t = performance.now();
  const sessions: ort.InferenceSession[] = [];
  for (const so of opts) sessions.push(await ort.InferenceSession.create(file, so));
  return { name, createSeconds: (performance.now() - t) / 1000, sessions, limits, seconds: [], pairs: [] };
}

async function timePass(c: Contender, rows: number[][], padId: number): Promise<void> {
  const sorted = [...rows].sort((a, b) => a.length - b.length);
  const batches = planBatches(
    sorted.map((r) => r.length),
    { ...c.limits, maxPadFraction: CPU_LIMITS.maxPadFraction },
  ).map((b) => b.map((i) => sorted[i]));
  const t = performance.now();
  if (c.sessions.length === 1) {
    for (const b of batches) await c.sessions[0].run(paddedFeeds(b, padId));
  } else {
    // Session i takes batches i, i+n, ...: each gets short and long batches alike.
    await Promise.all(c.sessions.map(async (s, i) => {
      for (let j = i; j < batches.length; j += c.sessions.length) await s.run(paddedFeeds(batches[j], padId));
    }));
  }
  c.seconds.push((performance.now() - t) / 1000);
  c.pairs.push(rows.length);
}

async function warmUp(c: Contender, rows: number[][], padId: number): Promise<void> {
  const sorted = [...rows].sort((a, b) => a.length - b.length);
  for (const s of c.sessions) for (const r of [sorted.slice(0, 4), sorted.slice(-4)]) await s.run(paddedFeeds(r, padId));
}

interface LeverResult {
  lever: string;
  dtype: NliDtype;
  rows: { name: string; createSeconds: number; pairsPerSec: number; perPass: number[]; ratio: number; passRatios: number[]; note?: string }[];
}
const results: LeverResult[] = [];

async function measure(lever: string, dtype: NliDtype, contenders: Contender[], tok: PairTokenizer, notes: Record<string, string> = {}): Promise<void> {
  const rowsOf = (k: number) => passPairs[k].map((p) => tok.encodePair(p.premise, p.hypothesis).ids);
  const warmRows = spreadSample(all, 16, 4, o.passes + 1).map((p) => tok.encodePair(p.premise, p.hypothesis).ids);
  for (const c of contenders) await warmUp(c, warmRows, tok.padId);
  for (let k = 0; k < o.passes; k++) {
    const rows = rowsOf(k);
    for (let i = 0; i < contenders.length; i++) await timePass(contenders[(i + k) % contenders.length], rows, tok.padId);
  }
  for (const c of contenders) for (const s of c.sessions) await s.release();
  const rate = (c: Contender) => c.pairs.reduce((a, b) => a + b, 0) / c.seconds.reduce((a, b) => a + b, 0);
  const base = contenders[0];
  const res: LeverResult = {
    lever,
    dtype,
    rows: contenders.map((c) => ({
      name: c.name,
      createSeconds: c.createSeconds,
      pairsPerSec: rate(c),
      perPass: c.seconds.map((s, k) => c.pairs[k] / s),
      ratio: rate(c) / rate(base),
      passRatios: c.seconds.map((s, k) => base.seconds[k] / s),
      note: notes[c.name],
    })),
  };
  results.push(res);
  console.log(`\n${lever} (${dtype}; ratios over "${base.name}", per pass in brackets; load ${os.loadavg()[0].toFixed(2)})`);
  console.log(`${'contender'.padEnd(40)}${'create s'.padStart(10)}${'pairs/s'.padStart(10)}${'ratio'.padStart(8)}  per pass`);
  for (const r of res.rows) {
    console.log(`${r.name.padEnd(40)}${r.createSeconds.toFixed(2).padStart(10)}${r.pairsPerSec.toFixed(2).padStart(10)}${`${r.ratio.toFixed(2)}x`.padStart(8)}  [${r.passRatios.map((x) => x.toFixed(2)).join(', ')}]${r.note ? `  ${r.note}` : ''}`);
  }
}

console.log(`${o.pairs} SGD pairs per pass, ${o.passes} passes, threads ${o.threads}, dtypes ${dtypes.join(', ')}, levers ${[...levers].join(', ')}`);
for (const dtype of dtypes) {
  const model = resolveModel(path.resolve(o.model), dtype);
  const tok = PairTokenizer.fromFiles(model.tokenizerPath, model.tokenizerConfigPath, JSON.parse(readFileSync(model.configPath, 'utf8')));
  const t = o.threads;
  if (levers.has('opt')) {
    const cs: Contender[] = [];
    for (const level of ['all', 'extended', 'basic', 'disabled'] as Level[]) cs.push(await create(`graph optimization ${level}`, model.onnxPath, [options(level, t)]));
    await measure('graph optimization level', dtype, cs, tok);
  }
  if (levers.has('saved')) {
    const saved = path.join(tmp, `${dtype}-optimized.onnx`);
    const writer = await ort.InferenceSession.create(model.onnxPath, options('all', t, { optimizedModelFilePath: saved }));
    await writer.release();
    const cs = [await create('optimize at load (level all)', model.onnxPath, [options('all', t)]), await create('saved optimized model, optimizations off', saved, [options('disabled', t)])];
    await measure('saved optimized model', dtype, cs, tok, { [cs[1].name]: `${(statSync(saved).size / 2 ** 20).toFixed(0)} MiB on disk vs ${(statSync(model.onnxPath).size / 2 ** 20).toFixed(0)} MiB` });
    rmSync(saved, { force: true });
  }
  if (levers.has('sessions') && t > 1) {
    const cs = [await create(`one session, ${t} threads`, model.onnxPath, [options('all', t)]), await create(`${t} sessions, 1 thread each`, model.onnxPath, Array.from({ length: t }, () => options('all', 1)))];
    await measure('threads vs sessions', dtype, cs, tok);
  }
  if (levers.has('budget')) {
    const cs: Contender[] = [];
    for (const [tokens, size] of [[2048, 16], [1024, 16], [4096, 32], [8192, 64]] as const) {
      cs.push(await create(`${tokens} tokens, <=${size} rows${tokens === CPU_LIMITS.maxBatchTokens && size === CPU_LIMITS.maxBatchSize ? ' (default)' : ''}`, model.onnxPath, [options('all', t)], { maxBatchTokens: tokens, maxBatchSize: size }));
    }
    await measure('batch budget', dtype, cs, tok);
  }
  if (levers.has('spin')) {
    const cs = [
      await create('threads spin while waiting (default)', model.onnxPath, [options('all', t)]),
      await create('threads sleep while waiting', model.onnxPath, [options('all', t, { extra: { session: { intra_op: { allow_spinning: '0' } } } })]),
    ];
    await measure('thread spinning', dtype, cs, tok);
  }
}
rmSync(tmp, { recursive: true, force: true });
if (o.json) writeFileSync(o.json, JSON.stringify({ machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model }, pairs: o.pairs, passes: o.passes, threads: o.threads, results }, null, 2));
