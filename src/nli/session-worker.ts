/**
 * The inference thread of SessionThread: opens the ONNX session here and runs the padded batches it
 * is sent, one after another, so that ONNX Runtime's synchronous run blocks this thread, not the
 * one preparing the next batches.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSession, type LogitsSession } from './session.js';
import type { SessionReply, SessionRequest, SessionThreadData } from './session-thread.js';
import { toThreadError } from './worker-entry.js';

const data = workerData as SessionThreadData;
const port = parentPort!;
const post = (m: SessionReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

let session: LogitsSession | undefined;
try {
  session = await openSession(data.onnxPath, { ...data.options, notice: (line) => post({ type: 'notice', line }) });
  post({ type: 'ready', device: session.device, numLabels: session.numLabels });
} catch (e) {
  post({ type: 'failed', error: toThreadError(e) });
}

port.on('message', async (req: SessionRequest) => {
  if (!session) return;
  if (req.type === 'release') {
    await session.release();
    post({ type: 'released' });
    return;
  }
  try {
    const logits = await session.run({ rows: req.rows, width: req.width, inputIds: req.inputIds, attentionMask: req.attentionMask });
    // A view of ORT's output may not span its whole buffer: send exactly the logits.
    const own = logits.byteOffset === 0 && logits.byteLength === logits.buffer.byteLength ? logits : logits.slice();
    post({ type: 'result', id: req.id, logits: own, numLabels: session.numLabels }, [own.buffer as ArrayBuffer]);
  } catch (e) {
    post({ type: 'result', id: req.id, error: toThreadError(e), numLabels: session.numLabels });
  }
});
