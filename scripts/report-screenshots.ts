// The screenshots in README.md and docs/report.md: the HTML report of two runs over the whole SGD
// test set (the ground truth and a system that swaps a slot value in every other turn that names
// one), scored with the lexical stand-in (NOT SGSAcc; the page says so), taken in headless Chromium
// right after load at 1,400 px (docs/report-screenshot.png) and 420 px (docs/report-full-sgd-420.png).
// Usage: npm run build && npm run report:screenshots [-- --data-dir DIR] [-- --tokenizer-dir DIR] [-- --keep DIR]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { resolveDataDir } from '../src/data/data-dir.js';
import { buildLexicalStandin } from '../src/nli/onnx-builder/index.js';
import { zanzibarPredictions } from './lib/zanzibar-predictions.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = resolveDataDir(arg('--data-dir')).dir;
const keep = arg('--keep');
const work = keep ?? mkdtempSync(path.join(tmpdir(), 'todeval-report-shots-'));
mkdirSync(work, { recursive: true });
const f = (n: string) => path.join(work, n);
const BUILT = existsSync(path.join(REPO, 'dist', 'src', 'cli', 'main.js'));
const cli = (args: string[]) => {
  const entry = BUILT ? [path.join(REPO, 'bin', 'todeval.js')] : ['--import', 'tsx', path.join(REPO, 'src', 'cli', 'main.ts')];
  return execFileSync(process.execPath, [...entry, ...args], { cwd: REPO, encoding: 'utf8', maxBuffer: 1 << 26 });
};

/** The page from its top down to `height` px (the whole page is ~9,000 px of turns). */
const SHOTS = [
  { width: 1400, height: 3000, file: path.join(REPO, 'docs', 'report-screenshot.png') },
  { width: 420, height: 3600, file: path.join(REPO, 'docs', 'report-full-sgd-420.png') },
];

try {
  const model = f('lexical-standin');
  if (!existsSync(path.join(model, 'lexical-standin.json'))) buildLexicalStandin({ outDir: model, tokenizerDir: arg('--tokenizer-dir') });
  const sgdTest = path.join(dataDir, 'sgd', 'test');
  writeFileSync(f('swap.jsonl'), zanzibarPredictions(sgdTest));
  const base = ['--dataset', 'sgd', '--data-dir', dataDir, '--model', model, '--device', 'cpu', '--references', f('refs.jsonl'), '--progress', 'none'];
  // With --keep, runs already there are reused (re-running only retakes the screenshots).
  if (!existsSync(f('gold.json'))) {
    console.log('scoring the ground truth over the SGD test set (builds the references)...');
    cli(['score', ...base, '--turns', f('gold.turns.jsonl'), '-o', f('gold.json')]);
  }
  if (!existsSync(f('swap.json'))) {
    console.log('scoring the value-swapping system...');
    cli(['score', ...base, '-i', f('swap.jsonl'), '--system', 'value-swapper', '--turns', f('swap.turns.jsonl'), '-o', f('swap.json')]);
  }
  process.stdout.write(cli(['report', f('gold.json'), f('swap.json'), '--turns', f('gold.turns.jsonl'), f('swap.turns.jsonl'), '-o', f('report.html'), '--title', 'todeval report: SGD test set, lexical stand-in']));

  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
  try {
    for (const shot of SHOTS) {
      const page = await browser.newPage({ viewport: { width: shot.width, height: 900 } });
      await page.goto(`file://${f('report.html')}`);
      await page.waitForSelector('body[data-ready="1"]', { timeout: 120_000 });
      const height = Math.min(shot.height, await page.evaluate(() => document.documentElement.scrollHeight));
      await page.screenshot({ path: shot.file, fullPage: true, clip: { x: 0, y: 0, width: shot.width, height } });
      console.log(`wrote ${path.relative(REPO, shot.file)} (${shot.width} x ${height} px)`);
      await page.close();
    }
  } finally {
    await browser.close();
  }
} finally {
  if (!keep) rmSync(work, { recursive: true, force: true });
}
