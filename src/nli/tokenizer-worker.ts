/**
 * A tokenizer thread of TokenizerPool: builds the same SegmentEncoder as the main thread and
 * answers lists of texts with their ids, all of a list in one transferred buffer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { concatIds, SegmentEncoder } from './segment-encoder.js';
import type { EncodeReply, EncodeRequest, TokenizerWorkerData } from './tokenizer-pool.js';

const data = workerData as TokenizerWorkerData;
const encoder = new SegmentEncoder(data.tokenizerJson, data.tokenizerConfig);
const port = parentPort!;

port.on('message', (req: EncodeRequest) => {
  try {
    const lengths = new Int32Array(req.texts.length);
    const parts: Int32Array[] = [];
    let total = 0;
    req.texts.forEach((text, i) => {
      const ids = encoder.encode(text, data.maxTokens);
      lengths[i] = ids.length;
      parts.push(ids);
      total += ids.length;
    });
    const ids = concatIds(parts, total);
    const reply: EncodeReply = { id: req.id, lengths, ids };
    port.postMessage(reply, [lengths.buffer, ids.buffer]);
  } catch (e) {
    const reply: EncodeReply = { id: req.id, error: String((e as Error)?.message ?? e) };
    port.postMessage(reply);
  }
});
port.postMessage({ id: -1, ready: true });
