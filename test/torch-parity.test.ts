// The RoBERTa forward pass checked against PyTorch, not against a re-implementation written by the
// same hands: ../shared/tools/peer-torch/roberta_torch.py (Hugging Face's RobertaForSequenceClassification
// as modeling_roberta runs it, eager, fp32) loads the tiny random model's own ONNX initializers and
// compares its logits with onnxruntime's, for a padded batch and each pair alone (within 1e-3, the
// peer's bound). A mutation (two weights of one row swapped in the model onnxruntime runs) must make
// the same check fail, so a pass says something. Needs Debian's python3-torch, python3-onnx and
// python3-numpy and the peer folder ($PEER_TORCH_DIR, default ../shared/tools/peer-torch); without
// them the suite skips with one line, except where TODEVAL_REQUIRE_REFERENCES is set (.ci/run), where
// it fails instead.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { padRows } from '../src/nli/feeds.js';
import { openSession } from '../src/nli/session.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { runProcess } from './helpers/cli.js';
import { PEER_TORCH, peerTorchMissing } from './helpers/peer-torch.js';
import { TORCH_PYTHON } from './helpers/tiny-cross-encoders.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

const PEER = PEER_TORCH;
const PYTHON = TORCH_PYTHON;

const why = await peerTorchMissing();
if (why && process.env.TODEVAL_REQUIRE_REFERENCES) throw new Error(`the PyTorch parity test must run here (TODEVAL_REQUIRE_REFERENCES is set): ${why}`);
if (why) console.warn(`[skip] PyTorch parity of the RoBERTa forward pass: ${why}`);

const PAIRS: [string, string][] = [
  ['The restaurant is in the north and serves Italian food.', 'The restaurant serves Italian food.'],
  ['Your train leaves Cambridge at 09:15 on Friday.', 'The train leaves on Saturday.'],
  ['I have booked a table for two people.', 'The hotel is expensive.'],
  ['Goodbye!', 'The user says goodbye and thanks the system for the help with the booking.'],
];

/** ONNX Runtime's logits of the pairs, as one padded batch and each alone, in the form the peer reads. */
async function ortLogits(onnx: string, ids: number[][], padId: number): Promise<{ batchLogits: number[][]; singleLogits: number[][] }> {
  const session = await openSession(onnx, { device: 'cpu', threads: 1, notice: () => {} });
  try {
    const rows = (flat: Float32Array, k: number) => Array.from({ length: k }, (_, i) => Array.from(flat.subarray(i * 3, i * 3 + 3)));
    const batchLogits = rows(await session.run(padRows(ids, padId)), ids.length);
    const singleLogits: number[][] = [];
    for (const r of ids) singleLogits.push(rows(await session.run(padRows([r], padId)), 1)[0]);
    return { batchLogits, singleLogits };
  } finally {
    await session.release();
  }
}

describe.skipIf(why !== undefined)('onnxruntime against PyTorch (peer-torch, tiny random RoBERTa, fp32)', () => {
  let tmp = '';
  let model = '';
  let ids: number[][] = [];
  let padId = 1;
  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'todeval-torch-parity-'));
    model = await getTinyModelDir();
    const tok = PairTokenizer.fromFiles(path.join(model, 'tokenizer.json'), path.join(model, 'tokenizer_config.json'), JSON.parse(readFileSync(path.join(model, 'config.json'), 'utf8')));
    ids = PAIRS.map(([p, h]) => Array.from(tok.encodePair(p, h).ids));
    padId = tok.padId;
  }, 300_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  /** The peer's check of `logits` against its own forward pass of `model`'s weights: exit code, its report and its output. */
  async function peerCheck(logits: { batchLogits: number[][]; singleLogits: number[][] }, name: string) {
    const pairs = path.join(tmp, `${name}.pairs.json`);
    const out = path.join(tmp, `${name}.check.json`);
    writeFileSync(pairs, JSON.stringify({ padId, ids, check: { n: ids.length, indices: ids.map((_, i) => i), ...logits } }));
    const r = await runProcess(PYTHON, [path.join(PEER, 'roberta_torch.py'), model, pairs, '--threads', '1', '--check-only', '--json', out], {
      env: { ...process.env, OMP_WAIT_POLICY: 'PASSIVE' },
      timeoutMs: 240_000,
    });
    const report = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as { torch: string; check: { batch: number; single: number; pass: boolean } }) : undefined;
    return { code: r.code, output: r.stdout + r.stderr, report };
  }

  it('logits agree within 1e-3 for a padded batch and for each pair alone', async () => {
    const r = await peerCheck(await ortLogits(path.join(model, 'onnx', 'model.onnx'), ids, padId), 'fp32');
    console.log(`PyTorch parity: torch ${r.report?.torch}, max |logit diff| batch ${r.report?.check.batch.toExponential(2)}, alone ${r.report?.check.single.toExponential(2)}`);
    expect(r.code, r.output).toBe(0);
    expect(r.report!.check.pass).toBe(true);
    expect(r.report!.check.batch).toBeLessThanOrEqual(1e-3);
    expect(r.report!.check.single).toBeLessThanOrEqual(1e-3);
  }, 300_000);

  it('fails when onnxruntime runs the model with two weights of the classifier swapped', async () => {
    const mutated = path.join(tmp, 'mutated');
    cpSync(model, mutated, { recursive: true });
    // The first two entries of the classifier's output projection swapped in the copy onnxruntime
    // runs (one hidden unit's weights to two labels); PyTorch keeps the original weights.
    const swap = [
      'import onnx, sys',
      'from onnx import numpy_helper',
      'm = onnx.load(sys.argv[1])',
      't = next(t for t in m.graph.initializer if t.name == "classifier.out_proj.weight")',
      'a = numpy_helper.to_array(t).copy()',
      'flat = a.reshape(-1)',
      'flat[0], flat[1] = flat[1].copy(), flat[0].copy()',
      'assert flat[0] != flat[1]',
      't.CopyFrom(numpy_helper.from_array(a, t.name))',
      'onnx.save(m, sys.argv[1])',
    ].join('\n');
    const onnxFile = path.join(mutated, 'onnx', 'model.onnx');
    const r = await runProcess(PYTHON, ['-c', swap, onnxFile]);
    expect(r.code, r.stderr).toBe(0);
    const check = await peerCheck(await ortLogits(onnxFile, ids, padId), 'mutated');
    expect(check.code, check.output).toBe(1);
    expect(check.output).toContain('CHECK FAILED');
    expect(check.report!.check.pass).toBe(false);
  }, 300_000);
});
