import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running the module `name` that sits next to `here` (the caller's import.meta.url):
 * the compiled .js in a build, or, when running from the TypeScript sources (tests, tsx scripts),
 * the .ts file loaded through tsx's loader, registered inside the new thread.
 */
export function startWorker(here: string, name: string, options: WorkerOptions = {}): Worker {
  if (!here.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, here), options);
  const entry = new URL(`./${name}.ts`, here).href;
  // tsx's ESM API ("tsx/esm/api", import condition) from the package this file belongs to.
  const tsxDir = path.dirname(createRequire(fileURLToPath(here)).resolve('tsx/package.json'));
  const tsx = pathToFileURL(path.join(tsxDir, 'dist', 'esm', 'api', 'index.mjs')).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** An error as it crosses between threads: its class by name, so a one-line input error stays one. */
export interface ThreadError {
  name: string;
  message: string;
  file?: string;
  where?: string;
}

export function toThreadError(e: unknown): ThreadError {
  const err = e as { name?: unknown; message?: unknown; file?: unknown; where?: unknown };
  return {
    name: typeof err?.name === 'string' ? err.name : 'Error',
    message: typeof err?.message === 'string' ? err.message : String(e),
    ...(typeof err?.file === 'string' ? { file: err.file } : {}),
    ...(typeof err?.where === 'string' ? { where: err.where } : {}),
  };
}
