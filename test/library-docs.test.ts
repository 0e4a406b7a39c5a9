import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

// docs/library.md's examples are programs: each runs here against the sources (`todeval` mapped to
// src/index.ts), from the repo root, and must exit 0 (they assert their own results).
const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'library.md'), 'utf8');
const blocks = [...doc.matchAll(/```ts\n(\/\/ example: ([^\n]+)\n[\s\S]*?)```/g)].map((m) => ({ name: m[2], code: m[1] }));
// Inside the repo, so the examples resolve its packages as a user's project would; removed afterwards.
mkdirSync(path.join(REPO_ROOT, '.cache'), { recursive: true });
const dir = mkdtempSync(path.join(REPO_ROOT, '.cache', 'library-docs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const index = path.join(REPO_ROOT, 'src', 'index.ts');

async function runExample(code: string, env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  const file = path.join(dir, `example-${Math.random().toString(36).slice(2)}.ts`);
  writeFileSync(file, code.replaceAll("from 'todeval'", `from ${JSON.stringify(index)}`));
  return promisify(execFile)(process.execPath, ['--import', 'tsx', file], { cwd: REPO_ROOT, env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
}

describe('docs/library.md examples run', () => {
  it('the page has the examples this test expects (a parsing slip would run nothing)', () => {
    expect(blocks.map((b) => b.name.split(' (')[0])).toEqual(['score pipeline', 'rerank pipeline', 'evaluate pipeline', 'compare pipeline', 'text metrics', 'ser and references', 'sgsacc', 'serve', 'mwz and gcdf1', 'significance']);
    // Every API the brief names appears in a run example.
    const all = blocks.map((b) => b.code).join('\n');
    for (const api of ['corpusBleu', 'sentenceBleu', 'corpusChrf', 'corpusTer', 'mosesTokenize', 'mosesDetokenize', 'lexicalRichness', 'Evaluator', 'aggregateGcdf1', 'runSgsacc', 'rerank', 'createNliRunner', 'serveFaithfulness', 'pairedBootstrap', 'pairedApproximateRandomization', 'bootstrapConfidence', 'NumpyGenerator', 'Pcg64', 'compareBleu', 'compareRuns', 'scoreSelectedTurns', 'selectScoreTurns', 'runRerankPipeline', 'runEvaluatePipeline', 'runComparePipeline', 'runSerPipeline', 'runRefsPipeline', 'runGcdf1Pipeline', 'runTextMetricsPipeline', 'runScorePipeline']) {
      expect(all).toContain(api);
    }
  });

  for (const b of blocks) {
    const needsModel = b.name.includes('TODEVAL_MODEL');
    const needsData = b.name.includes('TODEVAL_DATA');
    const skip = (needsModel && false) || (needsData && !hasData('multiwoz') );
    it.skipIf(skip)(b.name, async () => {
      const env: NodeJS.ProcessEnv = { TODEVAL_DATA: DATA_DIR };
      if (needsModel) env.TODEVAL_MODEL = await getTinyModelDir();
      const r = await runExample(b.code, env);
      expect(r.out).not.toMatch(/AssertionError|Error:/);
      expect(r.code).toBe(0);
    }, 120_000);
  }
});
