/**
 * Correctness of an accelerated device against the CPU: the same SGD pairs through the CPU fp32
 * session (the reference) and through `--device` at each dtype; max |prob diff| and argmax agreement.
 *
 *   node dist/scripts/gpu-check.js --model DIR [--device cuda] [--dtype fp32,fp16] [--pairs 256] [--json FILE]
 *
 * Limits (exit 1 when exceeded): fp32 max |diff| <= 1e-4 and identical argmax; fp16 (against CPU
 * fp32, i.e. everything fp16 changes) max |diff| <= 2e-2.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { resolveDataDir } from '../src/data/data-dir.js';
import { parseDtype, type NliDtype } from '../src/nli/model-store.js';
import { createNliRunner } from '../src/nli/runner.js';
import type { NliDevice } from '../src/nli/session.js';
import { argmaxLabel, type NliPair, type NliProbs } from '../src/nli/types.js';
import { sgdCandidatePairs, spreadSample } from './lib/sgd-pairs.js';

const program = new Command('gpu-check')
  .requiredOption('--model <dir>', 'model directory (random-model builder output)')
  .option('--device <d>', 'device under test', 'cuda')
  .option('--dtype <list>', 'dtypes to check against CPU fp32', 'fp32,fp16')
  .option('--pairs <n>', 'SGD pairs', (v) => Number(v), 256)
  .option('--data-dir <dir>', 'data directory')
  .option('--json <file>', 'write the figures as JSON');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ model: string; device: NliDevice; dtype: string; pairs: number; dataDir?: string; json?: string }>();

const LIMITS: Record<NliDtype, number> = { fp32: 1e-4, fp16: 2e-2, q8: 1e-1, 'q8-tensor': 1e-1 };
const modelDir = path.resolve(o.model);
const pairs: NliPair[] = spreadSample(sgdCandidatePairs(resolveDataDir(o.dataDir).dir).distinct, o.pairs);

async function probs(device: NliDevice, dtype: NliDtype): Promise<{ probs: NliProbs[]; device: string }> {
  const runner = await createNliRunner({ model: modelDir, device, dtype, maxPadFraction: 1 });
  const out = await runner.score(pairs);
  const used = runner.device;
  await runner.close();
  return { probs: out, device: used };
}

const reference = await probs('cpu', 'fp32');
const results = [];
let failed = false;
for (const dtype of o.dtype.split(',').map((d) => parseDtype(d.trim()) as NliDtype)) {
  const got = await probs(o.device, dtype);
  let maxDiff = 0;
  let agree = 0;
  for (let i = 0; i < pairs.length; i++) {
    for (const k of ['entailment', 'neutral', 'contradiction'] as const) maxDiff = Math.max(maxDiff, Math.abs(got.probs[i][k] - reference.probs[i][k]));
    if (argmaxLabel(got.probs[i]) === argmaxLabel(reference.probs[i])) agree++;
  }
  const limit = LIMITS[dtype];
  const argmaxOk = dtype !== 'fp32' || agree === pairs.length;
  const ok = maxDiff <= limit && argmaxOk;
  failed ||= !ok;
  results.push({ dtype, device: got.device, pairs: pairs.length, maxDiff, limit, argmaxAgreement: agree / pairs.length, ok });
  console.log(
    `${got.device} ${dtype} vs cpu fp32 on ${pairs.length} SGD pairs: max |prob diff| ${maxDiff.toExponential(2)} (limit ${limit}), ` +
      `argmax agreement ${agree}/${pairs.length} -> ${ok ? 'OK' : 'FAIL'}`,
  );
}
if (o.json) writeFileSync(o.json, JSON.stringify({ device: o.device, results }, null, 2) + '\n');
if (failed) process.exitCode = 1;
