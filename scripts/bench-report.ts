// Build time of the HTML report (`todeval report`) for two runs on the first N SGD test turns
// (default 200): the ground truth and a system that swaps a slot value in every other turn that
// names one, both scored with the lexical stand-in (setup, not timed). Target: under 2 s.
// Usage: npm run bench:report [-- --turns N] [-- --repeat N] [-- --data-dir DIR] [-- --tokenizer-dir DIR]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveDataDir } from '../src/data/data-dir.js';
import { buildLexicalStandin } from '../src/nli/onnx-builder/index.js';
import { buildHtmlReport } from '../src/report/html/index.js';
import { zanzibarPredictions } from './lib/zanzibar-predictions.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const turns = Number(arg('--turns') ?? 200);
const repeat = Number(arg('--repeat') ?? 2);
const dataDir = resolveDataDir(arg('--data-dir')).dir;
const work = mkdtempSync(path.join(tmpdir(), 'todeval-bench-report-'));
const f = (n: string) => path.join(work, n);
// The built CLI as users run it (npm run build), else the sources through tsx (slower start-up).
const BUILT = existsSync(path.join(REPO, 'dist', 'src', 'cli', 'main.js'));
const cli = (args: string[]) => {
  const entry = BUILT ? [path.join(REPO, 'bin', 'todeval.js')] : ['--import', 'tsx', path.join(REPO, 'src', 'cli', 'main.ts')];
  const r = spawnSync(process.execPath, [...entry, ...args], { cwd: REPO, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`todeval ${args[0]} failed: ${r.stderr}`);
  return r;
};

try {
  const model = f('lexical-standin');
  buildLexicalStandin({ outDir: model, tokenizerDir: arg('--tokenizer-dir') });

  // A value-swapping system over the same turns (the ids todeval writes: <dialogue_id>/<turn index>).
  const sgdTest = path.join(dataDir, 'sgd', 'test');
  writeFileSync(f('swap.jsonl'), zanzibarPredictions(sgdTest));
  const base = ['--dataset', 'sgd', '--data-dir', dataDir, '--limit', String(turns), '--model', model, '--device', 'cpu', '--references', f('refs.jsonl')];
  cli(['score', ...base, '--out', f('gold.turns.jsonl'), '-o', f('gold.json')]);
  cli(['score', ...base, '--predictions', f('swap.jsonl'), '--system', 'value-swapper', '--out', f('swap.turns.jsonl'), '-o', f('swap.json')]);

  const input = { runs: [f('gold.json'), f('swap.json')], turns: [f('gold.turns.jsonl'), f('swap.turns.jsonl')] };
  console.log(`report of 2 runs on the first ${turns} SGD test turns (lexical stand-in); target < 2 s`);
  for (let i = 1; i <= repeat; i++) {
    // In process: read the runs, build the page data, inline the libraries, compress, write.
    let t = performance.now();
    const { html, listedTurns } = buildHtmlReport(input);
    writeFileSync(f('report.html'), html);
    const inProcess = (performance.now() - t) / 1000;
    // As a user runs it: a fresh `todeval report` process, Node start-up included.
    t = performance.now();
    cli(['report', ...input.runs, '--turns', ...input.turns, '-o', f('report-cli.html')]);
    const wall = (performance.now() - t) / 1000;
    console.log(
      `run ${i}: build ${inProcess.toFixed(2)} s in process${i === 1 ? ' (cold: first read of the chart libraries)' : ''}, ` +
        `${wall.toFixed(2)} s as a CLI process (${BUILT ? 'bin/todeval.js' : 'tsx'}, start-up included); ${(statSync(f('report.html')).size / 2 ** 20).toFixed(2)} MiB, ` +
        `${listedTurns} listed turns; ${inProcess < 2 ? 'within' : 'MISSES'} the 2 s target`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
