import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe, type ServeProcess } from '../scripts/lib/serve-process.js';
import { BUILT_CLI, runProcess } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { getTinyModelDir } from './helpers/tiny-model.js';
import { runInGroup } from './helpers/process-group.js';
import { suiteTempDir } from './helpers/temp.js';

// The Python package (python/) tested by its own unittest suite (python/tests), started from here
// so that `npm test` runs it; the servers the client tests talk to are real `todeval serve`
// processes on loopback, started as users start them (node bin/todeval.js serve).

/** A Python interpreter >= 3.9 by that name, or undefined. */
async function python(name: string): Promise<string | undefined> {
  const r = await runProcess(name, ['-c', 'import sys; print(sys.version_info >= (3, 9))']);
  return r.code === 0 && r.stdout.trim() === 'True' ? name : undefined;
}

const PYTHON = await python('python3');
if (!PYTHON) console.warn('[skip] no python3 >= 3.9 on PATH: the Python package tests (python/tests) are skipped');
const PYTHON39 = PYTHON && (await python('python3.9'));
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

// Everything in this file waits on Python and the CLIs it starts, so its suites and cases run
// concurrently, with at most three Python test processes (or pip, or mypy) at once. The cases that
// talk to the live servers take turns: test_client counts a server's requests (/metrics), which
// another module's requests to the same server would change.
const processes = new PQueue({ concurrency: 3 });
const servers = new PQueue({ concurrency: 1 });
const bounded = <T>(run: () => Promise<T>): Promise<T> => processes.add(run);
const onTheServers = <T>(run: () => Promise<T>): Promise<T> => servers.add(() => bounded(run));

/** The run passed, ran at least `min` tests, and skipped none (a skip here would hide a test that no longer runs). */
function expectPassed(r: UnittestRun, min: number): void {
  expect(r.code, r.output).toBe(0);
  expect(r.ran, r.output).toBeGreaterThanOrEqual(min);
  expect(r.skipped, r.output).toEqual([]);
}

describe.skipIf(!PYTHON || !hasData('sgd', 'test', 'dialogues_017.json')).concurrent(
  'the todeval Python package (python3 -m unittest python/tests)',
  () => {
    let main: ServeProcess | undefined;
    let overload: ServeProcess | undefined;
    let big: ServeProcess | undefined;
    let env: NodeJS.ProcessEnv = {};

    beforeAll(async () => {
      const lexical = getLexicalStandinDir();
      const data = ['--data-dir', DATA_DIR, '--dialogues', path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json'), '--device', 'cpu', '--threads', '1', '--log-level', 'warn'];
      try {
        [main, overload, big] = await Promise.all([
          // The lexical stand-in (real choices in the examples), a token, three items per request.
          spawnServe(['--model', lexical, ...data, '--max-items', '3'], { TODEVAL_TOKEN: TOKEN }, 120_000, { built: true }),
          // The tiny model one pair at a time: a request of OVERLOAD_PENDING long pairs holds the
          // whole admission budget for about a second, so the next request is refused (503).
          spawnServe(['--model', await getTinyModelDir(), ...data, '--batch-size', '1', '--max-pending-pairs', String(OVERLOAD_PENDING)], { TODEVAL_TOKEN: undefined }, 120_000, { built: true }),
          // The default limits (1 MiB bodies, 64 items): the large-body tests are about exactly those.
          spawnServe(['--model', lexical, ...data], { TODEVAL_TOKEN: undefined }, 120_000, { built: true }),
        ]);
      } catch (e) {
        await Promise.all([main?.stop(), overload?.stop(), big?.stop()]);
        throw e;
      }
      env = {
        TODEVAL_TEST_URL: main.url,
        TODEVAL_TEST_TOKEN: TOKEN,
        TODEVAL_TEST_OVERLOAD_URL: overload.url,
        TODEVAL_TEST_BIG_URL: big.url,
        TODEVAL_TEST_OVERLOAD_PENDING: String(OVERLOAD_PENDING),
        TODEVAL_TEST_MODEL: lexical,
        TODEVAL_DATA: DATA_DIR,
      };
    }, 180_000);

    afterAll(async () => {
      await Promise.all([main?.stop(), overload?.stop(), big?.stop()]);
    });

    it('finds the CLI in the documented order and raises its one-line errors (fake CLIs)', async () => {
      expectPassed(await bounded(() => unittest(PYTHON!, ['test_cli'], env)), 21);
    }, 600_000);

    it.skipIf(!hasData('multiwoz', 'predictions', 'lava.json'))(
      "mwzeval shim: the five systems' numbers equal `todeval evaluate --json`; keys and nesting are mwzeval's",
      async () => {
        const r = await bounded(() => unittest(PYTHON!, ['test_mwzeval'], env));
        expectPassed(r, 14);
        expect(r.output).toMatch(/test_numbers_equal_todeval_evaluate .* \.\.\. ok$/m);
        // mwzeval's import path, chrF/TER equal to `evaluate --chrf --ter`, errors naming data_dir.
        expect(r.output).toMatch(/test_mwzevals_import_path_and_the_short_one_are_the_same_class .* \.\.\. ok$/m);
        expect(r.output).toMatch(/test_chrf_and_ter_equal_the_clis .* \.\.\. ok$/m);
        expect(r.output).toMatch(/test_no_data_dir_names_data_dir_not_the_clis_flag .* \.\.\. ok$/m);
        expect(r.output).toMatch(/test_sgsacc_section_equals_the_clis .* \.\.\. ok$/m);
        // confidence=True and compare() against `evaluate --confidence --json` and `compare --json`.
        expect(r.output).toMatch(/test_confidence .* \.\.\. ok$/m);
        expect(r.output).toMatch(/test_compare .* \.\.\. ok$/m);
      },
      600_000,
    );

    it('client against live servers: 401, 400 with its message, splitting, 413 halves, a real 503 retried', async () => {
      const r = await onTheServers(() => unittest(PYTHON!, ['test_client'], env));
      expectPassed(r, 12);
      expect(r.skipped).toEqual([]);
      expect(r.output).toMatch(/test_503_is_retried_after_retry_after .* \.\.\. ok$/m);
    }, 600_000);

    it.skipIf(!hasData('multiwoz', 'predictions', 'damd.json'))(
      'examples/python (epoch loop, generation loop) and the Python blocks of docs/python.md and docs/serve.md',
      async () => {
        const r = await onTheServers(() => unittest(PYTHON!, ['test_examples'], env));
        expectPassed(r, 5);
        expect(r.skipped).toEqual([]);
      },
      600_000,
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
      const compiled = await runProcess(PYTHON39!, ['-c', load, ...scripts], { cwd: REPO_ROOT, env: { ...process.env, PYTHONPATH: ['python', 'python/tests'].join(path.delimiter), PYTHONDONTWRITEBYTECODE: '1' } });
      expect(compiled.code, compiled.stderr).toBe(0);
      const r = await onTheServers(() => unittest(PYTHON39!, ['test_cli', 'test_client'], env));
      expectPassed(r, 46);
      expect(r.skipped).toEqual([]);
    }, 600_000);
  },
);

/**
 * A command run without blocking the test worker (a spawnSync of tens of seconds on a loaded box
 * keeps vitest's worker from answering its RPC in time); never rejects.
 */
function runAsync(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { ...opts, maxBuffer: 1 << 26, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Whether `python3 -m venv` can make a venv with pip here (Debian splits it into python3-venv). */
async function canMakeVenv(): Promise<boolean> {
  const r = await runProcess(PYTHON ?? 'python3', ['-c', 'import venv, ensurepip']);
  return r.code === 0;
}
const CAN_MAKE_VENV = await canMakeVenv();

const FRESH_DATA = hasData('multiwoz', 'predictions', 'damd.json');
if (PYTHON && !CAN_MAKE_VENV) console.warn('[skip] python3 cannot make a venv with pip (Debian: apt-get install python3-venv): the fresh-venv install test is skipped');
if (PYTHON && !FRESH_DATA) console.warn(`[skip] no ${path.join(DATA_DIR, 'multiwoz', 'predictions', 'damd.json')}: the fresh-venv install test is skipped`);

describe.skipIf(!PYTHON || !CAN_MAKE_VENV || !FRESH_DATA).concurrent('pip install ./python in a fresh venv, offline', () => {
  const dir = suiteTempDir('python-venv');

  it('from another folder, with no environment variable set, Evaluator finds the CLI the package came with and scores DAMD as the CLI does', () => bounded(async () => {
    const venv = path.join(dir, 'venv');
    const python = path.join(venv, 'bin', 'python');
    // No TODEVAL_*, no PYTHONPATH, and no node_modules/.bin on PATH (npm test puts ours there): the
    // CLI must be found as the package's own, not by chance.
    const env: NodeJS.ProcessEnv = {
      PATH: (process.env.PATH ?? '').split(path.delimiter).filter((p) => !p.includes('node_modules')).join(path.delimiter),
      HOME: dir,
      LANG: 'C.UTF-8',
      PIP_NO_INDEX: '1', // offline: nothing may come from a package index
      PIP_DISABLE_PIP_VERSION_CHECK: '1',
      PYTHONDONTWRITEBYTECODE: '1',
    };
    await runInGroup(PYTHON!, ['-m', 'venv', venv], { cwd: dir, env, timeoutMs: 240_000 });
    await runInGroup(path.join(venv, 'bin', 'pip'), ['install', path.join(REPO_ROOT, 'python')], { cwd: dir, env, timeoutMs: 240_000 });
    const damd = path.join(DATA_DIR, 'multiwoz', 'predictions', 'damd.json');
    const script = [
      'import json, sys',
      'from todeval.mwzeval import Evaluator',
      'from todeval.cli import find_cli',
      'e = Evaluator(bleu=True, success=True, richness=True, data_dir=sys.argv[2])',
      'r = e.evaluate(sys.argv[1])',
      'print(json.dumps({"cli": find_cli(), "module": __import__("todeval").__file__, "bleu": r["bleu"], "success": r["success"], "richness": r["richness"]}))',
    ].join('\n');
    const other = path.join(dir, 'elsewhere');
    mkdirSync(other);
    const ran = await runInGroup(python, ['-c', script, damd, DATA_DIR], { cwd: other, env, timeoutMs: 240_000 });
    const got = JSON.parse(ran.stdout) as { cli: string[]; module: string; bleu: unknown; success: unknown; richness: Record<string, unknown> };
    // Imported from the venv, not the checkout; running the checkout's CLI under node.
    expect(got.module.startsWith(venv)).toBe(true);
    expect(got.cli.slice(1)).toEqual([path.join(REPO_ROOT, 'bin', 'todeval.js')]);
    const direct = await runAsync(process.execPath, [BUILT_CLI, 'evaluate', '-i', damd, '--bleu', '--success', '--richness', '--json', '--data-dir', DATA_DIR]);
    expect(direct.status, direct.stderr).toBe(0);
    const report = JSON.parse(direct.stdout) as { bleu: unknown; success: { inform: unknown; success: unknown }; richness: Record<string, unknown> };
    expect(got.bleu).toEqual(report.bleu);
    expect(got.success).toEqual({ inform: report.success.inform, success: report.success.success });
    for (const [k, v] of Object.entries(got.richness)) expect(v, k).toEqual(report.richness[k]);
  }), 600_000);
});

/** An interpreter that has mypy (Debian's python3-mypy installs it for /usr/bin/python3), or undefined. */
async function mypyPython(): Promise<string | undefined> {
  for (const name of ['python3', '/usr/bin/python3']) {
    if ((await runProcess(name, ['-m', 'mypy', '--version'])).code === 0) return name;
  }
  return undefined;
}

const MYPY = PYTHON ? await mypyPython() : undefined;
if (PYTHON && !MYPY) console.warn('[skip] no mypy (Debian: apt-get install python3-mypy): the package is not type-checked');

describe.skipIf(!MYPY).concurrent('mypy --strict', () => {
  it('reports nothing in the package (python/todeval)', async () => {
    const r = await bounded(() => runAsync(MYPY!, ['-m', 'mypy', '--strict', '--no-incremental', '--cache-dir', '/dev/null', '-p', 'todeval'], { cwd: path.join(REPO_ROOT, 'python') }));
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Success: no issues found/m);
  }, 300_000);
});

