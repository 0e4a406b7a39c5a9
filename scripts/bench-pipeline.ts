/**
 * The host side of scoring, measured with the model taken out: the whole SGD test scored as the
 * ground truth (which builds and stores the references), then a second system reusing them, through
 * `todeval score` as users run it, with two stand-in models that cost next to nothing:
 *   lexical  the lexical stand-in (token overlap, a few dozen cheap ops per batch);
 *   null     a graph returning constant neutral logits (every action also takes the context pass).
 * Each configuration (tokenizer threads: 0 = on the main thread, 1, 2, all cores) runs in its own
 * process with its own outputs; a probe preloaded into it (scripts/lib/pipeline-probe.mjs) reports
 * CPU time, peak RSS, GC pauses and the stage clock's time per stage (src/util/stage-clock.ts).
 *
 *   npm run bench:pipeline -- [--models lexical,null] [--tokenizer-threads 0,1,2,all]
 *       [--baseline DIR] [--ort-threads N] [--limit N] [--passes N] [--data-dir DIR] [--json FILE]
 *
 * --baseline DIR times another built checkout (e.g. main's code: `git archive main | tar -x -C DIR`,
 * link node_modules, `npm run build`) in the same run, interleaved with ours, so the ratio is taken
 * side by side under the same load. With --baseline-threads (a checkout whose CLI has
 * --tokenizer-threads) it runs at each of --tokenizer-threads' counts, each compared with ours at the
 * same count; without, once with its CLI's default, compared with each of ours. Every run's per-turn files, references and reports are compared
 * byte for byte with the first configuration's (baseline included): the host side must not change
 * a result. On a shared machine read CPU time per pair (and the load average printed with each
 * run) rather than wall time. Stand-in scores are not SGSAcc; the timings are what this measures.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import { resolveDataDir } from '../src/data/data-dir.js';
import { loadSgsaccData } from '../src/metrics/sgsacc/index.js';
import {
  buildLexicalStandin,
  buildNullStandin,
  LEXICAL_STANDIN_MANIFEST,
  LEXICAL_STANDIN_VERSION,
  NULL_STANDIN_MANIFEST,
  NULL_STANDIN_VERSION,
} from '../src/nli/onnx-builder/index.js';
import { buildValueIndex } from '../src/rules/value-index.js';
import type { Stage } from '../src/util/stage-clock.js';
import { REPO_ROOT } from './lib/large-model.js';
import { swapOneValuePerTurn } from './lib/value-swap.js';

const program = new Command('bench-pipeline')
  .option('--models <list>', 'stand-ins to run: lexical, null', 'lexical,null')
  .option('--tokenizer-threads <list>', 'tokenizer thread counts to run (all = the cores)', '0,1,2,all')
  .option('--baseline <dir>', 'a built checkout of other code to time side by side')
  .option('--baseline-threads', "run the baseline at each --tokenizer-threads count (its CLI must have the flag)")
  .option('--ort-threads <n>', 'intra-op threads of the session (default: the CLI default, all cores)', (v) => Number(v))
  .option('--limit <n>', 'only the first N system turns (default: all)', (v) => Number(v))
  .option('--passes <n>', 'runs of every configuration, order reversed every pass', (v) => Number(v), 1)
  .option('--data-dir <dir>', 'data directory (default: resolveDataDir)')
  .option('--json <file>', 'also write every figure as JSON');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ models: string; tokenizerThreads: string; baseline?: string; baselineThreads?: boolean; ortThreads?: number; limit?: number; passes: number; dataDir?: string; json?: string }>();

const cores = availableParallelism();
const dataDir = resolveDataDir(o.dataDir).dir;
const work = mkdtempSync(path.join(tmpdir(), 'todeval-bench-pipeline-'));
const PROBE = path.join(REPO_ROOT, 'scripts', 'lib', 'pipeline-probe.mjs');

/** A stand-in built once into .cache/models, keyed by its builder version. */
function standin(kind: 'lexical' | 'null'): string {
  const [manifest, version] = kind === 'lexical' ? [LEXICAL_STANDIN_MANIFEST, LEXICAL_STANDIN_VERSION] : [NULL_STANDIN_MANIFEST, NULL_STANDIN_VERSION];
  const dir = path.join(REPO_ROOT, '.cache', 'models', `${kind}-standin-v${version}`);
  if (existsSync(path.join(dir, manifest))) return dir;
  const tmp = `${dir}.tmp-${process.pid}`;
  if (kind === 'lexical') buildLexicalStandin({ outDir: tmp });
  else buildNullStandin({ outDir: tmp });
  mkdirSync(path.dirname(dir), { recursive: true });
  renameSync(tmp, dir);
  return dir;
}

interface Probe {
  sinceStartMs: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  mainThreadCpuMs: number | null;
  threads: number | null;
  maxRssKb: number;
  gcMs: number;
  gcCount: number;
  stages: Partial<Record<Stage, number>> | null;
}

interface RunFigures extends Probe {
  wallMs: number;
  issued: number;
  requested: number;
  batches: number;
  loadBefore: number;
  loadAfter: number;
}

interface Config {
  model: 'lexical' | 'null';
  /** Tokenizer threads; undefined for a baseline whose CLI has no such flag. */
  threads: number | undefined;
  baseline: boolean;
  label: string;
}

const models = o.models.split(',').map((m) => m.trim()) as ('lexical' | 'null')[];
for (const m of models) if (m !== 'lexical' && m !== 'null') throw new Error(`--models: unknown stand-in ${m}`);
const threadCounts = [...new Set(o.tokenizerThreads.split(',').map((t) => (t.trim() === 'all' ? cores : Number(t))))];
for (const t of threadCounts) if (!Number.isInteger(t) || t < 0 || t > cores) throw new Error(`--tokenizer-threads: ${t} is not 0..${cores} or all`);
const configs: Config[] = [];
for (const model of models) {
  const label = (threads: number) => (threads === 0 ? 'main thread' : `${threads} thread${threads > 1 ? 's' : ''}${threads === cores ? ' (all)' : ''}`);
  if (o.baseline && o.baselineThreads) for (const threads of threadCounts) configs.push({ model, threads, baseline: true, label: `baseline ${label(threads)}` });
  else if (o.baseline) configs.push({ model, threads: undefined, baseline: true, label: 'baseline' });
  for (const threads of threadCounts) configs.push({ model, threads, baseline: false, label: label(threads) });
}

// The second system: the ground truth with one slot value per turn swapped (scripts/lib/value-swap.ts).
const data = loadSgsaccData({ dataset: 'sgd', dataDir });
const turns = o.limit ? data.loaded.turns.slice(0, o.limit) : data.loaded.turns;
const { utterances, swaps } = swapOneValuePerTurn(data.expand(turns), buildValueIndex(data.loaded.turns));
const predictions = path.join(work, 'second-system.jsonl');
writeFileSync(predictions, [...utterances].map(([id, utterance]) => JSON.stringify({ id, utterance })).join('\n') + '\n');
const modelDirs = Object.fromEntries(models.map((m) => [m, standin(m)])) as Record<'lexical' | 'null', string>;

function cliOf(config: Config): string {
  const root = config.baseline ? path.resolve(o.baseline!) : REPO_ROOT;
  const cli = path.join(root, 'bin', 'todeval.js');
  if (!existsSync(path.join(root, 'dist', 'src', 'cli', 'main.js'))) throw new Error(`${root} is not built: run npm run build there`);
  return cli;
}

function score(config: Config, dir: string, second: boolean): RunFigures {
  const probeFile = path.join(dir, second ? 'probe-second.json' : 'probe-gold.json');
  const args = ['score', '--dataset', 'sgd', '--data-dir', dataDir, '--model', modelDirs[config.model], '--device', 'cpu', '--progress', 'none'];
  if (o.limit) args.push('--limit', String(o.limit));
  if (o.ortThreads) args.push('--threads', String(o.ortThreads));
  if (config.threads !== undefined) args.push('--tokenizer-threads', String(config.threads));
  // Relative names and one name per role, so every run's reports may be compared byte for byte.
  args.push('--references', 'references.jsonl');
  if (second) args.push('-i', predictions, '--system', 'second-system', '--turns', 'second.turns.jsonl', '-o', 'second.report.json');
  else args.push('--turns', 'gold.turns.jsonl', '-o', 'gold.report.json');
  const loadBefore = loadavg()[0];
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', PROBE, cliOf(config), ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, TODEVAL_PROBE_OUT: probeFile },
    maxBuffer: 64 * 2 ** 20,
  });
  const wallMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(`todeval ${args.join(' ')} (${config.label}) failed (${r.status}): ${r.stderr}`);
  const probe = JSON.parse(readFileSync(probeFile, 'utf8')) as Probe;
  const report = JSON.parse(readFileSync(path.join(dir, second ? 'second.report.json' : 'gold.report.json'), 'utf8')) as {
    nli: { issued: number; requested: number; batches: number };
  };
  return { ...probe, wallMs, ...report.nli, loadBefore, loadAfter: loadavg()[0] };
}

const OUTPUTS = ['references.jsonl', 'gold.turns.jsonl', 'gold.report.json', 'second.turns.jsonl', 'second.report.json'];

interface Result {
  config: Config;
  pass: number;
  dir: string;
  gold: RunFigures;
  second: RunFigures;
}

console.log(
  `SGD test${o.limit ? ` (first ${o.limit} turns)` : ''}: ${turns.length} system turns; second system: ${swaps} slot values swapped; ` +
    `${cores} cores; intra-op threads ${o.ortThreads ?? 'default (all)'}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`,
);
// The temp folder goes however the run ends.
let allSame = true;
try {
  const results: Result[] = [];
  for (let pass = 0; pass < o.passes; pass++) {
    const order = pass % 2 === 0 ? configs : [...configs].reverse();
    for (const config of order) {
      const dir = path.join(work, `${config.model}-${config.baseline ? 'baseline' : ''}${config.threads === undefined ? '' : `t${config.threads}`}-p${pass}`);
      mkdirSync(dir);
      const gold = score(config, dir, false);
      const second = score(config, dir, true);
      results.push({ config, pass, dir, gold, second });
      const f = (r: RunFigures) => `${(r.wallMs / 1000).toFixed(1)} s ${(r.issued / (r.wallMs / 1000)).toFixed(0).padStart(6)} pairs/s`;
      console.log(`  pass ${pass + 1} ${config.model.padEnd(7)} ${config.label.padEnd(16)} gold ${f(gold)}   second ${f(second)}   (load ${gold.loadBefore.toFixed(1)}-${second.loadAfter.toFixed(1)})`);
    }
  }

  /** The mean of a figure over a configuration's passes. */
  function mean(rs: Result[], pick: (r: Result) => number): number {
    return rs.reduce((s, r) => s + pick(r), 0) / rs.length;
  }

  const STAGES: Stage[] = ['startup', 'load', 'rules', 'pairs', 'tokenize', 'feeds', 'model', 'results', 'wait', 'decisions', 'write', 'other'];
  const summary: Record<string, unknown>[] = [];
  for (const model of models) {
    console.log(`\n${model} stand-in (${path.relative(REPO_ROOT, modelDirs[model])})`);
    console.log(
      `${'configuration'.padEnd(18)} ${'run'.padEnd(7)} ${'pairs'.padStart(7)} ${'batches'.padStart(7)} ${'wall s'.padStart(7)} ${'pairs/s'.padStart(8)} ` +
        `${'main CPU s'.padStart(10)} ${'main us/pair'.padStart(12)} ${'all CPU s'.padStart(9)} ${'GC s'.padStart(5)} ${'peak RSS MB'.padStart(11)}`,
    );
    for (const config of configs.filter((c) => c.model === model)) {
      const rs = results.filter((r) => r.config === config);
      for (const which of ['gold', 'second'] as const) {
        const issued = rs[0][which].issued;
        const wall = mean(rs, (r) => r[which].wallMs) / 1000;
        const cpu = mean(rs, (r) => r[which].cpuUserMs + r[which].cpuSystemMs) / 1000;
        const main = mean(rs, (r) => r[which].mainThreadCpuMs ?? Number.NaN) / 1000;
        const gc = mean(rs, (r) => r[which].gcMs) / 1000;
        const rss = Math.max(...rs.map((r) => r[which].maxRssKb)) / 1024;
        const row = {
          model,
          configuration: config.label,
          run: which,
          pairs: issued,
          batches: rs[0][which].batches,
          wallSeconds: wall,
          pairsPerSecond: issued / wall,
          mainThreadCpuSeconds: main,
          mainThreadCpuMicrosPerPair: (main * 1e6) / issued,
          cpuSeconds: cpu,
          gcSeconds: gc,
          peakRssMb: rss,
        };
        summary.push(row);
        console.log(
          `${config.label.padEnd(18)} ${which.padEnd(7)} ${String(issued).padStart(7)} ${String(row.batches).padStart(7)} ${wall.toFixed(2).padStart(7)} ${row.pairsPerSecond.toFixed(0).padStart(8)} ` +
            `${main.toFixed(2).padStart(10)} ${row.mainThreadCpuMicrosPerPair.toFixed(1).padStart(12)} ${cpu.toFixed(2).padStart(9)} ${gc.toFixed(2).padStart(5)} ${rss.toFixed(0).padStart(11)}`,
        );
      }
    }
    // Main-thread time per stage, ground-truth run (seconds; the stage clock of this build).
    const timed = configs.filter((c) => c.model === model && !c.baseline);
    if (timed.length > 0) {
      console.log(`main thread per stage, gold run (s): ${STAGES.join(' ')}`);
      for (const config of timed) {
        const rs = results.filter((r) => r.config === config);
        const cells = STAGES.map((s) => (mean(rs, (r) => r.gold.stages?.[s] ?? 0) / 1000).toFixed(2));
        console.log(`  ${config.label.padEnd(16)} ${cells.join(' ')}`);
      }
    }
    // Ours against the baseline, side by side: end-to-end pairs/s and CPU per pair.
    const bases = configs.filter((c) => c.model === model && c.baseline);
    for (const config of bases.length > 0 ? timed : []) {
      const base = bases.find((c) => c.threads === config.threads) ?? bases.find((c) => c.threads === undefined);
      if (!base) continue;
      const b = results.filter((r) => r.config === base);
      const rs = results.filter((r) => r.config === config);
      const ratio = (which: 'gold' | 'second') =>
        `${(mean(b, (r) => r[which].wallMs) / mean(rs, (r) => r[which].wallMs)).toFixed(2)}x pairs/s, ` +
        `${(mean(b, (r) => r[which].mainThreadCpuMs ?? Number.NaN) / mean(rs, (r) => r[which].mainThreadCpuMs ?? Number.NaN)).toFixed(2)}x less main-thread CPU, ` +
        `${(mean(b, (r) => r[which].cpuUserMs + r[which].cpuSystemMs) / mean(rs, (r) => r[which].cpuUserMs + r[which].cpuSystemMs)).toFixed(2)}x less CPU in all`;
      console.log(`  ${config.label.padEnd(16)} vs ${base.label}: gold ${ratio('gold')}; second ${ratio('second')}`);
    }
  }

  // Every run's outputs against the first configuration's of the same stand-in, byte for byte.
  for (const model of models) {
    const rs = results.filter((r) => r.config.model === model);
    for (const name of OUTPUTS) {
      const first = readFileSync(path.join(rs[0].dir, name));
      const differ = rs.filter((r) => !readFileSync(path.join(r.dir, name)).equals(first)).map((r) => `${r.config.label} (pass ${r.pass + 1})`);
      if (differ.length > 0) allSame = false;
      console.log(`${model} ${name}: ${differ.length === 0 ? `identical in all ${rs.length} runs` : `DIFFERS in ${differ.join(', ')}`}`);
    }
  }
  console.log(`load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  if (o.json) writeFileSync(o.json, JSON.stringify({ cores, loadavgEnd: loadavg(), summary, runs: results.map(({ dir: _d, ...r }) => r) }, null, 2) + '\n');
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (!allSame) process.exitCode = 1;
