/**
 * The inference thread of SessionThread: opens the ONNX session here and runs the padded batches it
 * is sent, one after another, so that ONNX Runtime's synchronous run blocks this thread, not the
 * one preparing the next batches. A released session leaves the thread waiting for the next `open`
 * (SessionThread keeps a released thread for the process's next session: a new thread and its
 * ONNX Runtime start cost about twice what opening a small model's session does).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSession, type LogitsSession } from './session.js';
import { EXITING, RUNNING, type SessionReply, type SessionRequest, type SessionThreadData } from './session-thread.js';
import { toThreadError } from './worker-entry.js';

const data = workerData as SessionThreadData;
const port = parentPort!;
const post = (m: SessionReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
const state = new Int32Array(data.state);

let session: LogitsSession | undefined;
// onnxruntime takes no tensor over shared memory: shared batches are copied here, off the
// packing thread, into buffers this thread keeps.
let localIds = new BigInt64Array(0);
let localMask = new BigInt64Array(0);
let localTypes = new BigInt64Array(0);
function local(ids: BigInt64Array, mask: BigInt64Array, types?: BigInt64Array): [BigInt64Array, BigInt64Array, BigInt64Array | undefined] {
  if (!(ids.buffer instanceof SharedArrayBuffer)) return [ids, mask, types];
  if (localIds.length < ids.length) {
    localIds = new BigInt64Array(Math.max(ids.length, localIds.length * 2));
    localMask = new BigInt64Array(localIds.length);
    localTypes = new BigInt64Array(0);
  }
  const a = localIds.subarray(0, ids.length);
  const b = localMask.subarray(0, mask.length);
  a.set(ids);
  b.set(mask);
  if (types === undefined) return [a, b, undefined];
  if (localTypes.length < localIds.length) localTypes = new BigInt64Array(localIds.length);
  const c = localTypes.subarray(0, types.length);
  c.set(types);
  return [a, b, c];
}
// One message at a time, in the order sent: the handler of the next message must not start while a
// run is still waiting for ONNX Runtime (its input buffers here are reused).
let queue: Promise<void> = Promise.resolve();
port.on('message', (req: SessionRequest) => {
  queue = queue.then(() => handle(req));
});

async function handle(req: SessionRequest): Promise<void> {
  if (req.type === 'open') {
    try {
      session = await openSession(req.onnxPath, { ...req.options, notice: (line) => post({ type: 'notice', line }) });
      post({ type: 'ready', device: session.device, numLabels: session.numLabels });
    } catch (e) {
      session = undefined;
      post({ type: 'failed', error: toThreadError(e) });
    }
    return;
  }
  if (!session) return;
  if (req.type === 'release') {
    const released = session;
    session = undefined;
    await released.release();
    post({ type: 'released' });
    return;
  }
  // Counted before the exit flag is read, and the exiting thread sets the flag before it reads the
  // count: either it waits for this run, or this run sees the flag and never starts.
  Atomics.add(state, RUNNING, 1);
  try {
    if (Atomics.load(state, EXITING) === 1) return;
    const [inputIds, attentionMask, tokenTypeIds] = local(req.inputIds, req.attentionMask, req.tokenTypeIds);
    const logits = await session.run({ rows: req.rows, width: req.width, inputIds, attentionMask, ...(tokenTypeIds ? { tokenTypeIds } : {}) });
    // A view of ORT's output may not span its whole buffer: send exactly the logits.
    const own = logits.byteOffset === 0 && logits.byteLength === logits.buffer.byteLength ? logits : logits.slice();
    post({ type: 'result', id: req.id, logits: own, numLabels: session.numLabels }, [own.buffer as ArrayBuffer]);
  } catch (e) {
    post({ type: 'result', id: req.id, error: toThreadError(e), numLabels: session.numLabels });
  } finally {
    Atomics.sub(state, RUNNING, 1);
    Atomics.notify(state, RUNNING);
  }
}
