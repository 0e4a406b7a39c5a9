import { existsSync } from 'node:fs';
import path from 'node:path';
import { MissingResourceError } from '../util/errors.js';

export type DataDirSource = 'flag' | 'env' | 'local' | 'shared';

export interface ResolvedDataDir {
  dir: string;
  source: DataDirSource;
}

/**
 * Where datasets live: --data-dir, else $TODEVAL_DATA, else ./data (when it holds a dataset),
 * else ../shared/data when it exists. Returns undefined when none applies.
 */
export function findDataDir(flag?: string, cwd = process.cwd(), env = process.env): ResolvedDataDir | undefined {
  if (flag) return { dir: path.resolve(cwd, flag), source: 'flag' };
  if (env.TODEVAL_DATA) return { dir: path.resolve(cwd, env.TODEVAL_DATA), source: 'env' };
  const local = path.resolve(cwd, 'data');
  // ./data always exists in the repo (it holds manifests); it only counts once a dataset is in it.
  if (['sgd', 'multiwoz', 'gcdf1'].some((d) => existsSync(path.join(local, d)))) {
    return { dir: local, source: 'local' };
  }
  const shared = path.resolve(cwd, '..', 'shared', 'data');
  if (existsSync(shared)) return { dir: shared, source: 'shared' };
  return undefined;
}

export function resolveDataDir(flag?: string, cwd = process.cwd(), env = process.env): ResolvedDataDir {
  const found = findDataDir(flag, cwd, env);
  if (!found) {
    throw new MissingResourceError(
      'no data directory: pass --data-dir, set TODEVAL_DATA, or run `todeval data pull` to fill ./data',
    );
  }
  return found;
}

/** Path of a dataset file inside the data dir, with a clear error when it is absent. */
export function dataFile(dataDir: string, ...parts: string[]): string {
  const file = path.join(dataDir, ...parts);
  if (!existsSync(file)) {
    throw new MissingResourceError(`missing dataset file (run \`todeval data pull\` or pass --data-dir)`, { file });
  }
  return file;
}
