import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** ../shared next to the checkout (CI always has it; a bare clone may not). */
export const SHARED_DIR = process.env.TODEVAL_SHARED ?? path.resolve(repoRoot, '..', 'shared');
export const SHARED_DATA = path.join(SHARED_DIR, 'data');
export const SHARED_TOKENIZER_DIR = path.join(SHARED_DIR, 'models', 'roberta-large-mnli');
export const REPO_ROOT = repoRoot;

/**
 * True when the shared file exists; otherwise prints why the suite is skipped, so a missing
 * ../shared never looks like a pass.
 */
export function hasShared(...parts: string[]): boolean {
  const p = path.join(SHARED_DIR, ...parts);
  if (existsSync(p)) return true;
  console.warn(`[skip] ${p} is absent: tests that need ../shared are skipped (CI always has it)`);
  return false;
}
