import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  buildRandomRoberta,
  ONNX_BUILDER_VERSION,
  RANDOM_MODEL_MANIFEST,
} from '../../src/nli/onnx-builder/index.js';
import { REPO_ROOT, TOKENIZER_DIR } from './shared.js';

/** Cache of the tiny random model, keyed by builder version so a graph change rebuilds it. */
export const TINY_MODEL_CACHE = path.join(REPO_ROOT, '.cache', 'models', `tiny-random-roberta-v${ONNX_BUILDER_VERSION}`);

/**
 * Directory of a tiny random RoBERTa with the real tokenizer and config, built once into `cacheDir`
 * and reused. Several vitest workers may call this at once: each builds into its own temp dir and
 * renames it into place; the loser of the race drops its copy.
 * Uses the tokenizer shipped in models/roberta-large-mnli.
 */
export function cachedTinyModel(cacheDir: string, weights: { seed?: number; std?: number } = {}): string {
  if (existsSync(path.join(cacheDir, RANDOM_MODEL_MANIFEST))) return cacheDir;
  const parent = path.dirname(cacheDir);
  mkdirSync(parent, { recursive: true });
  const tmp = path.join(parent, `.tmp-tiny-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    buildRandomRoberta({ outDir: tmp, size: 'tiny', tokenizerDir: TOKENIZER_DIR, ...weights });
    try {
      renameSync(tmp, cacheDir);
    } catch (e) {
      // Another worker won the race (the target exists and is complete): use theirs.
      if (!existsSync(path.join(cacheDir, RANDOM_MODEL_MANIFEST))) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return cacheDir;
}

/** The default tiny random RoBERTa (2 layers, hidden 64, seed 42). */
export async function getTinyModelDir(cacheDir = TINY_MODEL_CACHE): Promise<string> {
  return cachedTinyModel(cacheDir);
}
