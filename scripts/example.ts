/**
 * `npm run example`: the main job on the bundled examples/sgd-mini, through the real CLI and ONNX path:
 * SGSAcc of a hypothetical system and of the ground truth (sharing stored references), faithfulness
 * reranking of several systems' candidates, and SER. Each command is printed before it runs, so the
 * output doubles as a tour of the CLI.
 *
 *   npm run example [-- --out-dir DIR] [-- --tokenizer-dir DIR]
 *
 * The NLI model, first found wins:
 *   1. $TODEVAL_MODEL (hub id or directory);
 *   2. Xenova/roberta-large-mnli in the Hugging Face cache (`todeval models pull`), any dtype;
 *   3. the lexical stand-in (`npm run model:lexical`), built here from the real tokenizer (hub cache,
 *      else ../shared/models/roberta-large-mnli): an ONNX graph that decides entailment by token
 *      overlap, so the whole pipeline runs and shows validated, excluded, rescued and unfaithful
 *      turns, but its scores are NOT SGSAcc;
 *   4. none: only what needs no model (refs --summary, ser), and a notice of what is missing. Exits 0,
 *      because the example did what it could without the network.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  DEFAULT_MODEL_ID,
  hubCacheDir,
  NLI_DTYPES,
  pullCommand,
  repoCacheFolder,
  resolveModel,
} from '../src/nli/model-store.js';
import {
  LEXICAL_STANDIN,
  LEXICAL_STANDIN_MANIFEST,
  LEXICAL_STANDIN_VERSION,
  resolveTokenizerDir,
  standinKind,
  type StandinKind,
} from '../src/nli/onnx-builder/index.js';
import { isInputError } from '../src/util/errors.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EXAMPLE = 'examples/sgd-mini';
const DIALOGUES = `${EXAMPLE}/dialogues.json`;
const SCHEMA = `${EXAMPLE}/schema.json`;
const PREDICTIONS = `${EXAMPLE}/predictions.jsonl`;
const RERANK = `${EXAMPLE}/rerank.jsonl`;
const CLI = 'bin/todeval.js';

// Keyed by the builder version, so a changed graph is rebuilt rather than reused.
const STANDIN_DIR = path.join('.cache', 'models', `${LEXICAL_STANDIN}-v${LEXICAL_STANDIN_VERSION}`);

type ModelChoice =
  | { kind: 'real'; args: string[]; describe: string }
  /** tokenizerDir: build the lexical stand-in from it; absent when $TODEVAL_MODEL already names a stand-in. */
  | { kind: 'standin'; standin: StandinKind; args: string[]; tokenizerDir?: string }
  | { kind: 'none'; looked: string[] };

const { values: opts } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    'out-dir': { type: 'string', default: path.join('out', 'example') },
    'tokenizer-dir': { type: 'string' },
  },
});
const outDir = opts['out-dir']!;
const out = (name: string) => path.join(outDir, name);

function shellQuote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

/** Prints `$ cmd` with one flag per line (readable, still copy-pastable), then runs it from the repo root. */
function run(display: string[], exec: string[] = display): void {
  const line = display.map((a, i) => (i > 2 && a.startsWith('--') && a !== '--' ? `\\\n    ${a}` : shellQuote(a))).join(' ');
  process.stdout.write(`\n$ ${line}\n`);
  const r = spawnSync(exec[0], exec.slice(1), { cwd: REPO, stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    process.stderr.write(`\nexample: the command above failed (exit ${r.status ?? r.signal}); stopping.\n`);
    process.exit(r.status ?? 1);
  }
}

const todeval = (...args: string[]) => run(['node', CLI, ...args], [process.execPath, CLI, ...args]);

function banner(lines: string[]): void {
  const width = Math.max(...lines.map((l) => l.length)) + 4;
  const rule = '!'.repeat(width);
  process.stdout.write(`\n${rule}\n${lines.map((l) => `! ${l.padEnd(width - 4)} !`).join('\n')}\n${rule}\n`);
}

/** tokenizer.json from a pulled (maybe partial) Xenova/roberta-large-mnli snapshot in the hub cache. */
function hubCacheTokenizerDir(): string | undefined {
  const snaps = path.join(repoCacheFolder(hubCacheDir(), DEFAULT_MODEL_ID), 'snapshots');
  if (!existsSync(snaps)) return undefined;
  const dir = readdirSync(snaps)
    .map((rev) => path.join(snaps, rev))
    .find((d) => existsSync(path.join(d, 'tokenizer.json')));
  return dir;
}

function pickModel(): ModelChoice {
  const env = process.env.TODEVAL_MODEL;
  if (env) {
    // The user asked for this model: a wrong value is their error to see, not a reason to fall back.
    const m = resolveModel(env);
    const standin = standinKind(m.dir);
    if (standin) return { kind: 'standin', standin, args: ['--model', env] };
    return { kind: 'real', args: ['--model', env], describe: `$TODEVAL_MODEL (${env})` };
  }
  for (const dtype of NLI_DTYPES) {
    try {
      const m = resolveModel(DEFAULT_MODEL_ID, dtype, { ...process.env, TODEVAL_MODEL: '' });
      return { kind: 'real', args: ['--model', DEFAULT_MODEL_ID, '--dtype', dtype], describe: `${DEFAULT_MODEL_ID} ${dtype} from ${m.dir}` };
    } catch (e) {
      if (!isInputError(e)) throw e;
    }
  }
  const looked = [`$TODEVAL_MODEL (unset)`, `${DEFAULT_MODEL_ID} in ${hubCacheDir()}`];
  const explicit = opts['tokenizer-dir'];
  const fromHub = explicit ? undefined : hubCacheTokenizerDir();
  const standin = (tokenizerDir: string): ModelChoice => ({ kind: 'standin', standin: LEXICAL_STANDIN, args: ['--model', STANDIN_DIR], tokenizerDir });
  if (fromHub) return standin(fromHub);
  try {
    return standin(resolveTokenizerDir(explicit));
  } catch (e) {
    if (!isInputError(e)) throw e;
    looked.push(`a tokenizer.json for the ${LEXICAL_STANDIN} model: ${e.message.replace(/^.*\(looked in ([^)]*)\).*$/, '$1')}`);
    return { kind: 'none', looked };
  }
}

/** Builds the lexical stand-in once (into a temp dir, renamed into place, so a crash leaves no half model). */
function ensureStandinModel(tokenizerDir: string): void {
  const dir = path.join(REPO, STANDIN_DIR);
  if (existsSync(path.join(dir, LEXICAL_STANDIN_MANIFEST))) {
    process.stdout.write(`\n(reusing the ${LEXICAL_STANDIN} model built earlier in ${STANDIN_DIR})\n`);
    return;
  }
  const tmp = `${STANDIN_DIR}.tmp-${process.pid}`;
  const args = ['--tokenizer-dir', tokenizerDir];
  mkdirSync(path.dirname(dir), { recursive: true });
  try {
    run(
      ['npm', 'run', 'model:lexical', '--', ...args, '--out', STANDIN_DIR],
      [process.execPath, '--import', 'tsx', 'scripts/build-lexical-standin.ts', ...args, '--out', tmp],
    );
    try {
      renameSync(path.join(REPO, tmp), dir);
    } catch (e) {
      if (!existsSync(path.join(dir, LEXICAL_STANDIN_MANIFEST))) throw e; // else a parallel run won the race
    }
  } finally {
    rmSync(path.join(REPO, tmp), { recursive: true, force: true });
  }
}

function standinNotice(kind: StandinKind): void {
  const what =
    kind === 'random'
      ? ['NOTICE: this example uses a stand-in RoBERTa with RANDOM weights (from $TODEVAL_MODEL).',
         'It runs the whole ONNX pipeline, but its SGSAcc and rerank numbers are MEANINGLESS.']
      : [`NOTICE: no real NLI model was found, so this example uses the ${LEXICAL_STANDIN} model:`,
         'an ONNX graph that decides "entailment" by TOKEN OVERLAP. It is NOT a language model.',
         'It runs the whole ONNX pipeline, but its numbers are NOT SGSAcc and mean nothing about a system.'];
  banner([
    ...what,
    'For real scores, download roberta-large-mnli (ONNX) into the Hugging Face cache:',
    `    node ${CLI} ${pullCommand('fp32').replace(/^todeval /, '')}    (about 1.4 GB; --dtype q8 is about 360 MB)`,
    'or point TODEVAL_MODEL at a model directory, then run `npm run example` again.',
  ]);
}

function noModelNotice(looked: string[]): void {
  banner([
    'NOT RUN: SGSAcc scoring and reranking need an NLI model, and none was found. Looked for:',
    ...looked.map((l) => `  - ${l}`),
    'Get the model (about 1.4 GB; --dtype q8 is about 360 MB), then run `npm run example` again:',
    `    node ${CLI} ${pullCommand('fp32').replace(/^todeval /, '')}`,
    `or, without the network, pass a roberta-large-mnli tokenizer to build the ${LEXICAL_STANDIN} model:`,
    '    npm run example -- --tokenizer-dir DIR    (DIR holds tokenizer.json)',
  ]);
}

function main(): void {
  process.chdir(REPO);
  if (!existsSync(path.join(REPO, 'dist', 'src', 'cli', 'main.js'))) {
    run(['npm', 'run', 'build'], [process.execPath, 'node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json']);
  }
  const started = performance.now();
  // Start clean: the stores below resume from earlier files, which is not what a demo should show.
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });

  const model = pickModel();
  const own = ['--dataset', 'sgd', '--dialogues', DIALOGUES, '--schema', SCHEMA];

  if (model.kind === 'none') {
    noModelNotice(model.looked);
    process.stdout.write('\nRunning what needs no model: the references SGSAcc would check, and the slot error rate.\n');
    todeval('refs', ...own, '--summary');
    todeval('ser', ...own, '-i', PREDICTIONS, '-o', out('ser.json'));
    noModelNotice(model.looked);
    return;
  }
  if (model.kind === 'standin') {
    standinNotice(model.standin);
    if (model.tokenizerDir) ensureStandinModel(model.tokenizerDir);
  } else {
    process.stdout.write(`\nNLI model: ${model.describe}\n`);
  }

  process.stdout.write('\n# 1. SGSAcc of a system (its outputs in predictions.jsonl); references are stored for reuse\n');
  todeval('score', ...own, '-i', PREDICTIONS, ...model.args,
    '-o', out('score.json'), '--turns', out('turns.jsonl'), '--references', out('references.jsonl'));
  process.stdout.write('\n# 2. SGSAcc of the ground truth, reusing the stored references\n');
  todeval('score', ...own, ...model.args,
    '-o', out('score-ground-truth.json'), '--turns', out('turns-ground-truth.jsonl'), '--references', out('references.jsonl'));
  process.stdout.write('\n# 3. Rerank candidates of three systems by how many dialogue actions each realises\n');
  todeval('rerank', '--input', RERANK, '--dataset', 'sgd', '--dialogues', DIALOGUES, '--schema', SCHEMA, ...model.args,
    '--turns', out('rerank.jsonl'), '-o', out('rerank.json'));
  process.stdout.write('\n# 4. Slot error rate of the same system (string matching, no model)\n');
  todeval('ser', ...own, '-i', PREDICTIONS, '-o', out('ser.json'));

  process.stdout.write('\n# 5. One self-contained HTML report of both runs: table, signatures, charts, failing turns\n');
  todeval('report', out('score.json'), out('score-ground-truth.json'),
    '--turns', out('turns.jsonl'), out('turns-ground-truth.jsonl'), '-o', out('report.html'));

  const files = readdirSync(outDir).sort().join(', ');
  process.stdout.write(`\nDone in ${((performance.now() - started) / 1000).toFixed(1)} s. Outputs in ${outDir}/: ${files}\n`);
  if (model.kind === 'standin') standinNotice(model.standin);
  process.stdout.write(`\nReport: ${path.resolve(out('report.html'))}  (open it in a browser; it works offline)\n`);
}

try {
  main();
} catch (e) {
  if (isInputError(e)) {
    process.stderr.write(`example: ${e.oneLine()}\n`);
    process.exit(2);
  }
  throw e;
}
