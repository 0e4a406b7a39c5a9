// ONNX Runtime's intra-op threads spin while waiting on a quiet machine and sleep on an
// oversubscribed one (src/nli/session.ts spinWhileWaiting). The choice may change speed only: the
// logits of a padded batch and of each row alone must be the same bit for bit either way.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { padRows } from '../src/nli/feeds.js';
import { openSession, spinWhileWaiting } from '../src/nli/session.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

describe('spinWhileWaiting', () => {
  it('spins below twice the cores and sleeps from there', () => {
    expect(spinWhileWaiting(0, 2)).toBe(true);
    // This process alone: its intra-op threads (at most the cores) and a tokenizer thread.
    expect(spinWhileWaiting(3, 2)).toBe(true);
    expect(spinWhileWaiting(3.99, 2)).toBe(true);
    expect(spinWhileWaiting(4, 2)).toBe(false);
    expect(spinWhileWaiting(24, 2)).toBe(false);
    expect(spinWhileWaiting(24, 16)).toBe(true);
  });
});

describe('spinning or sleeping threads', () => {
  it('give the same logits bit for bit', async () => {
    const dir = await getTinyModelDir();
    const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    const tok = PairTokenizer.fromFiles(path.join(dir, 'tokenizer.json'), undefined, config);
    const ids = [
      ['Your train leaves Cambridge at 09:15 on Friday.', 'The train leaves on Saturday.'],
      ['Goodbye!', 'The user says goodbye and thanks the system for the help with the booking.'],
      ['I have booked a table for two people at the Italian place in the north.', 'A table is booked.'],
    ].map(([p, h]) => tok.encodePair(p, h).ids);
    const logits: Float32Array[][] = [];
    for (const spin of [true, false]) {
      const session = await openSession(path.join(dir, 'onnx', 'model.onnx'), { device: 'cpu', threads: 2, spin, notice: () => {} });
      try {
        const out = [await session.run(padRows(ids, tok.padId))];
        for (const r of ids) out.push(await session.run(padRows([r], tok.padId)));
        logits.push(out);
      } finally {
        await session.release();
      }
    }
    expect(logits[1].map((a) => Array.from(a))).toEqual(logits[0].map((a) => Array.from(a)));
    // Rows of different lengths: the padded batch is not trivially one shape.
    expect(new Set(ids.map((r) => r.length)).size).toBe(3);
  });
});
