/**
 * `npm run example`: the main job on the bundled examples/sgd-mini, through the real CLI and ONNX path:
 * SGSAcc of a hypothetical system and of the ground truth (sharing stored references), faithfulness
 * reranking of several systems' candidates, and SER. Each command is printed before it runs, so the
 * output doubles as a tour of the CLI.
 *
 *   npm run example [-- --out-dir DIR] [-- --tokenizer-dir DIR]   (exit 0 only when every step ran)
 *
 * The NLI model, first found wins:
 *   1. $TODEVAL_MODEL (hub id or directory);
 *   2. Xenova/roberta-large-mnli in the Hugging Face cache (`todeval models pull`), any dtype;
 *   3. the lexical stand-in (`npm run model:lexical`), built here from the roberta-large-mnli
 *      tokenizer shipped in models/ (or --tokenizer-dir): an ONNX graph that decides entailment by
 *      token overlap, so the whole pipeline runs and shows validated, excluded, rescued and unfaithful
 *      turns, but its scores are NOT SGSAcc.
 * Every step must run: one that fails, or whose output is missing at the end, stops the example with
 * a non-zero exit naming the step (a demo that silently did half its work looked like a success).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_MODEL_ID, NLI_DTYPES, pullCommand, resolveModel } from '../src/nli/model-store.js';
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

/** The file each step writes, checked at the end. */
const STEP_OUTPUTS: [string, string][] = [
  ['1. score', 'score.json'],
  ['2. score the ground truth', 'score-ground-truth.json'],
  ['3. rerank', 'rerank.json'],
  ['4. ser', 'ser.json'],
  ['5. report', 'report.html'],
];

// Keyed by the builder version, so a changed graph is rebuilt rather than reused.
const STANDIN_DIR = path.join('.cache', 'models', `${LEXICAL_STANDIN}-v${LEXICAL_STANDIN_VERSION}`);

type ModelChoice =
  | { kind: 'real'; args: string[]; describe: string }
  /** tokenizerDir: build the lexical stand-in from it; absent when $TODEVAL_MODEL already names a stand-in. */
  | { kind: 'standin'; standin: StandinKind; args: string[]; tokenizerDir?: string };

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

/** The step running now, named in the one line a failure prints. */
let step = 'setup';

/** Stops the example: one line naming the step that did not run, exit 1 (or the command's own code). */
function stepFailed(why: string, code = 1): never {
  process.stderr.write(`\nexample: step "${step}" did not run: ${why}; stopping.\n`);
  process.exit(code);
}

/** Prints `$ cmd` with one flag per line (readable, still copy-pastable), then runs it from the repo root. */
function run(display: string[], exec: string[] = display): void {
  const line = display.map((a, i) => (i > 2 && a.startsWith('--') && a !== '--' ? `\\\n    ${a}` : shellQuote(a))).join(' ');
  process.stdout.write(`\n$ ${line}\n`);
  const r = spawnSync(exec[0], exec.slice(1), { cwd: REPO, stdio: 'inherit' });
  if (r.error) stepFailed(`${exec[0]}: ${r.error.message}`);
  if (r.status !== 0) stepFailed(`the command above failed (exit ${r.status ?? r.signal})`, r.status || 1);
}

const todeval = (...args: string[]) => run(['node', CLI, ...args], [process.execPath, CLI, ...args]);

function banner(lines: string[]): void {
  const width = Math.max(...lines.map((l) => l.length)) + 4;
  const rule = '!'.repeat(width);
  process.stdout.write(`\n${rule}\n${lines.map((l) => `! ${l.padEnd(width - 4)} !`).join('\n')}\n${rule}\n`);
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
  // The tokenizer ships in models/roberta-large-mnli; a --tokenizer-dir without tokenizer.json is bad input.
  const tokenizerDir = resolveTokenizerDir(opts['tokenizer-dir']);
  return { kind: 'standin', standin: LEXICAL_STANDIN, args: ['--model', STANDIN_DIR], tokenizerDir };
}

/** Builds the lexical stand-in once (into a temp dir, renamed into place, so a crash leaves no half model). */
function ensureStandinModel(tokenizerDir: string): void {
  const dir = path.join(REPO, STANDIN_DIR);
  if (existsSync(path.join(dir, LEXICAL_STANDIN_MANIFEST))) {
    process.stdout.write(`\n(reusing the ${LEXICAL_STANDIN} model built earlier in ${STANDIN_DIR})\n`);
    return;
  }
  const tmp = `${STANDIN_DIR}.tmp-${process.pid}`;
  // The shipped tokenizer is the builder's default: the printed command names a directory only when given one.
  const args = opts['tokenizer-dir'] ? ['--tokenizer-dir', tokenizerDir] : [];
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

function main(): void {
  process.chdir(REPO);
  step = 'build';
  // Timed from the process start (performance.now()'s origin): the total printed at the end is what
  // `npm run example` cost, the build of a fresh clone and the stand-in model included.
  const buildStart = performance.now();
  if (!existsSync(path.join(REPO, 'dist', 'src', 'cli', 'main.js'))) {
    run(['npm', 'run', 'build'], [process.execPath, 'node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json']);
  }
  const buildMs = performance.now() - buildStart;
  let modelMs = 0;
  // Start clean: the stores below resume from earlier files, which is not what a demo should show.
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });

  step = 'model';
  const model = pickModel();
  const own = ['--dataset', 'sgd', '--dialogues', DIALOGUES, '--schema', SCHEMA];

  if (model.kind === 'standin') {
    standinNotice(model.standin);
    const modelStart = performance.now();
    if (model.tokenizerDir) ensureStandinModel(model.tokenizerDir);
    modelMs = performance.now() - modelStart;
  } else {
    process.stdout.write(`\nNLI model: ${model.describe}\n`);
  }

  step = '1. score';
  process.stdout.write('\n# 1. SGSAcc of a system (its outputs in predictions.jsonl); references are stored for reuse\n');
  todeval('score', ...own, '-i', PREDICTIONS, ...model.args,
    '-o', out('score.json'), '--turns', out('turns.jsonl'), '--references', out('references.jsonl'));
  step = '2. score the ground truth';
  process.stdout.write('\n# 2. SGSAcc of the ground truth, reusing the stored references\n');
  todeval('score', ...own, ...model.args,
    '-o', out('score-ground-truth.json'), '--turns', out('turns-ground-truth.jsonl'), '--references', out('references.jsonl'));
  step = '3. rerank';
  process.stdout.write('\n# 3. Rerank candidates of three systems by how many dialogue actions each realises\n');
  todeval('rerank', '--input', RERANK, '--dataset', 'sgd', '--dialogues', DIALOGUES, '--schema', SCHEMA, ...model.args,
    '--turns', out('rerank.jsonl'), '-o', out('rerank.json'));
  step = '4. ser';
  process.stdout.write('\n# 4. Slot error rate of the same system (string matching, no model)\n');
  todeval('ser', ...own, '-i', PREDICTIONS, '-o', out('ser.json'));

  step = '5. report';
  process.stdout.write('\n# 5. One self-contained HTML report of both runs: table, signatures, charts, failing turns\n');
  todeval('report', out('score.json'), out('score-ground-truth.json'),
    '--turns', out('turns.jsonl'), out('turns-ground-truth.jsonl'), '-o', out('report.html'));

  // Each step's output must be there: a command that exits 0 without writing it did not run its step.
  for (const [name, file] of STEP_OUTPUTS) {
    step = name;
    if (!existsSync(out(file))) stepFailed(`${path.join(outDir, file)} was not written`);
  }
  const files = readdirSync(outDir).sort().join(', ');
  const secs = (ms: number) => (ms / 1000).toFixed(1);
  process.stdout.write(`\nDone in ${secs(performance.now())} s (build ${secs(buildMs)} s and stand-in model ${secs(modelMs)} s included). Outputs in ${outDir}/: ${files}\n`);
  if (model.kind === 'standin') standinNotice(model.standin);
  process.stdout.write(`\nReport: ${path.resolve(out('report.html'))}  (open it in a browser; it works offline)\n`);
}

try {
  main();
} catch (e) {
  if (isInputError(e)) {
    process.stderr.write(`example: step "${step}": ${e.oneLine()}\n`);
    process.exit(2);
  }
  throw e;
}
