import { execFile, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe, type ServeProcess } from '../scripts/lib/serve-process.js';
import { BUILT_CLI } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

// The Python package (python/) tested by its own unittest suite (python/tests), started from here
// so that `npm test` runs it; the servers the client tests talk to are real `todeval serve`
// processes on loopback, started as users start them (node bin/todeval.js serve).

/** A Python interpreter >= 3.9 by that name, or undefined. */
function python(name: string): string | undefined {
  const r = spawnSync(name, ['-c', 'import sys; print(sys.version_info >= (3, 9))'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() === 'True' ? name : undefined;
}

const PYTHON = python('python3');
if (!PYTHON) console.warn('[skip] no python3 >= 3.9 on PATH: the Python package tests (python/tests) are skipped');
const PYTHON39 = PYTHON && python('python3.9');
if (PYTHON && !PYTHON39) console.warn('[skip] no python3.9 on PATH: the package is tested on python3 only (its oldest supported Python is 3.9)');

const TOKEN = 'test-token-0123456789abcdef';
const OVERLOAD_PENDING = 400;

interface UnittestRun {
  code: number;
  output: string;
  ran: number;
  skipped: string[];
}

function unittest(interpreter: string, modules: string[], env: NodeJS.ProcessEnv): Promise<UnittestRun> {
  return new Promise((resolve) => {
    execFile(
      interpreter,
      ['-m', 'unittest', '-v', ...modules],
      {
        cwd: REPO_ROOT,
        maxBuffer: 1 << 24,
        env: {
          ...process.env,
          PYTHONPATH: [path.join(REPO_ROOT, 'python'), path.join(REPO_ROOT, 'python', 'tests')].join(path.delimiter),
          PYTHONDONTWRITEBYTECODE: '1', // no __pycache__ left in the checkout
          TODEVAL_BIN: BUILT_CLI,
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const output = stdout + stderr;
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          output,
          ran: Number(/^Ran (\d+) tests? in/m.exec(output)?.[1] ?? 0),
          skipped: [...output.matchAll(/\.\.\. skipped '(.*)'$/gm)].map((m) => m[1]),
        });
      },
    );
  });
}

/** The run passed, ran at least `min` tests, and skipped none (a skip here would hide a test that no longer runs). */
function expectPassed(r: UnittestRun, min: number): void {
  expect(r.code, r.output).toBe(0);
  expect(r.ran, r.output).toBeGreaterThanOrEqual(min);
  expect(r.skipped, r.output).toEqual([]);
}

describe.skipIf(!PYTHON || !hasData('sgd', 'test', 'dialogues_017.json'))(
  'the todeval Python package (python3 -m unittest python/tests)',
  () => {
    let main: ServeProcess | undefined;
    let overload: ServeProcess | undefined;
    let env: NodeJS.ProcessEnv = {};

    beforeAll(async () => {
      const lexical = getLexicalStandinDir();
      const data = ['--data-dir', DATA_DIR, '--dialogues', path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json'), '--device', 'cpu', '--threads', '1', '--log-level', 'warn'];
      try {
        [main, overload] = await Promise.all([
          // The lexical stand-in (real choices in the examples), a token, three items per request.
          spawnServe(['--model', lexical, ...data, '--max-items', '3'], { TODEVAL_TOKEN: TOKEN }, 120_000, { built: true }),
          // The tiny model one pair at a time: a request of OVERLOAD_PENDING long pairs holds the
          // whole admission budget for about a second, so the next request is refused (503).
          spawnServe(['--model', await getTinyModelDir(), ...data, '--batch-size', '1', '--max-pending-pairs', String(OVERLOAD_PENDING)], { TODEVAL_TOKEN: undefined }, 120_000, { built: true }),
        ]);
      } catch (e) {
        await Promise.all([main?.stop(), overload?.stop()]);
        throw e;
      }
      env = {
        TODEVAL_TEST_URL: main.url,
        TODEVAL_TEST_TOKEN: TOKEN,
        TODEVAL_TEST_OVERLOAD_URL: overload.url,
        TODEVAL_TEST_OVERLOAD_PENDING: String(OVERLOAD_PENDING),
        TODEVAL_TEST_MODEL: lexical,
        TODEVAL_DATA: DATA_DIR,
      };
    }, 180_000);

    afterAll(async () => {
      await Promise.all([main?.stop(), overload?.stop()]);
    });

    it('finds the CLI in the documented order and raises its one-line errors (fake CLIs)', async () => {
      expectPassed(await unittest(PYTHON!, ['test_cli'], env), 8);
    });

    it.skipIf(!hasData('multiwoz', 'predictions', 'lava.json'))(
      "mwzeval shim: the five systems' numbers equal `todeval evaluate --json`; keys and nesting are mwzeval's",
      async () => {
        const r = await unittest(PYTHON!, ['test_mwzeval'], env);
        expectPassed(r, 10);
        expect(r.output).toMatch(/test_numbers_equal_todeval_evaluate .* \.\.\. ok$/m);
        expect(r.output).toMatch(/test_sgsacc_section_equals_the_clis .* \.\.\. ok$/m);
        // confidence=True and compare() against `evaluate --confidence --json` and `compare --json`.
        expect(r.output).toMatch(/test_confidence .* \.\.\. ok$/m);
        expect(r.output).toMatch(/test_compare .* \.\.\. ok$/m);
      },
      300_000,
    );

    it('client against live servers: 401, 400 with its message, splitting, 413 halves, a real 503 retried', async () => {
      const r = await unittest(PYTHON!, ['test_client'], env);
      expectPassed(r, 12);
      expect(r.skipped).toEqual([]);
      expect(r.output).toMatch(/test_503_is_retried_after_retry_after .* \.\.\. ok$/m);
    }, 300_000);

    it.skipIf(!hasData('multiwoz', 'predictions', 'damd.json'))(
      'examples/python (epoch loop, generation loop) and the Python blocks of docs/python.md and docs/serve.md',
      async () => {
        const r = await unittest(PYTHON!, ['test_examples'], env);
        expectPassed(r, 5);
        expect(r.skipped).toEqual([]);
      },
      300_000,
    );

    it.skipIf(!PYTHON39)('on Python 3.9 too: the package, its tests and the examples import; the CLI and client tests pass', async () => {
      const list = (dir: string) => readdirSync(path.join(REPO_ROOT, dir)).filter((f) => f.endsWith('.py'));
      const modules = list('python/todeval').map((f) => `todeval.${f.slice(0, -3)}`.replace('.__init__', ''));
      const scripts = ['python/tests', 'examples/python'].flatMap((dir) => list(dir).map((f) => path.join(dir, f)));
      expect(modules.length + scripts.length).toBeGreaterThanOrEqual(13);
      // Imported, not only parsed: annotations such as `int | None` fail on 3.9 only when evaluated.
      const load = [
        'import importlib, importlib.util, sys',
        `for m in ${JSON.stringify(modules)}: importlib.import_module(m)`,
        'for f in sys.argv[1:]:',
        '    spec = importlib.util.spec_from_file_location("m_" + str(abs(hash(f))), f)',
        '    spec.loader.exec_module(importlib.util.module_from_spec(spec))',
      ].join('\n');
      const compiled = spawnSync(PYTHON39!, ['-c', load, ...scripts], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, PYTHONPATH: ['python', 'python/tests'].join(path.delimiter), PYTHONDONTWRITEBYTECODE: '1' } });
      expect(compiled.status, compiled.stderr).toBe(0);
      const r = await unittest(PYTHON39!, ['test_cli', 'test_client'], env);
      expectPassed(r, 20);
      expect(r.skipped).toEqual([]);
    }, 300_000);
  },
);
