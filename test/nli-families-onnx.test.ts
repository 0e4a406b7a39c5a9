import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labelIndexFromConfig, probsFromLogits } from '../src/nli/labels.js';
import { createNliRunner, type NliRunner } from '../src/nli/runner.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import type { NliProbs } from '../src/nli/types.js';
import { bertTokenizerJson, templateBertTokenizerJson } from './helpers/nli-family-tokenizers.js';
import { suiteTempDir } from './helpers/temp.js';
import { FAMILY_PAIRS, tinyCrossEncoders, torchLogits, torchMissing, type TorchRow } from './helpers/tiny-cross-encoders.js';

/**
 * BERT-style cross-encoders end to end: tiny random-weight models (scripts/nli-families/
 * tiny_cross_encoder.py: a PyTorch module written from Hugging Face's BERT/ELECTRA modelling code,
 * exported with torch.onnx as hub exports are) loaded by the runner with --model DIR, their
 * probabilities checked against that PyTorch forward on the library's own pair encoding.
 *
 * Tolerance: float32 logits of a 2-layer, 32-wide model differ between ONNX Runtime and PyTorch by
 * rounding only (~1e-7 relative per operation, a few hundred operations deep, logits below 10),
 * under 1e-5; softmax moves a probability by at most the largest logit change. 1e-4 leaves 10x.
 */
const TOLERANCE = 1e-4;

const why = await torchMissing();
const torchHere = why === undefined;
if (!torchHere) console.log(`nli-families-onnx: skipped (${why})`);

const PAIRS = FAMILY_PAIRS;

interface Variant {
  name: string;
  family: 'bert' | 'electra';
  tokenizer: () => object;
  labels: 'three' | 'two';
  segments: boolean;
}
const VARIANTS: Variant[] = [
  { name: 'bert', family: 'bert', tokenizer: bertTokenizerJson, labels: 'three', segments: true },
  { name: 'electra', family: 'electra', tokenizer: templateBertTokenizerJson, labels: 'three', segments: true },
  { name: 'bert-two-label', family: 'bert', tokenizer: bertTokenizerJson, labels: 'two', segments: true },
  // The graph's inputs decide what is fed: this one has no token_type_ids (ONNX Runtime refuses an input the graph lacks).
  { name: 'bert-no-segment-input', family: 'bert', tokenizer: templateBertTokenizerJson, labels: 'three', segments: false },
];

describe.skipIf(!torchHere)('BERT-style cross-encoders: runner against the PyTorch forward', () => {
  const root = suiteTempDir('nli-families');
  const dirOf = (v: Variant) => path.join(root, v.name);
  const runners = new Map<string, NliRunner>();
  /** Per variant: probabilities from PyTorch on the library's pair encoding, on zeroed segment ids, on RoBERTa's layout. */
  const torch = new Map<string, { real: NliProbs[]; zeros: NliProbs[]; robertaLayout: NliProbs[] }>();

  beforeAll(async () => {
    const vocabSize = Math.max(...Object.values((bertTokenizerJson() as { model: { vocab: Record<string, number> } }).model.vocab)) + 1;
    // Built once and kept by content (test/helpers/tiny-cross-encoders.ts); copied here, where the tokenizer goes.
    const set = await tinyCrossEncoders(VARIANTS.map((v) => ({ name: v.name, family: v.family, vocabSize, padId: 0, labels: v.labels, segments: v.segments })));
    for (const v of VARIANTS) {
      cpSync(path.join(set, v.name), dirOf(v), { recursive: true });
      writeFileSync(path.join(dirOf(v), 'tokenizer.json'), JSON.stringify(v.tokenizer()));
    }

    // What PyTorch gives each pair: encoded by the library itself (ids and segment ids), with the
    // segment ids zeroed, and in RoBERTa's layout ([CLS] A [SEP] [SEP] B [SEP], all segment 0).
    const forwardJobs: { name: string; rows: TorchRow[] }[] = [];
    for (const v of VARIANTS) {
      const config = JSON.parse(readFileSync(path.join(dirOf(v), 'config.json'), 'utf8')) as Record<string, unknown>;
      const tok = new PairTokenizer(v.tokenizer(), {}, config);
      const real = PAIRS.map((p) => {
        const e = tok.encoder.library.encode(p.premise, { text_pair: p.hypothesis, return_token_type_ids: true });
        // A graph without the segment input computes segment 0 everywhere.
        return { ids: e.ids, typeIds: v.segments ? e.token_type_ids! : e.ids.map(() => 0) };
      });
      const zeros = real.map((r) => ({ ids: r.ids, typeIds: r.ids.map(() => 0) }));
      const robertaLayout = PAIRS.map((p) => {
        const [cls, sep] = [101, 102];
        const ids = [cls, ...tok.textIds(p.premise), sep, sep, ...tok.textIds(p.hypothesis), sep];
        return { ids, typeIds: ids.map(() => 0) };
      });
      forwardJobs.push({ name: v.name, rows: [...real, ...zeros, ...robertaLayout] });
    }
    const logits = await torchLogits(set, forwardJobs);
    VARIANTS.forEach((v, i) => {
      const config = JSON.parse(readFileSync(path.join(dirOf(v), 'config.json'), 'utf8')) as Record<string, unknown>;
      const index = labelIndexFromConfig(config);
      const probs = logits[i].map((l) => probsFromLogits(l, 0, l.length, index));
      const n = PAIRS.length;
      torch.set(v.name, { real: probs.slice(0, n), zeros: probs.slice(n, 2 * n), robertaLayout: probs.slice(2 * n) });
    });
    for (const v of VARIANTS) runners.set(v.name, await createNliRunner({ model: dirOf(v), device: 'cpu', threads: 1, notice: () => undefined }));
  }, 600_000);

  afterAll(async () => {
    for (const r of runners.values()) await r.close();
  });

  const maxDiff = (a: NliProbs[], b: NliProbs[]) =>
    Math.max(...a.map((p, i) => Math.max(Math.abs(p.entailment - b[i].entailment), Math.abs(p.neutral - b[i].neutral), Math.abs(p.contradiction - b[i].contradiction))));

  for (const v of VARIANTS) {
    it(`${v.name}: the runner's probabilities are PyTorch's on the library's pair encoding`, async () => {
      const ours = await runners.get(v.name)!.score(PAIRS);
      expect(maxDiff(ours, torch.get(v.name)!.real)).toBeLessThan(TOLERANCE);
    });
  }

  it('fails if segment ids were fed as zeros or the pair laid out as RoBERTa does: both move the probabilities far past the tolerance', async () => {
    for (const name of ['bert', 'electra']) {
      const t = torch.get(name)!;
      expect(maxDiff(t.zeros, t.real)).toBeGreaterThan(100 * TOLERANCE);
      expect(maxDiff(t.robertaLayout, t.real)).toBeGreaterThan(100 * TOLERANCE);
    }
    expect(runners.get('bert')!.modelSignature).toMatchObject({ family: 'bert', pairEncoding: '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1' });
  });

  it('maps a two-label model by the documented rule: not-entailment as neutral, contradiction 0', async () => {
    const ours = await runners.get('bert-two-label')!.score(PAIRS);
    for (const p of ours) {
      expect(p.contradiction).toBe(0);
      expect(p.entailment + p.neutral).toBeCloseTo(1, 12);
    }
  });
});
