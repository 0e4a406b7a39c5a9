import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The checkout the scripts run from (scripts/lib/..). */
export const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

/**
 * The full-size random roberta-large the benchmarks time (random weights cost exactly what real ones
 * do), built into `dir` (relative to the checkout) when it has no ONNX file yet; returns its path.
 */
export function ensureLargeRandomModel(dir: string): string {
  const modelDir = path.resolve(REPO_ROOT, dir);
  if (!existsSync(path.join(modelDir, 'onnx', 'model.onnx')) && !existsSync(path.join(modelDir, 'model.onnx'))) {
    console.log(`building the random roberta-large into ${modelDir} ...`);
    execFileSync('npx', ['tsx', 'scripts/build-random-roberta.ts', '--size', 'large', '--out', modelDir], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
  return modelDir;
}
