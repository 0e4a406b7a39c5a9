import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInGroup } from './helpers/process-group.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';

// The GPU check runs rarely (a GPU machine is lent now and then); this dry run keeps the bundle and
// gpu/run.sh working in between: the same scripts, on CPU, with the tiny model and small counts.
describe.skipIf(!hasData('sgd', 'test'))('GPU bundle + gpu/run.sh dry run on CPU', () => {
  const tmp = suiteTempDir('gpu-bundle-test');
  // Async children, each in its own process group: a timeout or a failed test kills the whole tree
  // (run.sh's node phases too; they once ran on for 15 minutes after the test gave up).
  const run = (cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }) => runInGroup(cmd, args, { ...opts, timeoutMs: 240_000 });
  it('bundles in several parts, and run.sh unpacks them and runs every phase', async () => {
    const out = path.join(tmp, 'bundle');
    await run(process.execPath, ['--import', 'tsx', 'scripts/gpu-bundle.ts', '--out', out, '--provider', 'none', '--data', 'none', '--level', '0', '--part-mib', '40'], { cwd: REPO_ROOT });
    const parts = readdirSync(out).filter((d) => d.startsWith('part-')).sort();
    expect(parts.length).toBeGreaterThanOrEqual(2);
    for (const p of parts) {
      for (const f of readdirSync(path.join(out, p)).filter((f) => f.startsWith('bundle.part-'))) {
        expect(readFileSync(path.join(out, p, f)).length).toBeLessThanOrEqual(40 * 2 ** 20);
      }
    }
    const results = path.join(tmp, 'results');
    const args = ['--parts', parts.map((p) => path.join(out, p)).join(' '), '--device', 'cpu', '--size', 'tiny', '--quick', '--out', results, '--work', path.join(tmp, 'work'), '--data-dir', DATA_DIR];
    await run('bash', [path.join(out, 'part-1', 'run.sh'), ...args], { cwd: tmp, env: { ...process.env, PATH: '/usr/bin:/bin' } });
    const phases = readFileSync(path.join(results, 'phases.tsv'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(phases.map((p) => p[0])).toEqual(['doctor', 'model-fp32', 'model-fp16', 'correctness', 'bench-nli', 'score-gold', 'second-system', 'score-second']);
    expect(phases.filter((p) => p[2] !== '0')).toEqual([]);
    const check = JSON.parse(readFileSync(path.join(results, 'check.json'), 'utf8')) as { results: { dtype: string; ok: boolean; maxDiff: number }[] };
    expect(check.results.map((r) => [r.dtype, r.ok])).toEqual([
      ['fp32', true],
      ['fp16', true],
    ]);
    const bench = JSON.parse(readFileSync(path.join(results, 'bench-nli.json'), 'utf8')) as { figures: { dtype: string; pairsPerSec: number }[] };
    expect(new Set(bench.figures.map((f) => f.dtype))).toEqual(new Set(['fp32', 'fp16']));
    expect(bench.figures.every((f) => f.pairsPerSec > 0)).toBe(true);
    for (const f of ['score-gold.json', 'score-second.json', 'doctor.json']) expect(existsSync(path.join(results, f))).toBe(true);
    // The bundled Node ran it all (the GPU machine has none of its own).
    expect(readFileSync(path.join(results, 'run.log'), 'utf8')).toContain(`node ${process.version} at ${path.join(tmp, 'work', 'bin', 'node')}`);
  }, 540_000);
});
