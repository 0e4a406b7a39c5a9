import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { buildLexicalStandin, LEXICAL_STANDIN_MANIFEST, LEXICAL_STANDIN_VERSION } from '../../src/nli/onnx-builder/index.js';
import { REPO_ROOT, TOKENIZER_DIR } from './shared.js';

/** Cache of the lexical stand-in, keyed by its builder version so a graph change rebuilds it. */
export const LEXICAL_STANDIN_CACHE = path.join(REPO_ROOT, '.cache', 'models', `lexical-standin-v${LEXICAL_STANDIN_VERSION}`);

/**
 * Directory of the lexical stand-in NLI model (real tokenizer), built once and reused; concurrent
 * vitest workers each build into a temp dir and rename it into place, the loser dropping its copy.
 * Uses the tokenizer shipped in models/roberta-large-mnli.
 */
export function getLexicalStandinDir(cacheDir = LEXICAL_STANDIN_CACHE): string {
  if (existsSync(path.join(cacheDir, LEXICAL_STANDIN_MANIFEST))) return cacheDir;
  const parent = path.dirname(cacheDir);
  mkdirSync(parent, { recursive: true });
  const tmp = path.join(parent, `.tmp-lexical-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    buildLexicalStandin({ outDir: tmp, tokenizerDir: TOKENIZER_DIR });
    try {
      renameSync(tmp, cacheDir);
    } catch (e) {
      if (!existsSync(path.join(cacheDir, LEXICAL_STANDIN_MANIFEST))) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return cacheDir;
}
