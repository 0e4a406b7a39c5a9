// The per-row int8 model (dtype q8, signature q8-row2; what `todeval models quantize` builds) checked
// against PyTorch: scripts/roberta_q8_row_torch.py, the project's own RoBERTa forward written from
// Hugging Face's modeling_roberta with every Linear layer and embedding table doing the row scheme's
// arithmetic in torch (integer sums in int64), quantizes the tiny random model's fp32 weights itself
// and compares, on a padded batch of four pairs:
//   1. the q8 file's int8 weights and scales with its own, byte for byte;
//   2. every int8 step (14 MatMuls, 3 embedding lookups) fed onnxruntime's own input, with
//      onnxruntime's levels and output, bit for bit (tolerance 0: the same IEEE operations on the
//      same float32 values, and exact integer sums);
//   3. its whole forward from the token ids with onnxruntime's logits of the q8 file as todeval runs
//      it, within a bound derived from the arithmetic (the script's check(), docs/nli.md "q8 parity
//      with PyTorch"): with the last layer's integer sums equal, only its row scale can differ,
//      through the float32 parts upstream, whose divergence is bounded by standard rounding-error
//      bounds; every integer level of every step must agree, or have flipped at a rounding boundary.
// Two mutations of the file onnxruntime runs (two int8 weights swapped; one weight scale one float32
// ulp larger) must each make the check fail. peer-torch's int8 mode is torch's quantize_dynamic
// (per-tensor activations, 8-bit weights), not this scheme, hence the project's own script.
// Needs Debian's python3-torch, python3-onnx and python3-numpy; without them the suite skips with one
// line, except under TODEVAL_REQUIRE_REFERENCES (.ci/run), where it fails instead.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { padRows } from '../src/nli/feeds.js';
import { buildQ8 } from '../src/nli/q8-build.js';
import { openSession } from '../src/nli/session.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { runProcess } from './helpers/cli.js';
import { pythonImports } from './helpers/run-fixture.js';
import { REPO_ROOT } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

const PYTHON = process.env.TORCH_PYTHON ?? '/usr/bin/python3';
const SCRIPT = path.join(REPO_ROOT, 'scripts', 'roberta_q8_row_torch.py');

async function missing(): Promise<string | undefined> {
  if (!(await pythonImports(PYTHON, ['torch', 'onnx', 'numpy']))) return `${PYTHON} cannot import torch, onnx and numpy (Debian: apt-get install python3-torch python3-onnx python3-numpy)`;
  return undefined;
}

const why = await missing();
if (why && process.env.TODEVAL_REQUIRE_REFERENCES) throw new Error(`the q8 PyTorch parity test must run here (TODEVAL_REQUIRE_REFERENCES is set): ${why}`);
if (why) console.warn(`[skip] PyTorch parity of the per-row int8 (q8) RoBERTa: ${why}`);

const PAIRS: [string, string][] = [
  ['The restaurant is in the north and serves Italian food.', 'The restaurant serves Italian food.'],
  ['Your train leaves Cambridge at 09:15 on Friday.', 'The train leaves on Saturday.'],
  ['I have booked a table for two people.', 'The hotel is expensive.'],
  ['Goodbye!', 'The user says goodbye and thanks the system for the help with the booking.'],
];

interface Check {
  torch: string;
  pass: boolean;
  weights: { checked: number; mismatched: string[]; pass: boolean };
  steps: { list: { op: string; n: number; levelsDiffer: number; bitsDiffer: number; maxAbs: number }[]; pass: boolean };
  forward: { maxAbsDiff: number; minTolerance: number; rho: number; scaleDivergence: number; flips: Record<string, number>; levelsOffBoundary: Record<string, unknown>; maxAbsLogit: number; pass: boolean };
}

async function python(args: string[]): Promise<void> {
  const r = await runProcess(PYTHON, [SCRIPT, ...args], { env: { ...process.env, OMP_NUM_THREADS: '1', OMP_WAIT_POLICY: 'PASSIVE' }, timeoutMs: 240_000 });
  if (r.code !== 0) throw new Error(`roberta_q8_row_torch.py ${args[0]} exited ${r.code}: ${r.stderr}`);
}

describe.skipIf(why !== undefined)('the per-row int8 (q8) RoBERTa: onnxruntime against a PyTorch forward of the same scheme (tiny random model)', () => {
  const tmp = suiteTempDir('torch-parity-q8');
  let model = '';
  let q8 = '';
  let ids: number[][] = [];
  let padId = 1;
  beforeAll(async () => {
    model = await getTinyModelDir();
    const tok = PairTokenizer.fromFiles(path.join(model, 'tokenizer.json'), path.join(model, 'tokenizer_config.json'), JSON.parse(readFileSync(path.join(model, 'config.json'), 'utf8')));
    ids = PAIRS.map(([p, h]) => Array.from(tok.encodePair(p, h).ids));
    padId = tok.padId;
    // What `todeval models quantize` writes for the model (the row scheme).
    q8 = buildQ8(model, path.join(tmp, 'model_q8_row.onnx')).out;
  }, 300_000);

  /** The script's check of `file`: onnxruntime's logits of it, and every int8 step's input and output in an instrumented copy. */
  async function check(file: string, name: string): Promise<Check> {
    const instrumented = path.join(tmp, `${name}.instrumented.onnx`);
    const manifestFile = path.join(tmp, `${name}.manifest.json`);
    await python(['instrument', file, instrumented, manifestFile]);
    const batch = padRows(ids, padId);
    // The file as todeval runs it: its own session, CPU, one thread.
    const session = await openSession(file, { device: 'cpu', threads: 1, notice: () => {} });
    let logits: number[][];
    try {
      const flat = await session.run(batch);
      logits = ids.map((_, i) => Array.from(flat.subarray(i * 3, i * 3 + 3)));
    } finally {
      await session.release();
    }
    const probe = await ort.InferenceSession.create(instrumented, { graphOptimizationLevel: 'all', intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 4 });
    const captured: Record<string, number[]> = {};
    const shapes: Record<string, readonly number[]> = {};
    try {
      const dims = [batch.rows, batch.width];
      const out = await probe.run({ input_ids: new ort.Tensor('int64', batch.inputIds, dims), attention_mask: new ort.Tensor('int64', batch.attentionMask, dims) });
      for (const [k, t] of Object.entries(out)) {
        captured[k] = Array.from(t.data as ArrayLike<number | bigint>, Number);
        shapes[k] = t.dims;
      }
    } finally {
      await probe.release();
    }
    const runFile = path.join(tmp, `${name}.run.json`);
    const outFile = path.join(tmp, `${name}.check.json`);
    writeFileSync(runFile, JSON.stringify({ ids, padId, logits, captured, shapes, manifest: JSON.parse(readFileSync(manifestFile, 'utf8')) }));
    await python(['check', model, file, runFile, outFile]);
    return JSON.parse(readFileSync(outFile, 'utf8')) as Check;
  }

  it('weights byte for byte, every int8 step bit for bit, logits within the derived bound', async () => {
    const r = await check(q8, 'q8');
    const f = r.forward;
    console.log(
      `q8 PyTorch parity: torch ${r.torch}; ${r.weights.checked} int8 tensors equal; ${r.steps.list.length} int8 steps, ${r.steps.list.reduce((n, s) => n + s.n, 0)} outputs, bits differing ${r.steps.list.reduce((n, s) => n + s.bitsDiffer, 0)}; ` +
        `logits max |diff| ${f.maxAbsDiff.toExponential(2)} (bound >= ${f.minTolerance.toExponential(2)}, rho ${f.rho.toExponential(2)}, row-scale divergence ${f.scaleDivergence.toExponential(2)}, levels flipped at a boundary ${JSON.stringify(f.flips)}; |logits| <= ${f.maxAbsLogit.toExponential(2)})`,
    );
    expect(r.weights).toEqual({ checked: 17, mismatched: [], pass: true });
    expect(r.steps.list.filter((s) => s.levelsDiffer !== 0 || s.bitsDiffer !== 0)).toEqual([]);
    expect(r.steps.list).toHaveLength(17);
    expect(f.levelsOffBoundary).toEqual({});
    expect(f.scaleDivergence).toBeLessThanOrEqual(f.rho);
    expect(f.maxAbsDiff).toBeLessThanOrEqual(f.minTolerance);
    expect(f.pass).toBe(true);
    expect(r.pass).toBe(true);
    // The bound is far inside the logits' own size: a check that could not fail would not be one.
    expect(f.minTolerance).toBeLessThan(f.maxAbsLogit * 1e-2);
  }, 300_000);

  it('fails when onnxruntime runs the file with two int8 weights of the classifier swapped', async () => {
    const mutated = path.join(tmp, 'swap.onnx');
    await python(['mutate', q8, mutated, 'swap']);
    const r = await check(mutated, 'swap');
    console.log(`mutation swap: weights mismatched ${JSON.stringify(r.weights.mismatched)}; out_proj step bits differing ${r.steps.list.find((s) => s.op === 'classifier.out_proj.weight')!.bitsDiffer}; logits max |diff| ${r.forward.maxAbsDiff.toExponential(2)} against a bound of ${r.forward.minTolerance.toExponential(2)}`);
    expect(r.pass).toBe(false);
    expect(r.weights.mismatched).toEqual(['classifier.out_proj.weight']);
    expect(r.steps.pass).toBe(false);
    // The forward comparison alone sees it too.
    expect(r.forward.pass).toBe(false);
  }, 300_000);

  it("fails when one weight column's scale is one float32 ulp larger", async () => {
    const mutated = path.join(tmp, 'scale-ulp.onnx');
    await python(['mutate', q8, mutated, 'scale-ulp']);
    const r = await check(mutated, 'scale-ulp');
    const step = r.steps.list.find((s) => s.op === 'roberta.encoder.layer.0.attention.self.query.weight')!;
    console.log(`mutation scale-ulp: weights mismatched ${JSON.stringify(r.weights.mismatched)}; query step bits differing ${step.bitsDiffer} of ${step.n} (max |diff| ${step.maxAbs.toExponential(2)}); logits max |diff| ${r.forward.maxAbsDiff.toExponential(2)}`);
    expect(r.pass).toBe(false);
    expect(r.weights.mismatched).toEqual(['roberta.encoder.layer.0.attention.self.query.weight']);
    // Fed the same input, the step's output moves in the last bits of one column: tolerance 0 sees it.
    expect(step.bitsDiffer).toBeGreaterThan(0);
    expect(r.steps.pass).toBe(false);
  }, 300_000);
});
