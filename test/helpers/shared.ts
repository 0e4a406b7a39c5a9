import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const REPO_ROOT = repoRoot;

/** roberta-large-mnli's tokenizer + config, shipped in the repository (models/roberta-large-mnli). */
export const TOKENIZER_DIR = path.join(repoRoot, 'models', 'roberta-large-mnli');

/** The one variable that tells the tests where the data is (the README's). */
export const DATA_ENV = 'TODEVAL_DATA';

/**
 * The data the data-dependent suites read: $TODEVAL_DATA, else $TODEVAL_SHARED/data (older name,
 * kept), else ../shared/data beside the checkout, which is where CI has it. Tests pass this to the
 * CLI explicitly (--data-dir or TODEVAL_DATA), so nothing depends on a child's working directory.
 */
export const DATA_DIR = process.env[DATA_ENV]
  ? path.resolve(process.env[DATA_ENV])
  : process.env.TODEVAL_SHARED
    ? path.resolve(process.env.TODEVAL_SHARED, 'data')
    : path.resolve(repoRoot, '..', 'shared', 'data');

let skipSaid = false;

/**
 * True when DATA_DIR holds `parts`; otherwise the suite is skipped, and the first miss in a test
 * file prints one line naming the variable to set, so a missing data dir never looks like a pass.
 */
export function hasData(...parts: string[]): boolean {
  const p = path.join(DATA_DIR, ...parts);
  if (existsSync(p)) return true;
  if (!skipSaid) {
    skipSaid = true;
    console.warn(`[skip] data-dependent tests skipped: ${p} is absent; set ${DATA_ENV}=DIR (a data dir in the layout todeval data pull writes) to run them`);
  }
  return false;
}
