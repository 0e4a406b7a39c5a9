/**
 * Where the time of an NLI forward pass goes, per ONNX Runtime kernel: runs bench:nli's timed set
 * (same SGD pairs) through each dtype's session with ORT profiling on, in length-sorted batches as
 * the runner forms them, and prints the per-op-type share of kernel time side by side.
 *
 *   npm run profile:nli -- [--model DIR] [--dtype fp32,q8] [--pairs 96] [--threads N] [--budget 2048] [--batch-size 16] [--pad 0.15]
 *
 * ORT writes one JSON trace per session (Chrome trace format) into the temp directory; each is read,
 * summed by op type and deleted. Profiling adds a little overhead to every kernel, so use
 * bench:nli for speeds and this for the split.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import ort from 'onnxruntime-node';
import { resolveDataDir } from '../src/data/data-dir.js';
import { planBatches } from '../src/nli/batcher.js';
import { parseDtype, resolveModel, type NliDtype } from '../src/nli/model-store.js';
import { paddedFeeds } from '../src/nli/session.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { sgdCandidatePairs, spreadSample } from './lib/sgd-pairs.js';

const program = new Command('profile-nli')
  .option('--model <dir>', 'model directory', '.cache/models/large-random-roberta')
  .option('--dtype <list>', 'dtype(s), comma-separated', 'fp32,q8')
  .option('--pairs <n>', 'pairs in the timed set', (v) => Number(v), 96)
  .option('--threads <n>', 'intra-op threads (default: all cores)', (v) => Number(v))
  .option('--budget <n>', 'padded-token budget per batch', (v) => Number(v), 2048)
  .option('--batch-size <n>', 'max pairs per batch', (v) => Number(v), 16)
  .option('--pad <x>', "largest share of padding in a batch (default: the runner's CPU cap)", (v) => Number(v), 0.15)
  .option('--data-dir <dir>', 'data directory (default: resolveDataDir)');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ model: string; dtype: string; pairs: number; threads?: number; budget: number; batchSize: number; pad: number; dataDir?: string }>();

const dtypes = o.dtype.split(',').map((d) => parseDtype(d.trim()) as NliDtype);
const sample = spreadSample(sgdCandidatePairs(resolveDataDir(o.dataDir).dir).distinct, o.pairs);
const first = resolveModel(path.resolve(o.model), dtypes[0]);
const tok = PairTokenizer.fromFiles(first.tokenizerPath, first.tokenizerConfigPath, JSON.parse(readFileSync(first.configPath, 'utf8')));
const rows = sample.map((p) => tok.encodePair(p.premise, p.hypothesis).ids).sort((a, b) => a.length - b.length);

/** The batches the runner would form over the whole set: length-sorted, within its CPU limits. */
const batches = (): number[][][] =>
  planBatches(
    rows.map((r) => r.length),
    { maxBatchTokens: o.budget, maxBatchSize: o.batchSize, maxPadFraction: o.pad },
  ).map((b) => b.map((i) => rows[i]));

interface TraceEvent {
  cat?: string;
  name?: string;
  dur?: number;
  args?: { op_name?: string };
}

const totals = new Map<NliDtype, Map<string, number>>();
const wall = new Map<NliDtype, number>();
for (const dtype of dtypes) {
  const model = resolveModel(path.resolve(o.model), dtype);
  const prefix = path.join(os.tmpdir(), `todeval-profile-${process.pid}-${dtype}`);
  const session = await ort.InferenceSession.create(model.onnxPath, {
    graphOptimizationLevel: 'all',
    enableMemPattern: false,
    executionMode: 'sequential',
    ...(o.threads ? { intraOpNumThreads: o.threads, interOpNumThreads: 1 } : {}),
    enableProfiling: true,
    profileFilePrefix: prefix,
    logSeverityLevel: 3,
  });
  const t = performance.now();
  for (const b of batches()) await session.run(paddedFeeds(b, tok.padId));
  wall.set(dtype, (performance.now() - t) / 1000);
  // endProfiling writes the trace as <prefix>_<timestamp>.json (onnxruntime-node does not return the name).
  session.endProfiling();
  await session.release();
  const traces = readdirSync(path.dirname(prefix)).filter((f) => f.startsWith(`${path.basename(prefix)}_`) && f.endsWith('.json'));
  if (traces.length !== 1) throw new Error(`expected one ORT profile ${prefix}_*.json, found ${traces.length}`);
  const file = path.join(path.dirname(prefix), traces[0]);
  const events = JSON.parse(readFileSync(file, 'utf8')) as TraceEvent[];
  rmSync(file, { force: true });
  const byOp = new Map<string, number>();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name?.endsWith('_kernel_time') || !e.args?.op_name) continue;
    byOp.set(e.args.op_name, (byOp.get(e.args.op_name) ?? 0) + (e.dur ?? 0) / 1e6);
  }
  totals.set(dtype, byOp);
}

const ops = [...new Set([...totals.values()].flatMap((m) => [...m.keys()]))];
const sum = (d: NliDtype) => [...totals.get(d)!.values()].reduce((a, b) => a + b, 0);
ops.sort((a, b) => Math.max(...dtypes.map((d) => totals.get(d)!.get(b) ?? 0)) - Math.max(...dtypes.map((d) => totals.get(d)!.get(a) ?? 0)));
console.log(`${sample.length} pairs, ${batches().length} batches (<= ${o.batchSize} rows, ${o.budget} tokens, padding <= ${o.pad}), threads ${o.threads ?? 'default'}; kernel seconds and share per op type`);
console.log(`${'op'.padEnd(28)}${dtypes.map((d) => d.padStart(22)).join('')}`);
for (const op of ops) {
  const cells = dtypes.map((d) => {
    const s = totals.get(d)!.get(op);
    return s === undefined ? '-'.padStart(22) : `${s.toFixed(2)} s ${((100 * s) / sum(d)).toFixed(1).padStart(5)}%`.padStart(22);
  });
  console.log(`${op.padEnd(28)}${cells.join('')}`);
}
console.log(`${'all kernels'.padEnd(28)}${dtypes.map((d) => `${sum(d).toFixed(2)} s`.padStart(22)).join('')}`);
console.log(`${'wall (profiling on)'.padEnd(28)}${dtypes.map((d) => `${wall.get(d)!.toFixed(2)} s`.padStart(22)).join('')}`);
