/**
 * `score --workers 1` against `--workers 2` on CPU, over the same SGD slice with the full-size
 * random roberta-large, side by side in one run; then the cost of the split and of the merge
 * against the run they belong to (the target: under 2%).
 *
 *   npm run bench:workers -- [--model DIR] [--turns 10] [--passes 2] [--data-dir DIR] [--json FILE]
 *
 * Each pass runs both, the order flipped every pass (1 2, 2 1, ...), so load from other work on a
 * shared machine falls on both sides; every run is printed, and the ratio of the sums.
 * Both runs go through the CLI as users run it (the built one when dist/ exists, else the
 * sources through tsx), each with its own fresh output files, no NLI cache and no stored
 * references, so each computes everything. The split is `shardPositions` on the slice; the merge
 * is `mergeRunShards` on the two shard reports of a `--shard 1/2` + `--shard 2/2` pair, joining
 * the per-turn and references files too (what `--workers` does after its children finish).
 * Random weights make the scores meaningless; the timings are what this measures.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import { loadDataset } from '../src/adapters/load.js';
import { resolveDataDir } from '../src/data/data-dir.js';
import { mergeRunShards } from '../src/shard/run-merge.js';
import { shardPositions } from '../src/shard/spec.js';
import { ensureLargeRandomModel, REPO_ROOT } from './lib/large-model.js';

const program = new Command('bench-workers')
  .option('--model <dir>', 'model directory', '.cache/models/large-random-roberta')
  .option('--turns <n>', 'system turns in the slice', (v) => Number(v), 10)
  .option('--passes <n>', 'runs of each, order flipped every pass', (v) => Number(v), 2)
  .option('--data-dir <dir>', 'data directory (default: resolveDataDir)')
  .option('--json <file>', 'also write the figures as JSON');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ model: string; turns: number; passes: number; dataDir?: string; json?: string }>();

const repoRoot = REPO_ROOT;
const modelDir = ensureLargeRandomModel(o.model);
const dataDir = resolveDataDir(o.dataDir).dir;
const input = path.join(dataDir, 'sgd', 'test', 'dialogues_017.json');
const built = existsSync(path.join(repoRoot, 'dist', 'src', 'cli', 'main.js'));
const cli = built ? [path.join(repoRoot, 'bin', 'todeval.js')] : ['--import', 'tsx', path.join(repoRoot, 'src', 'cli', 'main.ts')];
const dir = mkdtempSync(path.join(tmpdir(), 'todeval-bench-workers-'));
const base = ['score', '--dataset', 'sgd', '--dialogues', input, '--data-dir', dataDir, '--limit', String(o.turns), '--model', modelDir, '--device', 'cpu'];

function timed(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [...cli, ...args], { cwd: repoRoot, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`todeval ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return ms;
}

console.log(`slice: first ${o.turns} system turns of ${path.relative(repoRoot, input)}; model ${path.relative(repoRoot, modelDir)}; ${availableParallelism()} cores; CLI from ${built ? 'dist/' : 'src/ (tsx)'}`);
const f = (name: string) => path.join(dir, name);
const runs: Record<1 | 2, number[]> = { 1: [], 2: [] };
for (let pass = 0; pass < o.passes; pass++) {
  for (const w of (pass % 2 === 0 ? [1, 2] : [2, 1]) as (1 | 2)[]) {
    const ms = timed([...base, '--workers', String(w), '-o', f(`w${w}.json`), '--turns', f(`w${w}.p${pass}.turns.jsonl`)]);
    runs[w].push(ms);
    console.log(`pass ${pass + 1}  --workers ${w}: ${(ms / 1000).toFixed(1)} s`);
  }
}
const total = (w: 1 | 2) => runs[w].reduce((a, b) => a + b, 0);
const one = total(1) / o.passes;
const two = total(2) / o.passes;
console.log(`mean  --workers 1: ${(one / 1000).toFixed(1)} s   --workers 2: ${(two / 1000).toFixed(1)} s   (--workers 2 at ${(one / two).toFixed(2)}x the speed of --workers 1)`);
const strip = (file: string) => {
  const { nli: _n, ...r } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  return JSON.stringify(r);
};
const same = strip(f('w1.json')) === strip(f('w2.json'));
console.log(`reports equal (nli work counters aside): ${same}`);

// The split and the merge on their own, against the two-worker run they are part of.
const turns = loadDataset({ dataset: 'sgd', dataDir, input }).turns.slice(0, o.turns);
const reps = 200;
let t0 = performance.now();
for (let i = 0; i < reps; i++) for (const k of [1, 2]) shardPositions(turns, (t) => t.dialogueId, { index: k, count: 2 });
const splitMs = (performance.now() - t0) / reps;
for (const k of [1, 2]) timed([...base, '--shard', `${k}/2`, '-o', f(`s${k}.json`), '--turns', f(`s${k}.turns.jsonl`), '--references', f(`s${k}.refs.jsonl`)]);
t0 = performance.now();
mergeRunShards([f('s1.json'), f('s2.json')], { output: f('merged.json'), turns: f('merged.turns.jsonl'), references: f('merged.refs.jsonl') });
const mergeMs = performance.now() - t0;
const overhead = (splitMs + mergeMs) / two;
console.log(`split: ${splitMs.toFixed(3)} ms  merge (report + per-turn + references files): ${mergeMs.toFixed(1)} ms`);
console.log(`split + merge = ${(100 * overhead).toFixed(3)}% of the --workers 2 run (target < 2%): ${overhead < 0.02 ? 'met' : 'MISSED'}`);
console.log('Timings on a shared machine are noisy; both were measured in this one run, alternating.');
if (o.json) {
  writeFileSync(o.json, JSON.stringify({ turns: o.turns, passes: o.passes, runs, workers1Ms: one, workers2Ms: two, speedup: one / two, reportsEqual: same, splitMs, mergeMs, overheadFraction: overhead }, null, 2) + '\n');
}
