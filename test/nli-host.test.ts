import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchPacker, padRows, unpadRows, type PaddedBatch } from '../src/nli/feeds.js';
import { probsFromLogits } from '../src/nli/labels.js';
import { PairMap } from '../src/nli/pair-map.js';
import { BatchedNliRunner, createNliRunner } from '../src/nli/runner.js';
import type { LogitsSession } from '../src/nli/session.js';
import { TokenizerPool } from '../src/nli/tokenizer-pool.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import type { NliPair } from '../src/nli/types.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { TOKENIZER_DIR } from './helpers/shared.js';
import { SAMPLE_PAIRS } from './nli-fixtures.js';

/** A runner's counts of work done, without where its texts were tokenized (which tokenizer threads change by design). */
function workCounts<S extends { textsTokenizedHere: number }>(stats: S): Omit<S, 'textsTokenizedHere'> {
  const { textsTokenizedHere: _where, ...work } = stats;
  return work;
}

const quiet = () => {};

describe('PairMap', () => {
  it('keys by (premise, hypothesis) without confusing pairs whose joined text is the same', () => {
    const m = new PairMap<number>();
    m.set('a\u0000b', 'c', 1);
    m.set('a', 'b\u0000c', 2);
    expect([m.get('a\u0000b', 'c'), m.get('a', 'b\u0000c'), m.size]).toEqual([1, 2, 2]);
    expect(m.add('a', 'b\u0000c', 3)).toBe(false);
    expect(m.add('a', 'x', 4)).toBe(true);
    expect([m.get('a', 'b\u0000c'), m.size]).toEqual([2, 3]);
    expect(m.delete('a', 'b\u0000c')).toBe(true);
    expect(m.delete('a', 'b\u0000c')).toBe(false);
    expect([m.has('a', 'x'), m.has('a', 'b\u0000c'), m.size]).toEqual([true, false, 2]);
    m.set('a', 'x', 5);
    expect([m.get('a', 'x'), m.size]).toEqual([5, 2]);
  });
});

describe('BatchPacker', () => {
  it('pads each row with the pad id under a zero mask, as int64, and reuses its buffers without leaking old rows', () => {
    const packer = new BatchPacker(1, 1);
    const rows = [[0, 100, 2], [0, 7, 8, 9, 2], [0, 2]];
    const fill = (rs: number[][]) => (out: Int32Array, r: number) => {
      out.set(rs[r]);
      return rs[r].length;
    };
    const a = packer.pack(3, 5, fill(rows));
    expect([a.rows, a.width]).toEqual([3, 5]);
    expect(Array.from(a.inputIds, Number)).toEqual([0, 100, 2, 1, 1, 0, 7, 8, 9, 2, 0, 2, 1, 1, 1]);
    expect(Array.from(a.attentionMask, Number)).toEqual([1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0]);
    expect(unpadRows(a)).toEqual(rows);
    // Large ids survive the 32-bit writes whole, and the next batch in the same buffer shows nothing of the last.
    const b = packer.pack(2, 3, fill([[0, 50264, 2], [0]]));
    expect(Array.from(b.inputIds)).toEqual([0n, 50264n, 2n, 0n, 1n, 1n]);
    expect(Array.from(b.attentionMask)).toEqual([1n, 1n, 1n, 1n, 0n, 0n]);
    expect(() => packer.pack(1, 2, fill([[0, 1, 2]]))).toThrow(/more than the batch width/);
  });

  it('keeps a packed batch intact until `slots` more have been packed', () => {
    const packer = new BatchPacker(1, 2);
    const one = (id: number) => (out: Int32Array) => {
      out[0] = id;
      return 1;
    };
    const first = packer.pack(1, 1, one(11));
    packer.pack(1, 1, one(22));
    expect(first.inputIds[0]).toBe(11n);
    packer.pack(1, 1, one(33));
    expect(first.inputIds[0]).toBe(33n);
  });

  it('padRows gives the same batch as packing', () => {
    expect(unpadRows(padRows([[5, 6], [7]], 1))).toEqual([[5, 6], [7]]);
  });
});

describe('probabilities from three logits', () => {
  it('are bit for bit those of the general softmax, in every label order', () => {
    const general = (l: number[], index: Record<'entailment' | 'neutral' | 'contradiction', number>) => {
      const max = Math.max(...l);
      const ex = l.map((x) => Math.exp(x - max));
      const sum = ex.reduce((a, b) => a + b, 0);
      return { entailment: ex[index.entailment] / sum, neutral: ex[index.neutral] / sum, contradiction: ex[index.contradiction] / sum };
    };
    const orders = [
      { contradiction: 0, neutral: 1, entailment: 2 },
      { entailment: 0, neutral: 1, contradiction: 2 },
      { neutral: 0, entailment: 1, contradiction: 2 },
    ];
    const logits = new Float32Array([-4, 0, -7.2, 3.25, 3.25, -1e30, 0.1, 0.2, 0.3, 88, -88, 0]);
    for (const index of orders) {
      for (let row = 0; row < logits.length / 3; row++) {
        const l = Array.from(logits.subarray(row * 3, row * 3 + 3));
        expect(probsFromLogits(logits, row * 3, 3, index)).toEqual(general(l, index));
      }
    }
  });
});

/** Logits from a row's real tokens only: any lost, swapped or padded row changes them. */
function rowLogits(row: number[]): [number, number, number] {
  let s = 0;
  for (const t of row) s = (s * 31 + t) % 1000003;
  return [(s % 97) / 10, row.length / 10, ((s >> 3) % 89) / 10];
}

/** A fake session (named as one): records the rows it ran; `inFlight` like the session thread's. */
class FakeSession implements LogitsSession {
  readonly device = 'cpu' as const;
  readonly numLabels = 3;
  readonly batches: number[][][] = [];
  running = 0;
  mostRunning = 0;
  oomAbove = Number.POSITIVE_INFINITY;
  constructor(readonly inFlight = 1) {}
  async run(batch: PaddedBatch): Promise<Float32Array> {
    const rows = unpadRows(batch);
    this.running++;
    this.mostRunning = Math.max(this.mostRunning, this.running);
    await new Promise((r) => setTimeout(r, 2));
    this.running--;
    if (rows.length > this.oomAbove) throw new Error('CUDA failure 2: out of memory');
    this.batches.push(rows);
    const out = new Float32Array(rows.length * 3);
    rows.forEach((r, i) => out.set(rowLogits(r), i * 3));
    return out;
  }
  async release(): Promise<void> {}
}

describe('runner host path (fake session, real tokenizer)', () => {
  const labels = { contradiction: 0, neutral: 1, entailment: 2 };
  const signature = { modelId: 'fake', revision: 'r', dtype: 'fp32' };
  const newTokenizer = () => PairTokenizer.fromFiles(path.join(TOKENIZER_DIR, 'tokenizer.json'), path.join(TOKENIZER_DIR, 'tokenizer_config.json'));
  const pairs: NliPair[] = Array.from({ length: 90 }, (_, i) => ({
    premise: `${SAMPLE_PAIRS[i % SAMPLE_PAIRS.length].premise} ${'Okay. '.repeat(i % 5)}Turn ${i % 30}.`,
    hypothesis: `${SAMPLE_PAIRS[(i * 7) % SAMPLE_PAIRS.length].hypothesis} (${i % 45})`,
  }));
  let pool: TokenizerPool;
  let pooled: PairTokenizer;
  let reference: PairTokenizer;
  const expected = (p: NliPair) => probsFromLogits(Float32Array.from(rowLogits(reference.encodePair(p.premise, p.hypothesis).ids)), 0, 3, labels);
  beforeAll(async () => {
    reference = newTokenizer();
    pooled = newTokenizer();
    pool = await TokenizerPool.start(pooled, 2);
  });
  afterAll(async () => {
    await pool?.close();
  });

  it('tokenizer threads fill the memo with the ids the calling thread would compute', async () => {
    const texts = pairs.flatMap((p) => [p.premise, p.hypothesis]);
    await pool.encode(texts);
    for (const t of texts) expect(Array.from(pooled.known(t) ?? [])).toEqual(Array.from(reference.ids(t)));
    // Asking again sends nothing: every text is known.
    await expect(pool.encode(texts)).resolves.toBeUndefined();
  });

  it('gives the same results, the same batches and the same counts with tokenizer threads, prefetch and a session taking two runs at once', async () => {
    const run = async (session: FakeSession, tokenizerPool?: TokenizerPool) => {
      const runner = new BatchedNliRunner({ session, tokenizer: tokenizerPool ? pooled : newTokenizer(), tokenizerPool, labels, signature, limits: { maxBatchTokens: 600, maxBatchSize: 8, maxPadFraction: 0.15 } });
      runner.prefetch(pairs.slice(40).flatMap((p) => [p.premise, p.hypothesis]));
      // Three calls in order, the second repeating pairs of the first, the third while the second runs.
      const first = await runner.score(pairs.slice(0, 40));
      const second = runner.score(pairs.slice(20, 70));
      const third = runner.score(pairs.slice(60));
      const results = [first, await second, await third];
      const stats = runner.stats();
      await runner.close();
      return { results, stats, batches: session.batches };
    };
    const plain = await run(new FakeSession());
    const threaded = await run(new FakeSession(2), pool);
    expect(threaded.results).toEqual(plain.results);
    // The same work; only where the texts were tokenized differs (serve's /metrics shows it).
    expect(workCounts(threaded.stats)).toEqual(workCounts(plain.stats));
    expect([plain.stats.textsTokenizedHere > 0, threaded.stats.textsTokenizedHere]).toEqual([true, 0]);
    expect(threaded.batches).toEqual(plain.batches);
    expect(plain.stats).toMatchObject({ requested: 40 + 50 + 30, issued: 90 });
    plain.results[2].forEach((r, i) => expect(r).toEqual(expected(pairs[60 + i])));
  });

  it('batches a separate call on its own, after what was submitted before it; calls in one tick otherwise share batches', async () => {
    const limits = { maxBatchTokens: 100000, maxBatchSize: 64 };
    const shared = new FakeSession();
    const a = new BatchedNliRunner({ session: shared, tokenizer: reference, labels, signature, limits });
    await Promise.all([a.score(pairs.slice(0, 10)), a.score(pairs.slice(10, 20))]);
    expect(shared.batches.map((b) => b.length)).toEqual([20]);
    await a.close();

    const separate = new FakeSession();
    const b = new BatchedNliRunner({ session: separate, tokenizer: reference, labels, signature, limits });
    const first = b.score(pairs.slice(0, 10), { separate: true });
    // Submitted in the same tick, sharing pairs 5-9 with the first call: those are computed there.
    const second = b.score(pairs.slice(5, 20), { separate: true });
    const third = b.score(pairs.slice(20, 24));
    const results = await Promise.all([first, second, third]);
    expect(separate.batches.map((x) => x.length)).toEqual([10, 10, 4]);
    expect(b.stats()).toMatchObject({ requested: 29, issued: 24, cacheHits: 5, batches: 3 });
    results[1].forEach((r, i) => expect(r).toEqual(expected(pairs[5 + i])));
    await b.close();
  });

  it('keeps two runs in flight on a session that takes them, and still halves a batch that runs out of memory', async () => {
    const session = new FakeSession(2);
    session.oomAbove = 3;
    const runner = new BatchedNliRunner({ session, tokenizer: reference, labels, signature, limits: { maxBatchTokens: 100000, maxBatchSize: 8 } });
    const got = await runner.score(pairs.slice(0, 48));
    await runner.close();
    expect(session.mostRunning).toBe(2);
    expect(runner.stats().oomSplits).toBeGreaterThan(0);
    expect(Math.max(...session.batches.map((b) => b.length))).toBeLessThanOrEqual(3);
    got.forEach((r, i) => expect(r).toEqual(expected(pairs[i])));
  });

  it('fails the calls waiting on a closed tokenizer pool instead of hanging', async () => {
    const tok = newTokenizer();
    const dead = await TokenizerPool.start(tok, 1);
    await dead.close();
    const runner = new BatchedNliRunner({ session: new FakeSession(), tokenizer: tok, tokenizerPool: dead, labels, signature, limits: { maxBatchTokens: 1000, maxBatchSize: 8 } });
    await expect(runner.score(pairs.slice(0, 3))).rejects.toThrow(/closed/);
    await runner.close();
  });
});

describe('the session on its own thread (lexical stand-in)', () => {
  it('gives the probabilities, batches and counts of the session on the calling thread', async () => {
    const dir = getLexicalStandinDir();
    const many = Array.from({ length: 60 }, (_, i) => ({ premise: `${SAMPLE_PAIRS[i % SAMPLE_PAIRS.length].premise} ${i}`, hypothesis: SAMPLE_PAIRS[(i * 3) % SAMPLE_PAIRS.length].hypothesis }));
    const run = async (sessionThread: boolean, tokenizerThreads: number) => {
      const runner = await createNliRunner({ model: dir, device: 'cpu', threads: 1, sessionThread, tokenizerThreads, notice: quiet });
      try {
        return { probs: await runner.score(many), stats: runner.stats() };
      } finally {
        await runner.close();
      }
    };
    const inline = await run(false, 0);
    const threaded = await run(true, 2);
    expect(threaded.probs).toEqual(inline.probs);
    expect(workCounts(threaded.stats)).toEqual(workCounts(inline.stats));
    expect([inline.stats.textsTokenizedHere > 0, threaded.stats.textsTokenizedHere]).toEqual([true, 0]);
    expect(inline.stats.batches).toBeGreaterThan(1);
  });
});
