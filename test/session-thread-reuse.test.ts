import path from 'node:path';
import type { WorkerOptions } from 'node:worker_threads';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeIdleInferenceThreads, SessionThread } from '../src/nli/session-thread.js';
import { runProcess } from './helpers/cli.js';
import { replaceWorkerClass } from './helpers/fault-inject.mjs';
import { REPO_ROOT } from './helpers/shared.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

// A released session's inference thread is kept (at most two a process, no model in it) and the next
// session opens on it: what it computes must not depend on whether its thread is new.

/** Counts the inference threads started from now on (every module's `new Worker`); returns the count and the undo. */
function countInferenceThreads(): { started: () => number; undo: () => void } {
  let started = 0;
  const undo = replaceWorkerClass(
    (Original) =>
      class CountingWorker extends Original {
        constructor(code: string | URL, options?: WorkerOptions) {
          if (String(code).includes('session-worker.')) started++;
          super(code, options);
        }
      },
  );
  return { started: () => started, undo };
}

const batch = (rows: number) => {
  const width = 12;
  return {
    rows,
    width,
    inputIds: BigInt64Array.from({ length: rows * width }, (_, i) => BigInt(i % width === 0 ? 0 : i % width === width - 1 ? 2 : 4 + ((i * 7) % 90))),
    attentionMask: new BigInt64Array(rows * width).fill(1n),
  };
};

describe('inference threads kept for the next session', () => {
  let onnx = '';
  beforeAll(async () => {
    onnx = path.join(await getTinyModelDir(), 'onnx', 'model.onnx');
  }, 300_000);
  afterEach(() => closeIdleInferenceThreads());

  it('sessions opened one after another run on one thread and give the logits a new thread gives', async () => {
    await closeIdleInferenceThreads();
    const count = countInferenceThreads();
    try {
      const logits: Float32Array[] = [];
      for (let i = 0; i < 3; i++) {
        const s = await SessionThread.open(onnx, { device: 'cpu', threads: 1 });
        logits.push(await s.run(batch(5)));
        await s.release();
      }
      expect(count.started()).toBe(1);
      // Ended: the next session starts a thread of its own.
      await closeIdleInferenceThreads();
      const fresh = await SessionThread.open(onnx, { device: 'cpu', threads: 1 });
      logits.push(await fresh.run(batch(5)));
      await fresh.release();
      expect(count.started()).toBe(2);
      for (const l of logits) expect(Array.from(l)).toEqual(Array.from(logits[3]));
    } finally {
      count.undo();
    }
  }, 120_000);

  it('keeps at most two: three sessions released, three opened again start one thread more', async () => {
    await closeIdleInferenceThreads();
    const count = countInferenceThreads();
    try {
      const first = await Promise.all([0, 1, 2].map(() => SessionThread.open(onnx, { device: 'cpu', threads: 1 })));
      await Promise.all(first.map((s) => s.release()));
      expect(count.started()).toBe(3);
      const again = await Promise.all([0, 1, 2].map(() => SessionThread.open(onnx, { device: 'cpu', threads: 1 })));
      for (const s of again) expect((await s.run(batch(2))).length).toBe(2 * s.numLabels);
      await Promise.all(again.map((s) => s.release()));
      expect(count.started()).toBe(4);
    } finally {
      count.undo();
    }
  }, 120_000);

  it('a session that fails to open on a kept thread fails as on a new one, and the next opens', async () => {
    const s = await SessionThread.open(onnx, { device: 'cpu', threads: 1 });
    await s.release();
    await expect(SessionThread.open(path.join(REPO_ROOT, 'no-such-model.onnx'), { device: 'cpu', threads: 1 })).rejects.toThrow(/no-such-model\.onnx/);
    const next = await SessionThread.open(onnx, { device: 'cpu', threads: 1 });
    expect((await next.run(batch(1))).length).toBe(next.numLabels);
    await next.release();
  }, 120_000);

  it('a process ends at once with a kept thread (exit code 0, nothing waited for)', async () => {
    const child = `
import { SessionThread } from ${JSON.stringify(path.join(REPO_ROOT, 'dist', 'src', 'nli', 'session-thread.js'))};
const s = await SessionThread.open(process.argv[1], { threads: 1 });
await s.release();
process.stdout.write('released');
`;
    const r = await runProcess(process.execPath, ['--input-type=module', '-e', child, onnx], { cwd: REPO_ROOT, timeoutMs: 60_000 });
    expect([r.code, r.signal, r.stdout]).toEqual([0, null, 'released']);
  }, 120_000);
});
