/**
 * The figure a CPU user asks for: `todeval score` as they run it, over the first 10,000 system turns
 * of the SGD test set (the ground truth, which builds the references), with int8 (`--dtype q8`) on 2
 * cores, and where its wall time goes, phase by phase.
 *
 *   npm run bench:sgd-scale -- [--turns 10000] [--model DIR] [--dtype q8] [--threads 2] [--cores 2]
 *     [--data-dir DIR] [--json FILE]
 *
 * The model defaults to the full-size random roberta-large (.cache/models/large-random-roberta, the
 * dtype's file built when absent): random weights cost exactly what real ones cost, so the times
 * hold for the real model while the scores mean nothing. The run is one `todeval score` process with
 * scripts/lib/pipeline-probe.mjs preloaded, which reports the stage clock of the code under test
 * (src/util/stage-clock.ts: main-thread time charged to the stage it was in). Phases:
 *   startup     process start to the first stage (module loading; tsx compiling if dist/ is not built)
 *   load        reading the dataset, the schema, the model session
 *   rules       rules and references: expanding each turn into candidate references, pairing them
 *   tokenize    tokenizing and building the batches' tensors
 *   NLI         the model: waiting for the session thread and reading its results
 *   decisions   turning probabilities into verdicts, and anything else
 *   write       per-turn records, the references file and the report
 * With --cores N (default 2) and more cores on the machine, the process is pinned to the first N
 * with taskset, so "2 cores" means two whatever the machine.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { resolveDataDir } from '../src/data/data-dir.js';
import { onnxFileName, RANDOM_MODEL_MANIFEST, buildRandomRoberta, type RandomModelManifest } from '../src/nli/onnx-builder/index.js';
import { parseDtype, type NliDtype } from '../src/nli/model-store.js';
import type { Stage } from '../src/util/stage-clock.js';
import { ensureLargeRandomModel, REPO_ROOT } from './lib/large-model.js';

const program = new Command('bench-sgd-scale')
  .option('--turns <n>', 'system turns of the SGD test set, from the first', (v) => Number(v), 10_000)
  .option('--model <dir>', 'model directory', '.cache/models/large-random-roberta')
  .option('--dtype <dtype>', 'fp32, q8 or q8-tensor', 'q8')
  .option('--threads <n>', 'intra-op threads', (v) => Number(v), 2)
  .option('--cores <n>', 'pin the run to this many cores with taskset (0: no pinning)', (v) => Number(v), 2)
  .option('--data-dir <dir>', 'data directory (default: resolveDataDir)')
  .option('--json <file>', 'also write the figures as JSON');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ turns: number; model: string; dtype: string; threads: number; cores: number; dataDir?: string; json?: string }>();
const dtype = parseDtype(o.dtype) as NliDtype;

const modelDir = ensureLargeRandomModel(o.model);
if (!existsSync(path.join(modelDir, onnxFileName(dtype)))) {
  const have = JSON.parse(readFileSync(path.join(modelDir, RANDOM_MODEL_MANIFEST), 'utf8')) as RandomModelManifest;
  console.log(`building the random roberta (${have.size}, ${dtype}) into ${modelDir} ...`);
  buildRandomRoberta({ outDir: modelDir, size: have.size, seed: have.seed, std: have.std, dtype });
}
const dataDir = resolveDataDir(o.dataDir).dir;
const config = JSON.parse(readFileSync(path.join(modelDir, 'config.json'), 'utf8')) as { num_hidden_layers: number; hidden_size: number; todeval_standin?: string };
// A stand-in (null or lexical) keeps roberta-large's config numbers but has no such layers: say what
// ran, so a stand-in's few seconds of "NLI" are never read as the model's.
const modelWords = config.todeval_standin
  ? `stand-in model ${config.todeval_standin} (not a language model: its NLI phase is not the model's)`
  : `random-weight model ${config.num_hidden_layers} layers x ${config.hidden_size}`;
const built = existsSync(path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'));
let commit = 'unknown';
try {
  commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
} catch {
  // not a checkout
}

const pin = o.cores > 0 && os.availableParallelism() > o.cores && spawnSync('taskset', ['--version']).status === 0;
const work = mkdtempSync(path.join(os.tmpdir(), 'todeval-sgd-scale-'));
const probeFile = path.join(work, 'probe.json');
const args = ['score', '--dataset', 'sgd', '--data-dir', dataDir, '--limit', String(o.turns), '--model', modelDir, '--dtype', dtype, '--threads', String(o.threads), '--device', 'cpu'];
args.push('--progress', 'lines', '--references', 'references.jsonl', '--turns', 'gold.turns.jsonl', '-o', 'gold.report.json');
const node = [process.execPath, '--import', path.join(REPO_ROOT, 'scripts', 'lib', 'pipeline-probe.mjs'), path.join(REPO_ROOT, 'bin', 'todeval.js'), ...args];
const command = pin ? ['taskset', '-c', `0-${o.cores - 1}`, ...node] : node;

const loadStart = os.loadavg();
console.log(
  `todeval score over the first ${o.turns} SGD test system turns, ${dtype}, ${o.threads} intra-op threads${pin ? `, pinned to ${o.cores} cores` : ''}; ` +
    `model ${modelDir} (${modelWords}); ${os.cpus()[0]?.model} x ${os.cpus().length}; ` +
    `${built ? 'built CLI (dist/)' : 'CLI through tsx (not built: startup includes compiling)'}; load average ${loadStart.map((l) => l.toFixed(2)).join(' ')}`,
);
/**
 * The score run, its progress lines (one a minute) passed on to our stderr as they come: the full run
 * takes hours, and a silent one cannot be told from a stuck one. Asynchronous, so that Ctrl-C or a
 * SIGTERM stops the child too and the finally below removes the work folder.
 */
function runScore(command: string[], cwd: string, probeOut: string): Promise<{ status: number | null; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { cwd, env: { ...process.env, TODEVAL_PROBE_OUT: probeOut, TODEVAL_PROGRESS_SECONDS: '60' }, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.pipe(process.stderr);
    const stop = (signal: NodeJS.Signals) => () => {
      child.kill(signal);
      process.exitCode = 130;
    };
    const onInt = stop('SIGINT');
    const onTerm = stop('SIGTERM');
    process.on('SIGINT', onInt).on('SIGTERM', onTerm);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      process.off('SIGINT', onInt).off('SIGTERM', onTerm);
      resolve({ status, signal });
    });
  });
}

let result: Record<string, unknown> | undefined;
try {
  const t0 = performance.now();
  const r = await runScore(command, work, probeFile);
  const wall = (performance.now() - t0) / 1000;
  const loadEnd = os.loadavg();
  if (r.status !== 0) {
    // Its stderr has been passed on as it came.
    console.error(process.exitCode === 130 ? 'bench:sgd-scale: stopped by a signal; no figures, the work folder is removed' : `bench:sgd-scale: todeval score failed (exit ${r.status ?? r.signal})`);
    process.exitCode ||= 1;
  } else {
    const probe = JSON.parse(readFileSync(probeFile, 'utf8')) as { stages: Partial<Record<Stage, number>> | null; cpuUserMs: number; cpuSystemMs: number; maxRssKb: number };
    if (!probe.stages) throw new Error('the CLI reported no stage clock');
    const report = JSON.parse(readFileSync(path.join(work, 'gold.report.json'), 'utf8')) as { nli?: { issued: number; requested: number; batches: number } };
    const s = (names: Stage[]) => names.reduce((a, n) => a + (probe.stages![n] ?? 0), 0) / 1000;
    const phases: [string, number][] = [
      ['startup (modules)', s(['startup'])],
      ['load (dataset, schema, model session)', s(['load'])],
      ['rules and references (expansion, pairing)', s(['rules', 'pairs'])],
      ['tokenize (and tensors)', s(['tokenize', 'feeds'])],
      ['NLI (the model)', s(['model', 'wait', 'results'])],
      ['decisions and other', s(['decisions', 'other'])],
      ['write (turns, references, report)', s(['write'])],
    ];
    const staged = phases.reduce((a, [, v]) => a + v, 0);
    const nli = report.nli;
    console.log(`wall ${wall.toFixed(1)} s (stage clock ${staged.toFixed(1)} s; the rest is process exit), CPU ${((probe.cpuUserMs + probe.cpuSystemMs) / 1000).toFixed(1)} s, peak RSS ${(probe.maxRssKb / 1024).toFixed(0)} MiB`);
    if (nli) console.log(`NLI pairs: ${nli.requested} requested, ${nli.issued} computed, ${nli.batches} batches; ${(nli.issued / s(['model', 'wait', 'results'])).toFixed(2)} pairs/s in the NLI phase, ${(nli.issued / wall).toFixed(2)} end to end`);
    console.log(`load average at the start ${loadStart.map((l) => l.toFixed(2)).join(' ')}, at the end ${loadEnd.map((l) => l.toFixed(2)).join(' ')}`);

    const md = [
      `\nMarkdown for docs/nli.md:\n`,
      `${new Date().toISOString().slice(0, 10)}, todeval ${commit}, \`npm run bench:sgd-scale -- ${process.argv.slice(2).filter((a) => a !== '--').join(' ')}\`: ` +
        `\`todeval score\` over the first ${o.turns} SGD test system turns (ground truth, references built), ${dtype}, ${o.threads} threads${pin ? ` pinned to ${o.cores} cores` : ''}, ` +
        `${modelWords}; ${os.cpus()[0]?.model} x ${os.cpus().length}; load average ${loadStart[0].toFixed(1)} at the start, ${loadEnd[0].toFixed(1)} at the end.` +
        (nli ? ` ${nli.issued} NLI pairs computed (${nli.requested} requested), ${nli.batches} batches.` : '') +
        `\n`,
      `| phase | wall s | share |`,
      `|---|---|---|`,
      ...phases.map(([name, sec]) => `| ${name} | ${sec.toFixed(1)} | ${((100 * sec) / wall).toFixed(1)}% |`),
      `| **total (wall)** | **${wall.toFixed(1)}** | 100% |`,
    ];
    console.log(md.join('\n'));
    result = { turns: o.turns, dtype, threads: o.threads, pinnedCores: pin ? o.cores : null, commit, wallSeconds: wall, phases: Object.fromEntries(phases), stages: probe.stages, nli, loadAverage: { start: loadStart, end: loadEnd } };
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (o.json && result) writeFileSync(o.json, JSON.stringify(result, null, 2) + '\n');
