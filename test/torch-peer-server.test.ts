// bench:nli's PyTorch contender (scripts/lib/torch_peer_server.py behind scripts/lib/cpu-torch-peer.ts):
// one persistent process, fed over a pipe, must answer every round with logits in the order the
// rows were sent, whatever batches the bench cuts, agreeing with onnxruntime within the peer's
// bound (1e-3); a failed request must come back as an error and leave the process usable. Needs
// what test/torch-parity.test.ts needs (Debian's python3-torch, python3-onnx, python3-numpy and the
// peer folder); skips with one line without them, fails where TODEVAL_REQUIRE_REFERENCES is set.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { padRows } from '../src/nli/feeds.js';
import { openSession } from '../src/nli/session.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { TorchPeerProcess } from '../scripts/lib/cpu-torch-peer.js';
import { PEER_TORCH, peerTorchMissing } from './helpers/peer-torch.js';
import { TORCH_PYTHON } from './helpers/tiny-cross-encoders.js';
import { getSensitiveTinyModelDir } from './nli-fixtures.js';

const PEER = PEER_TORCH;
const PYTHON = TORCH_PYTHON;

const why = await peerTorchMissing();
if (why && process.env.TODEVAL_REQUIRE_REFERENCES) throw new Error(`the persistent PyTorch peer test must run here (TODEVAL_REQUIRE_REFERENCES is set): ${why}`);
if (why) console.warn(`[skip] bench:nli's persistent PyTorch peer: ${why}`);

const PAIRS: [string, string][] = [
  ['Your train leaves Cambridge at 09:15 on Friday.', 'The train leaves on Saturday.'],
  ['Goodbye!', 'The user says goodbye and thanks the system for the help with the booking.'],
  ['I have booked a table for two people.', 'The hotel is expensive.'],
  ['The restaurant is in the north and serves Italian food at a moderate price.', 'The restaurant serves Italian food.'],
];

describe.skipIf(why !== undefined)('the persistent PyTorch peer of bench:nli (tiny random RoBERTa, std-0.3 weights)', () => {
  let peer: TorchPeerProcess | undefined;
  let ids: number[][] = [];
  let padId = 1;
  /** onnxruntime's logits of each row alone. */
  let ort: number[][] = [];
  beforeAll(async () => {
    // std-0.3 weights: pairs get logits far apart, so a row answered in another row's place shows.
    const model = getSensitiveTinyModelDir();
    const tok = PairTokenizer.fromFiles(path.join(model, 'tokenizer.json'), path.join(model, 'tokenizer_config.json'), JSON.parse(readFileSync(path.join(model, 'config.json'), 'utf8')));
    ids = PAIRS.map(([p, h]) => Array.from(tok.encodePair(p, h).ids));
    padId = tok.padId;
    const session = await openSession(path.join(model, 'onnx', 'model.onnx'), { device: 'cpu', threads: 1, notice: () => {} });
    try {
      for (const r of ids) ort.push(Array.from(await session.run(padRows([r], padId))));
    } finally {
      await session.release();
    }
    process.env.PYTHON ??= PYTHON;
    peer = await TorchPeerProcess.start(PEER, model, 1);
  }, 300_000);
  afterAll(async () => {
    await peer?.close();
  });

  const within = (got: number[][], want: number[][], bound: number) => Math.max(...got.flatMap((row, i) => row.map((x, k) => Math.abs(x - want[i][k])))) <= bound;

  it('reports itself and passes the logit check', async () => {
    expect(peer!.info?.torch).toMatch(/^\d+\.\d+/);
    expect(peer!.info?.threads).toBe(1);
    const check = await peer!.check(ids, padId, ort, ort);
    // A padded batch against each row alone: padding must not leak, in either forward pass.
    expect(check.single).toBeLessThanOrEqual(1e-3);
    expect(check.batch).toBeLessThanOrEqual(1e-3);
  }, 120_000);

  it('answers rounds in the order the rows were sent, whatever the batches', async () => {
    // Rows of different lengths in batches that are neither sorted nor contiguous.
    expect(new Set(ids.map((r) => r.length)).size).toBeGreaterThan(1);
    const cut = await peer!.run('fp32', 16, ids, padId, [[3, 0], [2], [1]]);
    const own = await peer!.run('fp32', 16, ids, padId);
    const alone = await peer!.run('fp32', 1, ids, padId);
    for (const r of [cut, own, alone]) {
      expect(r.logits).toHaveLength(ids.length);
      expect(within(r.logits, ort, 1e-3)).toBe(true);
      expect(r.seconds).toBeGreaterThan(0);
      // The peer's CPU seconds (bench:nli's load-proof per-pass check): the forward passes ran on its threads.
      expect(r.cpuSeconds).toBeGreaterThan(0);
      expect(r.real).toBe(ids.reduce((n, x) => n + x.length, 0));
    }
    // [3, 0] pads row 0 to row 3's length; each alone pads nothing.
    expect(cut.padded).toBe(2 * Math.max(ids[3].length, ids[0].length) + ids[2].length + ids[1].length);
    expect(alone.padded).toBe(alone.real);
    // The rows are told apart: another row's logits are farther than the bound.
    expect(within(cut.logits, [ort[1], ort[0], ort[3], ort[2]], 1e-3)).toBe(false);
    const int8 = await peer!.run('int8', 16, ids, padId, [[0, 1, 2, 3]]);
    expect(int8.logits.flat().every(Number.isFinite)).toBe(true);
    expect(int8.logits).toHaveLength(ids.length);
  }, 120_000);

  it('returns a failed request as an error and keeps serving', async () => {
    await expect(peer!.run('fp32', 16, [[0, 10_000_000, 2]], padId)).rejects.toThrow(/--peer-torch: \w+Error/);
    const r = await peer!.run('fp32', 1, ids.slice(0, 1), padId);
    expect(within(r.logits, ort.slice(0, 1), 1e-3)).toBe(true);
  }, 120_000);
});
