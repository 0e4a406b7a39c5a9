import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe, type ServeProcess } from '../scripts/lib/serve-process.js';
import { createNliRunner, type NliRunner } from '../src/nli/runner.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import type { NliPair, NliProbs } from '../src/nli/types.js';
import { buildShapeFaultModel, injectThreadFault, injectTokenizerFault, shapeFaultRuns } from './helpers/faults.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { suiteTempDir, tempDir } from './helpers/temp.js';
import { getTinyModelDir } from './helpers/tiny-model.js';
import { SAMPLE_PAIRS } from './nli-fixtures.js';

// The NLI runner's failure paths, each with a real fault (test/helpers/faults.ts): a model that fails
// on some batch shapes, a tokenizer that throws on one text, the inference thread dying while runs
// are out, a worker thread that exits before it is ready. The rule under test: every failure reaches
// every call waiting on it, and close() always returns. Every wait is bounded (`within`), so a hang
// fails the test instead of blocking the run.

const quiet = () => {};

/** `promise`, or a rejection saying it hung once `ms` pass. */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hung: ${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer));
}

/** A runner's score() as the contract says it behaves: a promise, even when it fails at once. */
function scoreCall(runner: NliRunner, pairs: NliPair[], syncThrows: unknown[]): Promise<NliProbs[]> {
  try {
    return runner.score(pairs);
  } catch (e) {
    syncThrows.push(e);
    return Promise.reject(e);
  }
}

const settle = <T,>(ps: Promise<T>[]) => Promise.allSettled(ps);
const reasonOf = (r: PromiseSettledResult<unknown>) => (r.status === 'rejected' ? String((r.reason as Error)?.message ?? r.reason) : 'fulfilled');

/** Row length of a pair under the shipped tokenizer (no truncation at these lengths). */
function rowLength(tokenizer: PairTokenizer, p: NliPair): number {
  return tokenizer.ids(p.premise).length + tokenizer.ids(p.hypothesis).length + tokenizer.pairEncoding.specials;
}

/** Pairs of growing length: some rows a multiple of 7 tokens long, most not. */
function shapePairs(tokenizer: PairTokenizer): { pair: NliPair; runs: boolean }[] {
  const out: { pair: NliPair; runs: boolean }[] = [];
  for (let k = 1; k <= 14; k++) {
    const pair = { premise: Array.from({ length: k }, (_, i) => `word${i}`).join(' '), hypothesis: 'The city is Seattle.' };
    out.push({ pair, runs: shapeFaultRuns(1, rowLength(tokenizer, pair)) });
  }
  return out;
}

function loadTokenizer(dir: string): PairTokenizer {
  const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  return PairTokenizer.fromFiles(path.join(dir, 'tokenizer.json'), path.join(dir, 'tokenizer_config.json'), config);
}

describe('NLI runner faults (library): every failure reaches its callers, close() returns', () => {
  let shapeModel = '';
  let tiny = '';
  let tokenizer: PairTokenizer;
  beforeAll(async () => {
    shapeModel = buildShapeFaultModel(path.join(tempDir('shape-model'), 'model'));
    tiny = await getTinyModelDir();
    tokenizer = loadTokenizer(shapeModel);
  }, 300_000);

  for (const sessionThread of [true, false]) {
    it(`a model that fails on some batch shapes only: those calls get ONNX Runtime's error, the others their results (session thread: ${sessionThread})`, async () => {
      const runner = await createNliRunner({ model: shapeModel, device: 'cpu', threads: 1, maxBatchSize: 1, sessionThread, notice: quiet });
      try {
        const cases = shapePairs(tokenizer);
        // Both kinds are present, so the assertions below can fail either way.
        expect(cases.some((c) => c.runs)).toBe(true);
        expect(cases.some((c) => !c.runs)).toBe(true);
        const syncThrows: unknown[] = [];
        const results = await within(60_000, settle(cases.map((c) => scoreCall(runner, [c.pair], syncThrows))), 'the calls');
        expect(syncThrows).toEqual([]);
        results.forEach((r, i) => {
          if (cases[i].runs) expect(r.status).toBe('fulfilled');
          else expect(reasonOf(r)).toMatch(/Reshape/);
        });
        // A failed pair is neither cached nor left in flight: asked again, it fails again.
        const failing = cases.find((c) => !c.runs)!;
        await expect(within(30_000, scoreCall(runner, [failing.pair], syncThrows), 'the retry')).rejects.toThrow(/Reshape/);
        // A call mixing both, in one batch of several rows, fails as a whole and names the error.
        await expect(within(30_000, scoreCall(runner, cases.slice(0, 3).map((c) => c.pair), syncThrows), 'a mixed call')).rejects.toThrow(/Reshape/);
      } finally {
        await within(20_000, runner.close(), 'close()');
      }
    });
  }

  for (const tokenizerThreads of [0, 2]) {
    it(`a tokenizer that throws on one text: the calls holding it fail, later and other calls are answered (tokenizer threads: ${tokenizerThreads})`, async () => {
      const undo = injectTokenizerFault('UNENCODABLE');
      let runner: NliRunner | undefined;
      try {
        runner = await createNliRunner({ model: tiny, device: 'cpu', threads: 1, tokenizerThreads, notice: quiet });
        const bad = { premise: 'UNENCODABLE premise text', hypothesis: 'The city is Seattle.' };
        const syncThrows: unknown[] = [];
        const calls = [
          scoreCall(runner, SAMPLE_PAIRS.slice(0, 3), syncThrows),
          scoreCall(runner, [SAMPLE_PAIRS[3], bad], syncThrows),
          scoreCall(runner, [bad, SAMPLE_PAIRS[4]], syncThrows),
          scoreCall(runner, SAMPLE_PAIRS.slice(5), syncThrows),
        ];
        const first = await within(30_000, settle(calls), 'the first calls');
        expect(first.map(reasonOf)).toEqual(['fulfilled', expect.stringMatching(/cannot encode/), expect.stringMatching(/cannot encode/), 'fulfilled']);
        // The same bad pair again, alone and beside good pairs, and then good pairs only.
        const later = await within(30_000, settle([scoreCall(runner, [bad], syncThrows), scoreCall(runner, [SAMPLE_PAIRS[0], bad], syncThrows), scoreCall(runner, SAMPLE_PAIRS, syncThrows)]), 'the later calls');
        expect(later.map(reasonOf)).toEqual([expect.stringMatching(/cannot encode/), expect.stringMatching(/cannot encode/), 'fulfilled']);
        // score() answers with a promise, never a synchronous throw.
        expect(syncThrows).toEqual([]);
      } finally {
        undo();
        if (runner) await within(20_000, runner.close(), 'close()');
      }
    });
  }

  it('the inference thread dying mid-run: every waiting call fails naming it, later calls fail at once, close() returns', async () => {
    const undo = injectThreadFault({ kind: 'die-at-run', module: 'session-worker', run: 3 });
    let runner: NliRunner | undefined;
    try {
      runner = await createNliRunner({ model: tiny, device: 'cpu', threads: 1, maxBatchSize: 1, notice: quiet });
      const syncThrows: unknown[] = [];
      const results = await within(60_000, settle(SAMPLE_PAIRS.map((p) => scoreCall(runner!, [p], syncThrows))), 'the calls');
      const reasons = results.map(reasonOf);
      // Runs 1 and 2 were answered; the third and every one after it waited on a thread that is gone.
      expect(reasons.filter((r) => r === 'fulfilled')).toHaveLength(2);
      for (const r of reasons.filter((x) => x !== 'fulfilled')) expect(r).toMatch(/inference thread exited \(code 1\)/);
      await expect(within(10_000, scoreCall(runner, [{ premise: 'a fresh pair', hypothesis: 'never seen' }], syncThrows), 'a call after the death')).rejects.toThrow(/inference thread exited/);
      expect(syncThrows).toEqual([]);
    } finally {
      undo();
      if (runner) await within(20_000, runner.close(), 'close()');
    }
  });

  for (const module of ['session-worker', 'tokenizer-worker']) {
    it(`a ${module} thread that exits before it is ready: opening the runner fails naming it`, async () => {
      const undo = injectThreadFault({ kind: 'exit-before-ready', module });
      try {
        const opening = createNliRunner({ model: tiny, device: 'cpu', threads: 1, tokenizerThreads: 2, notice: quiet });
        const what = module === 'session-worker' ? 'inference' : 'tokenizer';
        await expect(within(60_000, opening, 'createNliRunner')).rejects.toThrow(new RegExp(`${what} thread exited \\(code 0\\) before it was ready`));
      } finally {
        undo();
      }
    });
  }
});

interface Outcome {
  code: number | null;
  stderr: string;
  hung: boolean;
  /** The process group was gone once the command exited (nothing it started lives on). */
  groupGone: boolean;
}

/**
 * The children here are the built CLI (bin/todeval.js over dist/, as users run it) with a plain
 * JavaScript preload that installs the fault (test/helpers/fault-preload.mjs): nothing is compiled at
 * their start, and their worker threads start from dist/ too.
 */
const FAULT_PRELOAD = './test/helpers/fault-preload.mjs';

/** `todeval ARGS` (the built CLI) with $TODEVAL_TEST_FAULT installed; killed (and reported hung) past `ms`. */
function runWithFault(args: string[], fault: string | undefined, ms: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const env = { ...process.env, TODEVAL_TEST_FAULT: fault ?? '' };
    const child = spawn(process.execPath, ['--import', FAULT_PRELOAD, 'bin/todeval.js', ...args], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let hung = false;
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    };
    const timer = setTimeout(() => {
      hung = true;
      kill();
    }, ms);
    const groupAlive = () => {
      try {
        process.kill(-child.pid!, 0);
        return true;
      } catch {
        return false; // ESRCH: no process of the group is left
      }
    };
    child.on('close', async (code) => {
      clearTimeout(timer);
      // A child of the command (none is expected) may leave a moment after it: 5 s at most.
      for (let i = 0; i < 50 && groupAlive(); i++) await new Promise((r) => setTimeout(r, 100));
      const groupGone = !groupAlive();
      kill();
      resolve({ code, stderr, hung, groupGone });
    });
  });
}

/** Every line of a JSONL output is whole: what a failed run leaves is resumable, never half a record. */
function expectWholeLines(file: string): void {
  if (!existsSync(file)) return;
  const text = readFileSync(file, 'utf8');
  if (text === '') return;
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.trimEnd().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
}

const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))('NLI faults through the CLI and serve (tiny models, dialogues_017)', () => {
  const dir = suiteTempDir('nli-faults');
  let shapeModel = '';
  let tiny = '';
  let marker = '';
  beforeAll(async () => {
    shapeModel = buildShapeFaultModel(path.join(dir, 'shape-model'));
    tiny = await getTinyModelDir();
    // The first system utterance of the file: a text the score run below needs early on.
    const dialogues = JSON.parse(readFileSync(DIALOGUES, 'utf8')) as { turns: { speaker: string; utterance: string }[] }[];
    marker = dialogues[0].turns.find((t) => t.speaker === 'SYSTEM')!.utterance.slice(0, 24);
  }, 300_000);

  const score = (model: string, out: string) => ['score', '--dataset', 'sgd', '--data-dir', DATA_DIR, '--dialogues', DIALOGUES, '--limit', '6', '--model', model, '--device', 'cpu', '--turns', out];

  // A model failure is its own kind (exit 3, docs/cli-conventions.md): one line naming the model and
  // the batch shape, ORT's own coloured log quiet. The others stay what they were (exit 2).
  const cases: { name: string; model: () => string; fault: () => string | undefined; error: RegExp; code?: number; oneLine?: boolean }[] = [
    {
      name: 'a model that fails on some batch shapes',
      model: () => shapeModel,
      fault: () => undefined,
      error: /exit 3: todeval: model local:shape-model failed on a batch of \d+ pairs? x \d+ tokens: .*Reshape.*cannot be reshaped/,
      code: 3,
      oneLine: true,
    },
    { name: 'a tokenizer that throws on one text', model: () => tiny, fault: () => `tokenizer:${marker}`, error: /cannot encode/ },
    { name: 'the inference thread dying mid-run', model: () => tiny, fault: () => 'session-worker:die-at-run:3', error: /inference thread exited \(code 1\)/ },
    { name: 'the inference thread exiting before it is ready', model: () => tiny, fault: () => 'session-worker:exit-before-ready', error: /inference thread exited \(code 0\) before it was ready/ },
  ];
  for (const c of cases) {
    it(`score under ${c.name}: one line naming the error, its exit code, whole lines only, no process left`, async () => {
      const sub = path.join(dir, c.name.replace(/\W+/g, '-'));
      mkdirSync(sub, { recursive: true });
      const out = path.join(sub, 'turns.jsonl');
      const r = await runWithFault([...score(c.model(), out)], c.fault(), 120_000);
      expect(r.hung, r.stderr).toBe(false);
      expect(`exit ${r.code}: ${r.stderr}`).toMatch(c.error);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.code).toBe(c.code ?? 2);
      if (c.oneLine) expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.groupGone).toBe(true);
      expectWholeLines(out);
      // Nothing but the per-turn file and its references (what a resumed run starts from) is left where the run wrote.
      if (existsSync(sub)) for (const f of readdirSync(sub)) expect(f).toMatch(/^turns\.(references\.)?jsonl$/);
    }, 180_000);
  }

  describe('serve keeps answering', () => {
    const servers: ServeProcess[] = [];
    afterAll(async () => {
      for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
      await Promise.all(servers.map((s) => s.exited));
    });
    const start = async (model: string, fault?: string): Promise<ServeProcess> => {
      const s = await spawnServe(['--model', model, '--device', 'cpu', '--data-dir', DATA_DIR, '--dialogues', DIALOGUES, '--timeout-ms', '30000', '--log-level', 'silent'], { TODEVAL_TEST_FAULT: fault ?? '' }, 120_000, { built: true, imports: [FAULT_PRELOAD] });
      servers.push(s);
      return s;
    };
    const nli = async (s: ServeProcess, pairs: NliPair[]): Promise<number> => {
      const res = await within(45_000, fetch(`${s.url}/v1/nli`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pairs }) }), 'a request');
      await res.text();
      return res.status;
    };

    it('a model that fails on some batch shapes: those requests 500, the others 200', async () => {
      const s = await start(shapeModel);
      const cases = shapePairs(loadTokenizer(shapeModel)).slice(0, 8);
      const statuses: number[] = [];
      for (const c of cases) statuses.push(await nli(s, [c.pair]));
      expect(statuses).toEqual(cases.map((c) => (c.runs ? 200 : 500)));
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      expect(await s.stop()).toBe(0);
    }, 240_000);

    it('a model failing requests in a row: /readyz 503 and /healthz "degraded" after --degraded-after of them, ready again at the next answer', async () => {
      const s = await start(shapeModel);
      const cases = shapePairs(loadTokenizer(shapeModel));
      const failing = cases.filter((c) => !c.runs).map((c) => c.pair);
      const running = cases.filter((c) => c.runs).map((c) => c.pair);
      expect(failing.length).toBeGreaterThanOrEqual(3);
      expect(running.length).toBeGreaterThanOrEqual(1);
      const probe = async () => {
        const ready = await fetch(`${s.url}/readyz`);
        const health = (await (await fetch(`${s.url}/healthz`)).json()) as { status: string };
        const metrics = await (await fetch(`${s.url}/metrics`)).text();
        return { ready: ready.status, readyBody: (await ready.json()) as { status: string }, health: health.status, gauge: /^todeval_ready (\d)/m.exec(metrics)?.[1], failures: /^todeval_model_failures_total (\d+)/m.exec(metrics)?.[1] };
      };
      expect(await probe()).toMatchObject({ ready: 200, health: 'ok', gauge: '1', failures: '0' });
      // Two failures (the default --degraded-after is 3): still ready.
      expect([await nli(s, [failing[0]]), await nli(s, [failing[1]])]).toEqual([500, 500]);
      expect(await probe()).toMatchObject({ ready: 200, health: 'ok', gauge: '1', failures: '2' });
      expect(await nli(s, [failing[2]])).toBe(500);
      expect(await probe()).toMatchObject({ ready: 503, readyBody: { status: 'degraded' }, health: 'degraded', gauge: '0', failures: '3' });
      // The model answers again: ready at once.
      expect(await nli(s, [running[0]])).toBe(200);
      expect(await probe()).toMatchObject({ ready: 200, health: 'ok', gauge: '1', failures: '3' });
      expect(await s.stop()).toBe(0);
    }, 240_000);

    it('a tokenizer that throws on one text: those requests 500 each time, the others 200', async () => {
      const s = await start(tiny, 'tokenizer:UNENCODABLE');
      const bad = { premise: 'UNENCODABLE premise text', hypothesis: 'The city is Seattle.' };
      const statuses = [await nli(s, [bad]), await nli(s, SAMPLE_PAIRS.slice(0, 3)), await nli(s, [bad, SAMPLE_PAIRS[4]]), await nli(s, SAMPLE_PAIRS)];
      expect(statuses).toEqual([500, 200, 500, 200]);
      expect(await s.stop()).toBe(0);
    }, 240_000);

    it('the inference thread dying: the requests it had fail (500/503), later ones are served by a new thread', async () => {
      const s = await start(tiny, 'session-worker:die-at-run:2');
      const first = await nli(s, SAMPLE_PAIRS.slice(0, 1));
      const second = await nli(s, SAMPLE_PAIRS.slice(1, 2));
      const later = [await nli(s, SAMPLE_PAIRS.slice(2, 4)), await nli(s, SAMPLE_PAIRS.slice(4, 6))];
      expect(first).toBe(200);
      expect([500, 503]).toContain(second);
      expect(later).toEqual([200, 200]);
      expect(await s.stop()).toBe(0);
    }, 240_000);
  });
});
