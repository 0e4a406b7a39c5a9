/**
 * The real-data figures of docs/significance.md, reproduced:
 *   npx tsx scripts/significance-examples.ts [--data-dir DIR] [--out DIR] [--model DIR | --tokenizer-dir DIR] [--skip-sgd]
 * 1. MultiWOZ: two published systems (AuGPT, UniConv) compared on BLEU, Inform, Success and JGA,
 *    resampling dialogues and then turns; then AuGPT against a copy of itself (p = 1, both tests);
 *    then both in `todeval report` (evaluate --items files), by BLEU and by Success.
 * 2. SGD test set with the lexical stand-in NLI model (not SGSAcc: a token-overlap graph): the
 *    ground truth, a system with one slot value swapped in every turn that has one, and two that
 *    swap values in every such turn of one dialogue in ten (mild) or in a hundred (slight): errors
 *    that come by dialogue, as a system's do when a domain defeats it. Scored with --turns, then
 *    compared by dialogue and by turn, and reported together (`todeval report` with the per-turn files).
 * Commands run through the CLI (printed before they run); outputs go to --out (default a temp dir).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { resolveDataDir } from '../src/data/data-dir.js';
import { loadSgsaccData } from '../src/metrics/sgsacc/index.js';
import { buildLexicalStandin, LEXICAL_STANDIN_MANIFEST } from '../src/nli/onnx-builder/index.js';
import { buildValueIndex } from '../src/rules/value-index.js';
import { swapOneValuePerTurn } from './lib/value-swap.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const dataDir = resolveDataDir(arg('--data-dir')).dir;
const out = arg('--out') ?? mkdtempSync(path.join(tmpdir(), 'todeval-significance-examples-'));
mkdirSync(out, { recursive: true });
const cli = path.join(import.meta.dirname, '..', 'src', 'cli', 'main.ts');

function todeval(...args: string[]): string {
  console.log(`\n$ todeval ${args.join(' ')}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`todeval ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

console.log(`load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}; outputs in ${out}`);
const pred = (s: string) => path.join(dataDir, 'multiwoz', 'predictions', `${s}.json`);
for (const unit of ['dialogue', 'turn']) process.stdout.write(todeval('compare', pred('augpt'), pred('uniconv'), '--data-dir', dataDir, '--unit', unit));
// A system against itself (a copy of its file): identical per-item statistics, p = 1 in both tests
// (sacreBLEU's rule would give 1/(n+1): 0.000999 and 0.0001; test/significance-bleu.test.ts checks
// both against sacreBLEU's own run on its fixture).
const copy = path.join(out, 'augpt-copy.json');
copyFileSync(pred('augpt'), copy);
for (const test of ['--paired-bs', '--paired-ar']) process.stdout.write(todeval('compare', pred('augpt'), copy, '--data-dir', dataDir, test));
// The same two systems in `todeval report`: evaluate's --items files give the ± and vs-baseline columns.
for (const s of ['augpt', 'uniconv']) todeval('evaluate', '-i', pred(s), '--data-dir', dataDir, '--bleu', '--success', '--dst', '--items', path.join(out, `${s}.items.json`), '-o', path.join(out, `${s}.json`));
const mwzReport = ['report', path.join(out, 'augpt.json'), path.join(out, 'uniconv.json'), '--items', path.join(out, 'augpt.items.json'), path.join(out, 'uniconv.items.json')];
process.stdout.write(todeval(...mwzReport, '-o', path.join(out, 'mwz-report.html')));
process.stdout.write(todeval(...mwzReport, '--significance-metric', 'success', '-o', path.join(out, 'mwz-report-success.html')));

if (!process.argv.includes('--skip-sgd')) {
  let model = arg('--model');
  if (!model) {
    model = path.join(out, 'lexical-standin');
    if (!existsSync(path.join(model, LEXICAL_STANDIN_MANIFEST))) {
      buildLexicalStandin({ outDir: model, tokenizerDir: arg('--tokenizer-dir') });
    }
  }
  const data = loadSgsaccData({ dataset: 'sgd', dataDir });
  const { utterances } = swapOneValuePerTurn(data.expand(data.loaded.turns), buildValueIndex(data.loaded.turns));
  const gold = new Map(data.loaded.turns.map((t) => [t.id, t.utterance]));
  const swappedIds = [...utterances].filter(([id, u]) => u !== gold.get(id)).map(([id]) => id);
  const dialogues = [...new Set(data.loaded.turns.map((t) => t.dialogueId))];
  const every = (n: number) => {
    const chosen = new Set(dialogues.filter((_, k) => k % n === 0));
    return new Set(data.loaded.turns.filter((t) => chosen.has(t.dialogueId)).map((t) => t.id));
  };
  const mildIds = every(10);
  const slightIds = every(100);
  const write = (name: string, pick: (id: string) => string) => {
    const file = path.join(out, `${name}.jsonl`);
    writeFileSync(file, data.loaded.turns.map((t) => JSON.stringify({ id: t.id, utterance: pick(t.id) })).join('\n') + '\n');
    return file;
  };
  const swapped = write('swapped', (id) => utterances.get(id)!);
  const mild = write('mild', (id) => (mildIds.has(id) ? utterances.get(id)! : gold.get(id)!));
  const slight = write('slight', (id) => (slightIds.has(id) ? utterances.get(id)! : gold.get(id)!));
  const count = (ids: Set<string>) => swappedIds.filter((id) => ids.has(id)).length;
  console.log(`\nswapped: ${swappedIds.length} turns with a value swapped; mild: ${count(mildIds)} (in ${dialogues.length / 10 | 0} dialogues); slight: ${count(slightIds)}`);
  const common = ['--dataset', 'sgd', '--data-dir', dataDir, '--model', model, '--device', 'cpu', '--progress', 'none', '--references', path.join(out, 'refs.jsonl')];
  const f = (name: string) => path.join(out, name);
  todeval('score', ...common, '--turns', f('gold.turns.jsonl'), '-o', f('gold.json'));
  todeval('score', ...common, '-i', swapped, '--system', 'swapped', '--turns', f('swapped.turns.jsonl'), '-o', f('swapped.json'));
  todeval('score', ...common, '-i', mild, '--system', 'mild', '--turns', f('mild.turns.jsonl'), '-o', f('mild.json'));
  todeval('score', ...common, '-i', slight, '--system', 'slight', '--turns', f('slight.turns.jsonl'), '-o', f('slight.json'));
  for (const unit of ['dialogue', 'turn']) {
    process.stdout.write(todeval('compare', f('gold.turns.jsonl'), f('swapped.turns.jsonl'), f('mild.turns.jsonl'), f('slight.turns.jsonl'), '--unit', unit));
  }
  // The four runs in one report: ± and p-values against the ground truth, beside the failing turns.
  const names = ['gold', 'slight', 'mild', 'swapped'];
  process.stdout.write(todeval('report', ...names.map((n) => f(`${n}.json`)), '--turns', ...names.map((n) => f(`${n}.turns.jsonl`)), '-o', f('sgd-report.html')));
}
console.log(`\nload average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
