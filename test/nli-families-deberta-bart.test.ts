import { cpSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { padRows } from '../src/nli/feeds.js';
import { labelIndexFromConfig, probsFromLogits } from '../src/nli/labels.js';
import { createNliRunner, type NliRunner } from '../src/nli/runner.js';
import { openParts, type OpenParts } from '../src/nli/runner/lifecycle.js';
import type { NliProbs } from '../src/nli/types.js';
import { readJsonFile } from '../src/util/json-file.js';
import { bartTokenizerJson, debertaV3TokenizerJson } from './helpers/nli-family-tokenizers.js';
import { CLI_ARGV, runProcess } from './helpers/cli.js';
import { suiteTempDir } from './helpers/temp.js';
import { FAMILY_PAIRS, tinyCrossEncoders, torchLogits, torchMissing, type TinyModelJob, type TorchRow } from './helpers/tiny-cross-encoders.js';

/**
 * DeBERTa-v2/v3 and BART cross-encoders end to end: tiny random-weight models whose PyTorch modules
 * are written from Hugging Face's modeling_deberta_v2 / modeling_bart (scripts/nli-families/),
 * exported with torch.onnx as hub exports are, and loaded the way `--model DIR` loads them
 * (openParts / createNliRunner on the folder: ONNX file, config.json, tokenizer.json built here with
 * the family's post-processor). Their logits, as one padded batch, and the runner's probabilities
 * are checked against the PyTorch forward of each pair alone on the tokenizers library's own pair
 * encoding; feeding the inputs wrong moves them far past the tolerance; the per-row q8 file
 * `todeval models quantize` writes runs and stays within the q8 bound.
 *
 * Tolerance, from float32 arithmetic: both sides compute the same float32 operations in another
 * order (fused kernels, blocked sums). A chain of n dependent roundings is off by at most n * u
 * relative, u = 2^-24; the longest chain to a logit is bounded by the sums along it: per layer
 * 6 widths-32 projections and feed-forward sums (6 * 32), the 64-wide one, ~3 passes over the <= 128
 * keys (scores, softmax, context), LayerNorm's two passes (2 * 32) and ~40 for GELU/exp: < 800 per
 * attention block, 2 blocks for DeBERTa, 6 for BART (2 encoder, 2 x 2 decoder), plus the head.
 * The classifier's absolute sum |w|_2 |h|_2 is below 10 at these sizes and std (asserted on the
 * logits' size below), so |logit diff| <= n * u * 10: DeBERTa 2000 * 6e-8 * 10 = 1.2e-3, BART
 * 5000 * 6e-8 * 10 = 3e-3. A probability moves by at most half the largest logit change (the
 * softmax's row of derivatives sums to 2 p (1 - p) <= 1/2).
 */
const U = 2 ** -24;
const LOGIT_SUM_BOUND = 10;
const LOGIT_TOLERANCE: Record<string, number> = { 'deberta-v2': 2000 * U * LOGIT_SUM_BOUND, bart: 5000 * U * LOGIT_SUM_BOUND };

/**
 * The q8 bound (docs/nli.md, "Other cross-encoders"): the per-row int8 file is a different computation (its 7-bit
 * weights alone move each Linear output by up to 1/126 of a column's largest weight per term), held
 * to the contract test/onnx-builder-q8.test.ts holds RoBERTa to: every probability within 0.05 of
 * fp32's (small next to probabilities of ~1/3), the label the same wherever fp32's margin is over
 * twice the largest difference, and not within 1e-6 (integer arithmetic really ran).
 */
const Q8_BOUND = 0.05;

const why = await torchMissing();
if (why) console.warn(`[skip] DeBERTa/BART cross-encoders against PyTorch: ${why}`);

const PAIRS = FAMILY_PAIRS;

interface Variant {
  job: TinyModelJob;
  tokenizer: () => object;
}

const debertaVocab = (debertaV3TokenizerJson() as { model: { vocab: unknown[] } }).model.vocab.length;
const bartVocab = Math.max(...Object.values((bartTokenizerJson() as { model: { vocab: Record<string, number> } }).model.vocab)) + 1;
// std 0.3, as the BERT/ELECTRA ones: the pairs' logits differ by over 1, so a wrong input shows.
const VARIANTS: Variant[] = [
  // DeBERTa-v3 as its checkpoints are (type_vocab_size 0): the export takes no token_type_ids.
  { job: { name: 'deberta-v3', family: 'deberta-v2', vocabSize: debertaVocab, padId: 0, segments: false, std: 0.3 }, tokenizer: debertaV3TokenizerJson },
  // DeBERTa with segment embeddings (type_vocab_size 2), as some v2 fine-tunes have: it takes them.
  { job: { name: 'deberta-segments', family: 'deberta-v2', vocabSize: debertaVocab, padId: 0, segments: true, std: 0.3 }, tokenizer: debertaV3TokenizerJson },
  { job: { name: 'bart', family: 'bart', vocabSize: bartVocab, padId: 1, std: 0.3 }, tokenizer: bartTokenizerJson },
];
/**
 * The q8 checks' models, at std 0.1 as the q8 test's RoBERTa: at 0.3 attention is nearly one-hot and
 * int8 noise flips which token a head attends to, so q8 no longer approximates fp32 at all (the
 * tiny BART at 0.3 moves by 0.2).
 */
const Q8_VARIANTS: Variant[] = [
  { job: { name: 'deberta-v3-std0.1', family: 'deberta-v2', vocabSize: debertaVocab, padId: 0, segments: false, std: 0.1 }, tokenizer: debertaV3TokenizerJson },
  { job: { name: 'bart-std0.1', family: 'bart', vocabSize: bartVocab, padId: 1, std: 0.1 }, tokenizer: bartTokenizerJson },
];
const JOBS = [...VARIANTS, ...Q8_VARIANTS].map((v) => v.job);

const maxAbsDiff = (a: ArrayLike<number>[], b: ArrayLike<number>[]) => Math.max(...a.map((r, i) => Math.max(...Array.from(r, (x, j) => Math.abs(x - b[i][j])))));
const probsDiff = (a: NliProbs[], b: NliProbs[]) =>
  Math.max(...a.map((p, i) => Math.max(Math.abs(p.entailment - b[i].entailment), Math.abs(p.neutral - b[i].neutral), Math.abs(p.contradiction - b[i].contradiction))));

interface Reference {
  /** PyTorch's logits on the library's pair encoding, and on the wrong inputs. */
  real: number[][];
  zeros: number[][];
  robertaLayout: number[][];
  oneSeparator: number[][];
}

describe.skipIf(why !== undefined)('DeBERTa-v2/v3 and BART cross-encoders: todeval against the PyTorch forward', () => {
  const root = suiteTempDir('nli-deberta-bart');
  const dirOf = (name: string) => path.join(root, name);
  const refs = new Map<string, Reference>();
  const parts = new Map<string, OpenParts>();
  const runners = new Map<string, NliRunner>();
  const familyOf = (name: string) => VARIANTS.find((v) => v.job.name === name)!.job.family;

  beforeAll(async () => {
    const set = await tinyCrossEncoders(JOBS);
    // The cached build stays untouched: each model is copied into this run's folder, where its tokenizer and q8 file go.
    for (const v of [...VARIANTS, ...Q8_VARIANTS]) {
      cpSync(path.join(set, v.job.name), dirOf(v.job.name), { recursive: true });
      writeFileSync(path.join(dirOf(v.job.name), 'tokenizer.json'), JSON.stringify(v.tokenizer()));
    }
    for (const v of VARIANTS) parts.set(v.job.name, await openParts({ model: dirOf(v.job.name), device: 'cpu', threads: 1, sessionThread: false }));

    const forward: { name: string; rows: TorchRow[] }[] = [];
    for (const v of VARIANTS) {
      const tok = parts.get(v.job.name)!.tokenizer;
      const lib = tok.encoder.library;
      // The pair as the tokenizers library encodes it (segment ids included): what transformers would feed.
      const real = PAIRS.map((p) => {
        const e = lib.encode(p.premise, { text_pair: p.hypothesis, return_token_type_ids: true });
        return { ids: e.ids, typeIds: v.job.family === 'bart' ? e.ids.map(() => 0) : e.token_type_ids! };
      });
      const zeros = real.map((r) => ({ ids: r.ids, typeIds: r.ids.map(() => 0) }));
      const [cls, sep] = v.job.family === 'bart' ? [0, 2] : [1, 2];
      // RoBERTa's layout with these specials (<s> A </s></s> B </s>, one segment), and a single separator (<s> A </s> B </s>).
      const robertaLayout = PAIRS.map((p) => {
        const ids = [cls, ...tok.textIds(p.premise), sep, sep, ...tok.textIds(p.hypothesis), sep];
        return { ids, typeIds: ids.map(() => 0) };
      });
      const oneSeparator = PAIRS.map((p) => {
        const a = tok.textIds(p.premise);
        const ids = [cls, ...a, sep, ...tok.textIds(p.hypothesis), sep];
        return { ids, typeIds: ids.map((_, i) => (v.job.family === 'bart' || i <= a.length + 1 ? 0 : 1)) };
      });
      forward.push({ name: v.job.name, rows: [...real, ...zeros, ...robertaLayout, ...oneSeparator] });
    }
    const logits = await torchLogits(set, forward);
    const n = PAIRS.length;
    VARIANTS.forEach((v, i) => {
      const l = logits[i];
      refs.set(v.job.name, { real: l.slice(0, n), zeros: l.slice(n, 2 * n), robertaLayout: l.slice(2 * n, 3 * n), oneSeparator: l.slice(3 * n) });
    });
    for (const v of VARIANTS) runners.set(v.job.name, await createNliRunner({ model: dirOf(v.job.name), device: 'cpu', threads: 1, maxPadFraction: 1, notice: () => undefined }));
  }, 600_000);

  afterAll(async () => {
    for (const r of runners.values()) await r.close();
    for (const p of parts.values()) await p.session.release();
  });

  /** The logits of all pairs as one padded batch, encoded and fed as the runner does (its tokenizer, its segment rule, the session it opened). */
  async function productLogits(name: string): Promise<number[][]> {
    const { tokenizer, session } = parts.get(name)!;
    const encoded = PAIRS.map((p) => tokenizer.encodePair(p.premise, p.hypothesis));
    for (const e of encoded) expect(e.premiseTruncated + e.hypothesisTruncated).toBe(0); // the reference is untruncated
    const segments = !tokenizer.pairEncoding.segmentsAllZero;
    const batch = padRows(
      encoded.map((e) => e.ids),
      tokenizer.padId,
      segments ? encoded.map((e) => e.typeIds) : undefined,
    );
    expect(new Set(encoded.map((e) => e.ids.length)).size).toBeGreaterThan(5); // padding really in play
    const flat = await session.run(batch);
    const k = session.numLabels;
    return PAIRS.map((_, i) => Array.from(flat.subarray(i * k, i * k + k)));
  }

  const torchProbs = (name: string, logits: number[][]) => {
    const index = labelIndexFromConfig(readJsonFile<Record<string, unknown>>(path.join(dirOf(name), 'config.json')));
    return logits.map((l) => probsFromLogits(l, 0, l.length, index));
  };

  for (const v of VARIANTS) {
    const name = v.job.name;
    it(`${name}: the --model folder's logits (one padded batch) and the runner's probabilities are PyTorch's on the library's pair encoding`, async () => {
      const ref = refs.get(name)!;
      const tol = LOGIT_TOLERANCE[familyOf(name)];
      expect(Math.max(...ref.real.flat().map(Math.abs))).toBeLessThan(LOGIT_SUM_BOUND);
      const ours = await productLogits(name);
      const logitDiff = maxAbsDiff(ours, ref.real);
      console.log(`${name}: max |logit diff| vs PyTorch ${logitDiff.toExponential(2)} (tolerance ${tol.toExponential(2)})`);
      expect(logitDiff).toBeLessThan(tol);
      const probs = await runners.get(name)!.score(PAIRS);
      expect(probsDiff(probs, torchProbs(name, ref.real))).toBeLessThan(tol / 2);
      // The pairs' logits differ among themselves far beyond the tolerance: the comparison can fail.
      expect(maxAbsDiff(ref.real.slice(1), ref.real.slice(0, -1))).toBeGreaterThan(100 * tol);
    });
  }

  it('names the family and pair encoding; the graph inputs decide what is fed (no token_type_ids to DeBERTa-v3 or BART, real ones to DeBERTa with segments)', () => {
    expect(runners.get('deberta-v3')!.modelSignature).toMatchObject({ family: 'deberta-v2', pairEncoding: '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1' });
    expect(runners.get('deberta-segments')!.modelSignature).toMatchObject({ family: 'deberta-v2', pairEncoding: '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1' });
    // BART's encoding is RoBERTa's (signatures leave that unnamed); the family tells the two apart.
    expect(runners.get('bart')!.modelSignature.family).toBe('bart');
    expect(runners.get('bart')!.modelSignature.pairEncoding).toBeUndefined();
  });

  it('fails if DeBERTa is fed zero segment ids where it takes them, or RoBERTa\'s layout; or BART a single separator: each moves the logits far past the tolerance', async () => {
    const seg = refs.get('deberta-segments')!;
    const tol = LOGIT_TOLERANCE['deberta-v2'];
    const moved = {
      debertaZeros: maxAbsDiff(seg.zeros, seg.real),
      debertaRobertaLayout: maxAbsDiff(seg.robertaLayout, seg.real),
      debertaV3RobertaLayout: maxAbsDiff(refs.get('deberta-v3')!.robertaLayout, refs.get('deberta-v3')!.real),
      bartOneSeparator: maxAbsDiff(refs.get('bart')!.oneSeparator, refs.get('bart')!.real),
    };
    console.log(`wrong inputs move the logits by ${JSON.stringify(moved)}`);
    expect(moved.debertaZeros).toBeGreaterThan(100 * tol);
    expect(moved.debertaRobertaLayout).toBeGreaterThan(100 * tol);
    expect(moved.debertaV3RobertaLayout).toBeGreaterThan(100 * tol);
    expect(moved.bartOneSeparator).toBeGreaterThan(100 * LOGIT_TOLERANCE.bart);
    // The same graph as todeval opened it, fed the pairs without their segment ids (the session then
    // gives it zeros, as todeval did before segment ids were read from the tokenizer): off by as much.
    const { tokenizer, session } = parts.get('deberta-segments')!;
    const flat = await session.run(padRows(PAIRS.map((p) => tokenizer.encodePair(p.premise, p.hypothesis).ids), tokenizer.padId));
    const zeroFed = PAIRS.map((_, i) => Array.from(flat.subarray(i * 3, i * 3 + 3)));
    expect(maxAbsDiff(zeroFed, seg.zeros)).toBeLessThan(tol);
    expect(maxAbsDiff(zeroFed, seg.real)).toBeGreaterThan(100 * tol);
    // v3 takes no segment ids at all: zeroing them changes nothing there (the graph has no such input).
    expect(maxAbsDiff(refs.get('deberta-v3')!.zeros, refs.get('deberta-v3')!.real)).toBe(0);
  });

  for (const { job } of Q8_VARIANTS) {
    const name = job.name;
    it(`${name}: \`todeval models quantize --model DIR\` writes the per-row q8 file; it runs, stays within the q8 bound of fp32, and scores a pair alike in any batch`, async () => {
      const cli = await runProcess(process.execPath, [...CLI_ARGV, 'models', 'quantize', '--model', dirOf(name)], { timeoutMs: 120_000 });
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      const line = /^built (\S+) .* from \S+: (\d+) MatMuls, (\d+) embedding tables in int8 \(q8-row2\)$/m.exec(cli.stdout);
      expect(line, cli.stdout).not.toBeNull();
      const built = { out: line![1], matmuls: Number(line![2]), gathers: Number(line![3]) };
      console.log(`${name}: q8 ${built.matmuls} MatMuls, ${built.gathers} embedding tables in int8`);
      expect(built.out).toBe(path.join(dirOf(name), 'onnx', 'model_q8_row.onnx'));
      // Every Linear of every layer: DeBERTa 2 x (q, k, v, attention output, intermediate, output),
      // its position-table projections folded to constants by the exporter; BART 2 encoder x 6 and
      // 2 decoder x 10 (self and cross attention 4 each, fc1, fc2). The heads, on one token per row
      // (2-D), are Gemms and stay fp32. Embedding tables: DeBERTa's tokens (its position table enters
      // as a constant, not a Gather); BART's shared tokens (encoder and decoder) and two position tables.
      expect([built.matmuls, built.gathers]).toEqual(job.family === 'bart' ? [32, 4] : [12, 1]);
      const open = (dtype: 'fp32' | 'q8', one = false) =>
        createNliRunner({ model: dirOf(name), dtype, device: 'cpu', threads: 1, maxPadFraction: 1, ...(one ? { maxBatchSize: 1 } : {}), notice: () => undefined });
      const [full, q8, alone] = await Promise.all([open('fp32'), open('q8'), open('q8', true)]);
      try {
        expect(q8.modelSignature.dtype).toBe('q8-row2');
        const fp32 = await full.score(PAIRS);
        const batched = await q8.score(PAIRS);
        const worst = probsDiff(batched, fp32);
        console.log(`${name}: q8 vs fp32 max |prob diff| ${worst.toExponential(2)}`);
        expect(worst).toBeGreaterThan(1e-6);
        expect(worst).toBeLessThan(Q8_BOUND);
        const margin = (p: NliProbs) => {
          const [a, b] = [p.entailment, p.neutral, p.contradiction].sort((x, y) => y - x);
          return a - b;
        };
        const top = (p: NliProbs) => (['entailment', 'neutral', 'contradiction'] as const).reduce((m, l) => (p[l] > p[m] ? l : m));
        for (let i = 0; i < PAIRS.length; i++) if (margin(fp32[i]) > 2 * worst) expect(top(batched[i])).toBe(top(fp32[i]));
        // The row scheme's promise: a pair's score does not depend on the batch it ran in.
        const one = [];
        for (const p of PAIRS) one.push(await alone.scoreOne(p));
        expect(probsDiff(one, batched)).toBe(0);
      } finally {
        await Promise.all([full.close(), q8.close(), alone.close()]);
      }
    });
  }
});
