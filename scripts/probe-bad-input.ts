/**
 * probe:bad-input — many bad inputs across the commands, each run as a user runs it (a process of
 * its own, in a fresh folder), and each outcome classified:
 *
 *   clean error   non-zero exit, one line on stderr (plus commander's "(run with --help for usage)")
 *   stack trace   stderr shows a JavaScript stack ("    at f (file:1:2)") or a raw `Error:` line
 *   wrong exit 0  the command accepted the bad input
 *   hang          still running after the time limit (killed)
 *   data lost     a file of the folder (an input, an existing output, a FIFO, a device) changed
 *   unclear       a non-zero exit without one clear line (no message, or many lines)
 *
 *   npm run probe:bad-input [-- --only <substring>] [--timeout-ms N] [--cli dist]
 *
 * Prints one line per case and the tally table. test/bad-input-probe.test.ts runs a small subset.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EXAMPLE = path.join(REPO, 'examples', 'sgd-mini');

/** The files every case's folder starts with, by name: what the probe checks afterwards. */
export interface ProbeFolder {
  dir: string;
  /** Valid SGD dialogues, schema and predictions (the bundled example). */
  dialogues: string;
  schema: string;
  preds: string;
  /** An existing file given as an output: it must be unchanged when the command refuses. */
  keep: string;
  /** A FIFO, a folder, and a character device (null where mknod is not allowed). */
  fifo: string;
  folder: string;
  dev: string | null;
  /** A model directory that loads (the lexical stand-in, when built), else a path that does not exist. */
  model: string;
  /** Any file path not there yet. */
  fresh: (name: string) => string;
  /** Writes `text` into a new file of the folder and returns its path. */
  file: (name: string, text: string) => string;
}

export interface ProbeCase {
  name: string;
  args: (f: ProbeFolder) => string[] | null;
  env?: Record<string, string>;
}

export type Outcome = 'clean error' | 'stack trace' | 'wrong exit 0' | 'hang' | 'data lost' | 'unclear';
export const OUTCOMES: Outcome[] = ['clean error', 'stack trace', 'wrong exit 0', 'hang', 'data lost', 'unclear'];

const score = (f: ProbeFolder, ...more: string[]) => ['score', '--dataset', 'sgd', '--dialogues', f.dialogues, '--schema', f.schema, '--model', f.model, '--device', 'cpu', '--progress', 'none', ...more];
const ser = (f: ProbeFolder, ...more: string[]) => ['ser', '--dataset', 'sgd', '--dialogues', f.dialogues, '--schema', f.schema, ...more];
const refs = (f: ProbeFolder, ...more: string[]) => ['refs', '--dataset', 'sgd', '--dialogues', f.dialogues, '--schema', f.schema, ...more];
const rerankInput = '{"id":"mini_001/1","candidates":["Sure."]}\n';

/** The full set. Each case is one bad input; `null` from args skips a case this machine cannot make (no mknod). */
export const PROBE_CASES: ProbeCase[] = [
  // usage
  { name: 'unknown command', args: () => ['frobnicate'] },
  { name: 'unknown flag', args: () => ['score', '--frobnicate'] },
  { name: 'missing flag value', args: () => ['score', '--limit'] },
  // score: inputs
  { name: 'score -i missing file', args: (f) => score(f, '-i', f.fresh('none.jsonl')) },
  { name: 'score -i folder', args: (f) => score(f, '-i', f.folder) },
  { name: 'score -i empty file', args: (f) => score(f, '-i', f.file('empty.jsonl', '')) },
  { name: 'score -i invalid JSON', args: (f) => score(f, '-i', f.file('bad.jsonl', '{"id": "mini_001/1", "utt\n')) },
  { name: 'score -i record without utterance', args: (f) => score(f, '-i', f.file('nou.jsonl', '{"id": "mini_001/1"}\n')) },
  { name: 'score -i utterance not a string', args: (f) => score(f, '-i', f.file('num.jsonl', '{"id": "mini_001/1", "utterance": 5}\n')) },
  { name: 'score -i ids match no turn', args: (f) => score(f, '-i', f.file('ids.jsonl', '{"id": "nope/1", "utterance": "hi"}\n')) },
  { name: 'score -i binary file', args: (f) => score(f, '-i', f.file('bin.jsonl', '\u0000\u0001\u0002\u00ff')) },
  { name: 'score --dialogues missing', args: (f) => ['score', '--dataset', 'sgd', '--dialogues', f.fresh('d.json'), '--schema', f.schema, '--model', f.model] },
  { name: 'score --dialogues not JSON', args: (f) => ['score', '--dataset', 'sgd', '--dialogues', f.file('d.json', 'not json'), '--schema', f.schema, '--model', f.model] },
  { name: 'score --dialogues wrong shape', args: (f) => ['score', '--dataset', 'sgd', '--dialogues', f.file('d.json', '{"a": 1}'), '--schema', f.schema, '--model', f.model] },
  { name: 'score --schema not JSON', args: (f) => ['score', '--dataset', 'sgd', '--dialogues', f.dialogues, '--schema', f.file('s.json', '[1,'), '--model', f.model] },
  { name: 'score --model missing dir', args: (f) => score(f, '--model', f.fresh('no-model')).concat(['-i', f.preds]) },
  // score: flags
  { name: 'score --limit -1', args: (f) => score(f, '--limit', '-1') },
  { name: 'score --limit abc', args: (f) => score(f, '--limit', 'abc') },
  { name: 'score --chunk 0', args: (f) => score(f, '--chunk', '0') },
  { name: 'score --threads 0', args: (f) => score(f, '--threads', '0') },
  { name: 'score --device tpu', args: (f) => score(f, '--device', 'tpu') },
  { name: 'score --dtype fp8', args: (f) => score(f, '--dtype', 'fp8') },
  { name: 'score --split nope', args: (f) => score(f, '--split', 'nope') },
  { name: 'score --dataset nope', args: () => ['score', '--dataset', 'nope'] },
  { name: 'score --shard 3/2', args: (f) => score(f, '--shard', '3/2', '-o', f.fresh('r.json')) },
  { name: 'score --shard x', args: (f) => score(f, '--shard', 'x') },
  { name: 'score --granularity word', args: (f) => score(f, '--granularity', 'word') },
  { name: 'score --seed -3', args: (f) => score(f, '--confidence', '--seed', '-3') },
  // score: outputs
  { name: 'score -o into a missing folder', args: (f) => score(f, '-i', f.preds, '-o', path.join(f.dir, 'no', 'r.json')) },
  { name: 'score -o a folder', args: (f) => score(f, '-i', f.preds, '-o', f.folder) },
  { name: 'score -o a FIFO', args: (f) => score(f, '-i', f.preds, '-o', f.fifo) },
  { name: 'score -o a character device', args: (f) => (f.dev ? score(f, '-i', f.preds, '-o', f.dev) : null) },
  { name: 'score --turns a FIFO', args: (f) => score(f, '-i', f.preds, '--turns', f.fifo) },
  { name: 'score --turns the input', args: (f) => score(f, '-i', f.preds, '--turns', f.preds) },
  { name: 'score -o the dialogues', args: (f) => score(f, '-i', f.preds, '-o', f.dialogues) },
  { name: 'score --turns not a turns file', args: (f) => score(f, '-i', f.preds, '--turns', f.keep) },
  { name: 'score --references not a references file', args: (f) => score(f, '-i', f.preds, '--references', f.keep) },
  { name: 'score --cache not a cache', args: (f) => score(f, '-i', f.preds, '--cache', f.keep) },
  { name: 'score --workers without -o', args: (f) => score(f, '-i', f.preds, '--workers', '2') },
  // ser, refs
  { name: 'ser -i missing', args: (f) => ser(f, '-i', f.fresh('p.jsonl')) },
  { name: 'ser -o a FIFO', args: (f) => ser(f, '-i', f.preds, '-o', f.fifo) },
  { name: 'ser --canonical-map not JSON', args: (f) => ser(f, '-i', f.preds, '--robust', '--canonical-map', f.file('m.json', '{')) },
  { name: 'refs -o a folder', args: (f) => refs(f, '-o', f.folder) },
  { name: 'refs -o a character device', args: (f) => (f.dev ? refs(f, '-o', f.dev) : null) },
  { name: 'refs --limit 0', args: (f) => refs(f, '--limit', '0') },
  // evaluate
  { name: 'evaluate -i missing', args: (f) => ['evaluate', '-i', f.fresh('p.json')] },
  { name: 'evaluate -i not JSON', args: (f) => ['evaluate', '-i', f.file('p.json', '{{')] },
  { name: 'evaluate -i wrong shape', args: (f) => ['evaluate', '-i', f.file('p.json', '[1, 2]')] },
  { name: 'evaluate -o a FIFO', args: (f) => ['evaluate', '-i', f.file('p.json', '{}'), '-o', f.fifo] },
  { name: 'evaluate --confidence-n 0', args: (f) => ['evaluate', '-i', f.file('p.json', '{}'), '--confidence', '--confidence-n', '0'] },
  { name: 'evaluate --items a folder', args: (f) => ['evaluate', '-i', f.file('p.json', '{}'), '--items', f.folder] },
  // bleu
  { name: 'bleu reference missing', args: (f) => ['bleu', f.fresh('ref.txt'), '-i', f.file('hyp.txt', 'a\n')] },
  { name: 'bleu line counts differ', args: (f) => ['bleu', f.file('ref.txt', 'a\nb\n'), '-i', f.file('hyp.txt', 'a\n')] },
  { name: 'bleu -m nope', args: (f) => ['bleu', f.file('ref.txt', 'a\n'), '-i', f.file('hyp.txt', 'a\n'), '-m', 'nope'] },
  { name: 'bleu --tokenize nope', args: (f) => ['bleu', f.file('ref.txt', 'a\n'), '-i', f.file('hyp.txt', 'a\n'), '--tokenize', 'nope'] },
  { name: 'bleu -i a folder', args: (f) => ['bleu', f.file('ref.txt', 'a\n'), '-i', f.folder] },
  // compare, report, merge
  { name: 'compare one run', args: (f) => ['compare', f.preds] },
  { name: 'compare missing file', args: (f) => ['compare', f.fresh('a.jsonl'), f.fresh('b.jsonl')] },
  { name: 'compare not runs', args: (f) => ['compare', f.keep, f.keep] },
  { name: 'report missing run', args: (f) => ['report', f.fresh('run.json'), '-o', f.fresh('r.html')] },
  { name: 'report not a run', args: (f) => ['report', f.keep, '-o', f.fresh('r.html')] },
  { name: 'report corrupt run ("sgsacc": "oops")', args: (f) => ['report', f.file('run.json', JSON.stringify({ signature: { tool: 'todeval', metric: 'sgsacc' }, dataset: { turns: 1 }, counts: {}, sgsacc: 'oops' })), '-o', f.fresh('r.html')] },
  { name: 'report -o a folder', args: (f) => ['report', f.keep, '-o', f.folder] },
  { name: 'report --turns not a turns file', args: (f) => ['report', f.keep, '--turns', f.preds, '-o', f.fresh('r.html')] },
  { name: 'merge not a shard report', args: (f) => ['merge', f.keep, '-o', f.fresh('m.json')] },
  { name: 'merge missing shard', args: (f) => ['merge', f.fresh('s1.json'), '-o', f.fresh('m.json')] },
  { name: 'merge -o a FIFO', args: (f) => ['merge', f.keep, '-o', f.fifo] },
  // rerank, gcdf1, nli, models, data, serve, doctor
  { name: 'rerank --input missing', args: (f) => ['rerank', '--dataset', 'sgd', '--dialogues', f.dialogues, '--schema', f.schema, '--input', f.fresh('i.jsonl')] },
  { name: 'rerank --input not JSON', args: (f) => ['rerank', '--dataset', 'sgd', '--dialogues', f.dialogues, '--schema', f.schema, '--input', f.file('i.jsonl', '{x')] },
  { name: 'rerank -o a FIFO', args: (f) => ['rerank', '--dataset', 'sgd', '--dialogues', f.dialogues, '--schema', f.schema, '--input', f.file('i.jsonl', rerankInput), '-o', f.fifo] },
  { name: 'gcdf1 -d missing', args: (f) => ['gcdf1', '-d', f.fresh('convs')] },
  { name: 'gcdf1 -c not YAML', args: (f) => ['gcdf1', '-d', f.folder, '-c', f.file('c.yaml', 'a: [')] },
  { name: 'nli --model missing', args: (f) => ['nli', 'a', 'b', '--model', f.fresh('m')] },
  { name: 'nli --batch-size 0', args: () => ['nli', 'a', 'b', '--batch-size', '0'] },
  { name: 'models quantize -o a FIFO', args: (f) => ['models', 'quantize', '--model', f.model, '-o', f.fifo] },
  { name: 'models quantize -o a folder', args: (f) => ['models', 'quantize', '--model', f.model, '-o', f.folder] },
  { name: 'models quantize -o a device', args: (f) => (f.dev ? ['models', 'quantize', '--model', f.model, '-o', f.dev] : null) },
  { name: 'models quantize --model missing', args: (f) => ['models', 'quantize', '--model', f.fresh('m')] },
  { name: 'data pull --only nope', args: (f) => ['data', 'pull', '--only', 'nope', '--data-dir', f.fresh('data')] },
  { name: 'serve --port 99999', args: () => ['serve', '--port', '99999'] },
  { name: 'serve --host off loopback without token', args: () => ['serve', '--host', '0.0.0.0', '--port', '0'] },
  { name: 'doctor --device tpu', args: () => ['doctor', '--device', 'tpu'] },
];

function fingerprint(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = lstatSync(p);
    const kind = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isFIFO() ? 'fifo' : st.isCharacterDevice() ? 'chardev' : st.isSymbolicLink() ? 'link' : 'other';
    out.set(name, kind === 'file' ? `file:${createHash('sha256').update(readFileSync(p)).digest('hex')}` : kind);
  }
  return out;
}

function makeFolder(model: string): ProbeFolder {
  const dir = mkdtempSync(path.join(tmpdir(), 'todeval-probe-'));
  const copy = (name: string) => {
    const to = path.join(dir, name);
    copyFileSync(path.join(EXAMPLE, name), to);
    return to;
  };
  const fifo = path.join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  let dev: string | null = path.join(dir, 'full');
  try {
    execFileSync('mknod', [dev, 'c', '1', '7'], { stdio: 'ignore' });
  } catch {
    dev = null;
  }
  const folder = path.join(dir, 'folder');
  mkdirSync(folder);
  const keep = path.join(dir, 'keep.json');
  writeFileSync(keep, '{"mine": "do not replace"}\n');
  return {
    dir,
    dialogues: copy('dialogues.json'),
    schema: copy('schema.json'),
    preds: copy('predictions.jsonl'),
    keep,
    fifo,
    folder,
    dev,
    model,
    fresh: (name) => path.join(dir, name),
    file: (name, text) => {
      const p = path.join(dir, name);
      writeFileSync(p, text);
      return p;
    },
  };
}

export interface ProbeResult {
  name: string;
  outcome: Outcome | 'skipped';
  code: number | null;
  firstLine: string;
}

/** The command line that runs the CLI: the TypeScript sources (tsx) or the build (dist/). */
function cliArgv(cli: 'src' | 'dist'): string[] {
  return cli === 'dist' ? [path.join(REPO, 'bin', 'todeval.js')] : ['--import', tsxLoader(), path.join(REPO, 'src', 'cli', 'main.ts')];
}

/** tsx's loader by its URL: each case runs in its own folder, from which a bare `tsx` is not found. */
function tsxLoader(): string {
  const pkgFile = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { exports: { '.': string } };
  return pathToFileURL(path.join(path.dirname(pkgFile), pkg.exports['.'])).href;
}

const STACK = /^\s+at .+:\d+:\d+\)?$|^(?!todeval: )(\w*Error|TypeError|RangeError)\b.*:/m;

export function classify(r: { code: number | null; stderr: string; timedOut: boolean; changed: string[] }): Outcome {
  if (r.timedOut) return 'hang';
  if (r.changed.length > 0) return 'data lost';
  if (STACK.test(r.stderr)) return 'stack trace';
  if (r.code === 0) return 'wrong exit 0';
  const lines = r.stderr.split('\n').filter((l) => l.trim() !== '' && l !== '(run with --help for usage)');
  return lines.length === 1 ? 'clean error' : 'unclear';
}

/** Runs one case in a fresh folder and classifies it. */
export async function probeCase(c: ProbeCase, opts: { model: string; timeoutMs: number; cli: 'src' | 'dist' }): Promise<ProbeResult> {
  const f = makeFolder(opts.model);
  try {
    const args = c.args(f);
    if (!args) return { name: c.name, outcome: 'skipped', code: null, firstLine: 'cannot be made here' };
    const before = fingerprint(f.dir);
    const child = spawn(process.execPath, [...cliArgv(opts.cli), ...args], { cwd: f.dir, env: { ...process.env, ...c.env, TODEVAL_DEBUG: '' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
    clearTimeout(timer);
    const after = fingerprint(f.dir);
    // Changed or gone: only files that were there before count (new outputs are allowed).
    const changed = [...before].filter(([name, print]) => after.get(name) !== print).map(([name]) => name);
    return { name: c.name, outcome: classify({ code, stderr, timedOut, changed }), code, firstLine: stderr.split('\n')[0].slice(0, 160) };
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
}

export async function runProbe(cases: readonly ProbeCase[], opts: { model: string; timeoutMs: number; cli: 'src' | 'dist'; onResult?: (r: ProbeResult) => void }): Promise<ProbeResult[]> {
  const results: ProbeResult[] = [];
  for (const c of cases) {
    const r = await probeCase(c, opts);
    opts.onResult?.(r);
    results.push(r);
  }
  return results;
}

/** The tally as a Markdown table: inputs tried and each outcome's count. */
export function tallyTable(results: readonly ProbeResult[]): string {
  const tried = results.filter((r) => r.outcome !== 'skipped');
  const count = (o: Outcome) => tried.filter((r) => r.outcome === o).length;
  return [
    `| inputs tried | ${OUTCOMES.join(' | ')} |`,
    `| ${['---', ...OUTCOMES.map(() => '---')].join(' | ')} |`,
    `| ${[tried.length, ...OUTCOMES.map(count)].join(' | ')} |`,
  ].join('\n');
}

/** The lexical stand-in test/helpers builds, when it is there (score cases then get past the model). */
function defaultModel(): string {
  const cache = path.join(REPO, '.cache', 'models');
  const standin = existsSync(cache) ? readdirSync(cache).find((n) => n.startsWith('lexical-standin')) : undefined;
  return standin ? path.join(cache, standin) : path.join(tmpdir(), 'todeval-probe-no-model');
}

async function main(): Promise<void> {
  // `npm run probe:bad-input | head`: the reader's choice, not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  const argv = process.argv.slice(2);
  const flag = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = flag('--only');
  const cases = only ? PROBE_CASES.filter((c) => c.name.includes(only)) : PROBE_CASES;
  const results = await runProbe(cases, {
    model: flag('--model') ?? defaultModel(),
    timeoutMs: Number(flag('--timeout-ms') ?? 60_000),
    cli: flag('--cli') === 'dist' ? 'dist' : 'src',
    onResult: (r) => process.stdout.write(`${r.outcome.padEnd(13)} ${String(r.code).padStart(4)}  ${r.name}: ${r.firstLine}\n`),
  });
  process.stdout.write(`\n${tallyTable(results)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
