import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/helpers/longest-first-sequencer.js';

/**
 * The suites that mostly wait on other programs (Chromium, a Slurm cluster, pip and a venv, npm pack
 * and install, the GPU bundle's xz) or read the whole dataset for the docs' figures. They run as a
 * project of their own on the threads pool, which vitest runs beside the forks pool of the other
 * suites: they overlap with the CPU-bound suites instead of holding a fork each while they wait.
 */
export const SYSTEM_SUITES = [
  'test/report-browser.test.ts',
  'test/slurm.test.ts',
  'test/python-package.test.ts',
  'test/fresh-install.test.ts',
  'test/gpu-bundle.test.ts',
  'test/doc-figures.test.ts',
];

/**
 * The main project's tests import `src/` as dist/'s compiled JavaScript, loaded by Node itself: an
 * import of `../src/x.js` from a test or helper becomes `../dist/src/x.js`, which vite leaves to Node
 * (DIST_SRC, server.deps.external). Through vite, each of the ~290 source modules was transformed
 * (esbuild, the SSR rewrite, an inline source map) and then, in every fork, fetched over the fork's
 * channel, compiled and evaluated again for each test file (the project's `isolate` resets vite's
 * module registry per file): 42 small files took 15.4-16.0 CPU-s that way, 11.8-12.4 this way (vitest's
 * summed transform 22-34 s, now 2-4 s). Node keeps the
 * compiled modules for the life of the fork, so a later file finds them loaded; the sources keep
 * no state between calls that a test relies on being fresh (caches keyed by the file's size and
 * mtime, run locks released by the helpers), and the test files and helpers themselves are still
 * loaded afresh per file (their hooks, temp folders, counters). dist/ is the current sources'
 * whatever the command: the globalSetup (build-setup.ts) rebuilds it before any test file is
 * loaded when src/ is newer, so `npx vitest run test/x.test.ts` after an edit tests the edit. Watch
 * mode keeps the sources through vite (WATCHING): it neither rebuilds dist/ nor reloads a module
 * Node has loaded, so an edit of src/ would go unseen. The system project (threads) imports dist/
 * the same way: through vite, each of its six files transformed the sources it reaches afresh
 * (doc-figures alone: 16.6-17.3 CPU-s through vite, 14.8 through dist/, the same 14 tests).
 */
const TESTS_IMPORT_DIST = { find: /^((?:\.\.\/)+)src\/(.+)\.js$/, replacement: '$1dist/src/$2.js' };
const DIST_SRC = /\/dist\/src\//;

/** vitest's own choice: watch mode unless `run` (or `--run`) is given, on a terminal outside CI. */
const argv = process.argv.slice(2);
const WATCHING =
  !argv.includes('run') && !argv.includes('--run') && (argv.includes('watch') || argv.includes('dev') || argv.includes('--watch') || (!process.env.CI && process.stdin.isTTY === true));

/** The `--maxWorkers` a vitest command line was given, if any (`--maxWorkers=N` or `--maxWorkers N`). */
function maxWorkersFromArgv(argv: string[]): number | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = a.startsWith('--maxWorkers=') ? a.slice('--maxWorkers='.length) : a === '--maxWorkers' ? argv[i + 1] : undefined;
    if (v !== undefined && /^\d+$/.test(v) && Number(v) > 0) return Number(v);
  }
  return undefined;
}

export default defineConfig({
  test: {
    // First: dist/ rebuilt from src/ when older (the tests run the built CLI), so a single
    // `npx vitest run test/x.test.ts` after an edit tests the edit. Then the leak check: the run fails
    // when a test leaves a process or a todeval-* temp folder behind (see the file). Each project
    // lists both (they run once per run whatever the projects).
    globalSetup: ['./test/helpers/build-setup.ts', './test/leaks/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // CI has two cores; model-backed suites each hold an ONNX session. A third worker because several
    // suites mostly wait (servers, the CLI's child processes) while their child processes, not the
    // worker, use the CPU: with two, such a suite idles a core. The system project's threads take
    // the same number again, beside these.
    maxWorkers: 3,
    // As many as maxWorkers: tinypool removes a worker idle beyond minWorkers at once (idleTimeout 0),
    // and with the forks reused (below) that removal races the next file's start ("Terminating worker
    // thread", an unhandled rejection that fails the run).
    // `--maxWorkers=N` on the command line (e.g. one file at a time in the edit loop) lowers this too:
    // tinypool refuses a minimum above the maximum.
    minWorkers: Math.min(3, maxWorkersFromArgv(process.argv) ?? 3),
    // The main project's forks are reused from one test file to the next: a file still gets its own
    // module registry (the project's `isolate`, below, resets it before each file, so a helper's
    // module state and hooks are per file as before), but not a process start, vitest's runtime
    // and the native and node_modules packages (onnxruntime, Fastify, Vega) loaded again. That was
    // about 0.4 CPU-s a file of the run's collect/prepare time. The suites leave no process-wide
    // state behind them (env stubs undone in afterEach, spies restored, no chdir, no vi.mock).
    poolOptions: { forks: { isolate: false } },
    // The event-loop-lag monitor: warns under a test that holds its worker's loop for >= 3 s of CPU
    // in one piece, fails it at >= 10 s, and reports every stretch when TODEVAL_LAG_REPORT=<path>.
    setupFiles: ['./test/helpers/event-loop-lag.ts'],
    reporters: ['default', './test/helpers/plain-summary-reporter.ts'],
    // The longest files first, from the last run's durations or, on a clean clone (CI), from a list of
    // one CI run's (see the file): a long file started last sets the run's wall time.
    sequence: { sequencer: LongestFirstSequencer },
    // Commands run by tests have no terminal, so they would print a progress line every 30 s: on a
    // loaded CI box that lands in stderr assertions. Tests of the lines set their own interval.
    env: { TODEVAL_PROGRESS_SECONDS: '86400' },
    projects: [
      {
        extends: true,
        // The main project's tests import the sources through dist/, compiled (see TESTS_IMPORT_DIST).
        resolve: { alias: WATCHING ? [] : [TESTS_IMPORT_DIST] },
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: SYSTEM_SUITES,
          pool: 'forks',
          poolOptions: { forks: { isolate: true } },
          server: { deps: { external: WATCHING ? [] : [DIST_SRC] } },
        },
      },
      {
        extends: true,
        resolve: { alias: WATCHING ? [] : [TESTS_IMPORT_DIST] },
        test: { name: 'system', include: SYSTEM_SUITES, pool: 'threads', server: { deps: { external: WATCHING ? [] : [DIST_SRC] } } },
      },
    ],
  },
});
