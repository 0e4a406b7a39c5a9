import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from './helpers/cli.js';
import { REPO_ROOT } from './helpers/shared.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

// onnxruntime-node ends a run with a callback into the thread that started it. A process that exited
// (Ctrl-C's process.exit(130), SIGTERM, an error) while the inference thread had a run out used to
// abort: the callback threw into a thread being torn down ("terminate called after throwing an
// instance of 'Napi::Error'", SIGABRT instead of exit code 130), on about half of the Ctrl-C's of
// test/output-safety.test.ts's score run. The exit now waits for the run in progress.
// The child imports the thread from dist/ (the tests' globalSetup builds it from the current
// sources), as plain JavaScript: through tsx each of the eight children paid about 0.45 CPU-s to
// compile the sources it reaches, for the same SessionThread.
const CHILD = `
import { SessionThread } from ${JSON.stringify(path.join(REPO_ROOT, 'dist', 'src', 'nli', 'session-thread.js'))};
const session = await SessionThread.open(process.argv[1] + '/onnx/model.onnx', { threads: 1 });
const rows = 64, width = 128;
const batch = () => ({
  rows, width,
  inputIds: BigInt64Array.from({ length: rows * width }, (_, i) => BigInt(3 + (i % 50))),
  attentionMask: new BigInt64Array(rows * width).fill(1n),
});
await session.run(batch());
// Two runs out (one inside ONNX Runtime, one queued), then the process exits under them.
void session.run(batch()).catch(() => {});
void session.run(batch()).catch(() => {});
setTimeout(() => process.exit(130), 5);
`;

describe('a process exiting while the inference thread runs a batch', () => {
  let model = '';
  beforeAll(async () => {
    model = await getTinyModelDir();
  }, 300_000);

  it('exits with its own code, never SIGABRT (8 exits, each with a run in progress)', async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await runProcess(process.execPath, ['--input-type=module', '-e', CHILD, model], { cwd: REPO_ROOT, timeoutMs: 60_000 });
      outcomes.push(`${r.code}/${r.signal}${r.stderr.includes('terminate called') ? ' (terminate called)' : ''}`);
    }
    expect(outcomes).toEqual(Array(8).fill('130/null'));
  }, 240_000);

  it("runs in a library user's `node --input-type=module -e` (the built package's thread, not a file given --input-type)", async () => {
    const built = path.join(REPO_ROOT, 'dist', 'src', 'nli', 'session-thread.js');
    const child = `
import { SessionThread } from ${JSON.stringify(built)};
const session = await SessionThread.open(process.argv[1] + '/onnx/model.onnx', { threads: 1 });
const out = await session.run({ rows: 1, width: 4, inputIds: BigInt64Array.from([0n, 5n, 6n, 2n]), attentionMask: new BigInt64Array(4).fill(1n) });
process.stdout.write(out instanceof Float32Array && out.length > 0 ? 'ran' : 'empty');
process.exit(0);
`;
    const r = await runProcess(process.execPath, ['--input-type=module', '-e', child, model], { cwd: REPO_ROOT, timeoutMs: 60_000 });
    expect(r.stderr).not.toContain('ERR_INPUT_TYPE_NOT_ALLOWED');
    expect([r.code, r.stdout]).toEqual([0, 'ran']);
  }, 120_000);
});
