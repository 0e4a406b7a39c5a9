import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * A file shipped with the package (schemas/, models/, rules/ ...). This module runs from src/util
 * (tsx) or dist/src/util (built), which sit at different depths below the package root, so both
 * depths are tried; undefined when neither holds the file.
 */
export function findPackageFile(...parts: string[]): string | undefined {
  for (const up of ['../..', '../../..']) {
    const file = path.resolve(here, up, ...parts);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** Like findPackageFile, but a missing file is a broken installation, not a user error. */
export function packageFile(...parts: string[]): string {
  const file = findPackageFile(...parts);
  if (!file) throw new Error(`${parts.join('/')} is missing from the installed package`);
  return file;
}

/** A JSON file shipped with the package, parsed (bundled JSON Schemas, model manifests). */
export function readPackageJson<T = unknown>(...parts: string[]): T {
  return JSON.parse(readFileSync(packageFile(...parts), 'utf8')) as T;
}
