import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running the module `name` that sits next to `here` (the caller's import.meta.url):
 * the compiled .js in a build, or, when running from the TypeScript sources (tests, tsx scripts),
 * the .ts file loaded through tsx's loader, registered inside the new thread (or, where a current
 * build is named by $TODEVAL_CURRENT_BUILD, as the tests' globalSetup does, that build's twin).
 */
export function startWorker(here: string, name: string, options: WorkerOptions = {}): Worker {
  if (!here.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, here), fileWorkerOptions(options));
  const built = builtTwin(here, name);
  if (built) return new Worker(built, fileWorkerOptions(options));
  const entry = new URL(`./${name}.ts`, here).href;
  // tsx's ESM API ("tsx/esm/api", import condition) from the package this file belongs to.
  const tsxDir = path.dirname(createRequire(fileURLToPath(here)).resolve('tsx/package.json'));
  const tsx = pathToFileURL(path.join(tsxDir, 'dist', 'esm', 'api', 'index.mjs')).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/**
 * A thread started from a file inherits the process's flags, and Node refuses `--input-type` for
 * anything but a string: a library user's `node --input-type=module -e "..."` would see every
 * thread die with ERR_INPUT_TYPE_NOT_ALLOWED. The thread gets the other flags (a loader, memory
 * limits) as before.
 */
function fileWorkerOptions(options: WorkerOptions): WorkerOptions {
  if (options.execArgv) return options;
  const execArgv: string[] = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const a = process.execArgv[i]!;
    if (a.startsWith('--input-type=')) continue;
    if (a === '--input-type') { i++; continue; }
    execArgv.push(a);
  }
  return execArgv.length === process.execArgv.length ? options : { ...options, execArgv };
}

/**
 * Names a build of the sources (its folder, holding src/ compiled) that is known to be current:
 * the tests' globalSetup sets it once it has rebuilt dist/ (test/helpers/build-setup.ts).
 */
export const BUILT_TWIN_ENV = 'TODEVAL_CURRENT_BUILD';

/**
 * The compiled twin of the module `name` beside `here` in that build, when there is one: a thread
 * started from it skips tsx's loader, which costs each thread a hooks thread of its own and a
 * transform of its imports (about a CPU-second a thread, and the tests start hundreds).
 */
function builtTwin(here: string, name: string): URL | undefined {
  const file = builtTwinFile(here, name);
  return file === undefined ? undefined : pathToFileURL(file);
}

/**
 * The path of that compiled twin (see builtTwin), for a module run as a process of its own rather than
 * a thread (the shard processes of `--workers`, src/pipeline/workers.ts): it then starts as plain
 * JavaScript instead of through tsx, which compiles its imports at each start.
 */
export function builtTwinFile(here: string, name: string): string | undefined {
  const build = process.env[BUILT_TWIN_ENV];
  if (!build) return undefined;
  const src = path.dirname(path.dirname(fileURLToPath(import.meta.url))); // this file is src/nli/worker-entry.ts
  const rel = path.relative(src, path.dirname(fileURLToPath(here)));
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const file = path.join(build, 'src', rel, `${name}.js`);
  return existsSync(file) ? file : undefined;
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
