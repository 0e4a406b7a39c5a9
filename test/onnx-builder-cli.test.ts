import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTsx } from './helpers/cli.js';
import { REPO_ROOT, TOKENIZER_DIR } from './helpers/shared.js';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'build-random-roberta.ts');
const HELPER = path.join(REPO_ROOT, 'test', 'helpers', 'tiny-model.ts');

describe('model:random script and tiny-model cache', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'todeval-model-random-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('size flags override the tiny preset and land in config.json', async () => {
    const out = path.join(tmp, 'custom');
    const r = await runTsx([SCRIPT, '--size', 'tiny', '--layers', '1', '--hidden', '32', '--heads', '2', '--out', out, '--seed', '3']);
    expect(r.code, r.stderr).toBe(0);
    const config = JSON.parse(readFileSync(path.join(out, 'config.json'), 'utf8'));
    // --intermediate was not given: the tiny preset's 128 stays.
    expect(config).toMatchObject({ num_hidden_layers: 1, hidden_size: 32, num_attention_heads: 2, intermediate_size: 128 });
    const manifest = JSON.parse(readFileSync(path.join(out, 'random-model.json'), 'utf8'));
    expect(manifest).toMatchObject({ seed: 3, onnxFile: 'onnx/model.onnx', dtype: 'fp32' });
    expect(readdirSync(out).sort()).toEqual(expect.arrayContaining(['config.json', 'onnx', 'tokenizer.json', 'tokenizer_config.json']));
  });

  it('without --tokenizer-dir both builders use the tokenizer shipped in models/; a --tokenizer-dir without one is one line, exit 2', async () => {
    // (The test above built model:random without the flag too.) The lexical one, from an empty cwd's view:
    const lexical = path.join(tmp, 'lexical');
    const r = await runTsx([path.join(REPO_ROOT, 'scripts', 'build-lexical-standin.ts'), '--out', lexical]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('lexical-standin, NOT a language model');
    // Buffer.equals, not toEqual: vitest's toEqual walks a Buffer byte by byte (4.7 s of CPU for these
    // 1.3 MB, with the worker's event loop blocked throughout: vitest's RPC times out under load).
    expect(readFileSync(path.join(lexical, 'tokenizer.json')).equals(readFileSync(path.join(TOKENIZER_DIR, 'tokenizer.json'))), 'tokenizer.json is a byte copy of models/roberta-large-mnli/tokenizer.json').toBe(true);
    for (const [script, ...args] of [['build-random-roberta.ts', '--size', 'tiny'], ['build-lexical-standin.ts']]) {
      const bad = await runTsx([path.join(REPO_ROOT, 'scripts', script), ...args, '--out', path.join(tmp, 'x'), '--tokenizer-dir', tmp]);
      expect(bad.code, script).toBe(2);
      expect(bad.stderr.trim().split('\n')).toEqual([expect.stringContaining(`--tokenizer-dir ${tmp} holds no tokenizer.json`)]);
      expect(bad.stderr).not.toContain('random model');
    }
  }, 180_000);

  it('bad sizes are one line and exit 2', async () => {
    const r = await runTsx([SCRIPT, '--size', 'tiny', '--heads', '5', '--out', path.join(tmp, 'bad')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('hidden size 64 is not divisible by 5 heads');
    const s = await runTsx([SCRIPT, '--size', 'medium', '--out', path.join(tmp, 'bad2')]);
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('--size must be tiny or large');
  });

  it('getTinyModelDir: concurrent processes end with one complete cache dir and no leftovers', async () => {
    const cache = path.join(tmp, 'cache', 'tiny');
    const code = `import { getTinyModelDir } from ${JSON.stringify(HELPER)}; console.log(await getTinyModelDir(${JSON.stringify(cache)}));`;
    const runs = await Promise.all([1, 2, 3].map(() => runTsx(['--input-type=module', '-e', code])));
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe(cache);
    }
    expect(readdirSync(path.dirname(cache))).toEqual(['tiny']);
    const manifest = JSON.parse(readFileSync(path.join(cache, 'random-model.json'), 'utf8'));
    expect(manifest).toMatchObject({ size: 'tiny', seed: 42 });
  });
});
