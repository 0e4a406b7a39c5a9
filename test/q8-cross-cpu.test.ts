import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kernelClassOf, kernelProbeHash } from '../src/nli/cpu-kernels.js';
import { buildRandomRoberta, ONNX_BUILDER_VERSION, RANDOM_MODEL_MANIFEST } from '../src/nli/onnx-builder/index.js';
import { Q8_ROW_FILE_REVISION, Q8_ROW_GRAPH } from '../src/nli/onnx-builder/quantize.js';
import { PairTokenizer } from '../src/nli/tokenizer.js';
import { runProcess } from './helpers/cli.js';
import { DATA_DIR, hasData, REPO_ROOT, TOKENIZER_DIR } from './helpers/shared.js';

/**
 * q8-row2 across x86 CPUs, as a user with another CPU would see it: the same file and pairs run
 * natively (this host) and under qemu-user's emulated CPUs, whose CPUID makes onnxruntime's MLAS
 * pick their kernels: -cpu Haswell (AVX2+FMA, no AVX-512, no VNNI) and -cpu Nehalem (SSE4.2, no
 * FMA). Within the kernel class (the probe of src/nli/cpu-kernels.ts) the logits must be
 * bit-identical; Nehalem must be another class, so its scores never compare with ours.
 *
 * The model has roberta-large's width (hidden 1024, 16 heads, intermediate 4096: dot products of
 * 1024 and 4096, where a last-bit difference before a row quantization flipped whole steps in the
 * first row graph) and one layer, to keep the emulated runs short; the pairs are real SGD turns of
 * 287+ characters, the ones that moved (docs/nli.md, "q8 across CPUs").
 */
// qemu-x86_64 runs this host's own node binary under another x86 CPU: an x86-64 host only.
const qemu = await (async () => {
  if (process.arch !== 'x64') return undefined;
  const r = await runProcess('sh', ['-c', 'command -v qemu-x86_64']);
  return (r.code === 0 && r.stdout.trim()) || undefined;
})();
if (!qemu) console.warn(`[skip] q8 across CPUs: ${process.arch !== 'x64' ? `an x86-64 host is needed (this is ${process.arch})` : 'qemu-x86_64 not installed (apt-get install qemu-user)'}`);

const SGD_FILE = path.join('sgd', 'test', 'dialogues_001.json');
const PAIRS = 4;
const LONG = 287;

/**
 * The wide one-layer q8 model, built once into .cache (keyed by builder and q8 graph versions and the
 * row file's revision, which changes the bytes but not the scores). Built
 * in a child process by dist/'s builder (current: the tests' globalSetup builds it): its CPU-seconds
 * of synchronous work would otherwise hold this worker's event loop, and vitest's calls to it, as long.
 */
async function cachedWideQ8(): Promise<string> {
  const dir = path.join(REPO_ROOT, '.cache', 'models', `wide1-q8-random-roberta-v${ONNX_BUILDER_VERSION}-g${Q8_ROW_GRAPH}.${Q8_ROW_FILE_REVISION}`);
  if (existsSync(path.join(dir, RANDOM_MODEL_MANIFEST))) return dir;
  mkdirSync(path.dirname(dir), { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  try {
    const builder = pathToFileURL(path.join(REPO_ROOT, 'dist', 'src', 'nli', 'onnx-builder', 'index.js')).href;
    const options: Parameters<typeof buildRandomRoberta>[0] = { outDir: tmp, size: 'large', overrides: { numLayers: 1 }, dtype: 'q8', tokenizerDir: TOKENIZER_DIR };
    const code = `const { buildRandomRoberta } = await import(${JSON.stringify(builder)}); buildRandomRoberta(JSON.parse(process.argv[1]));`;
    const built = await runProcess(process.execPath, ['--input-type=module', '-e', code, JSON.stringify(options)]);
    if (built.code !== 0) throw new Error(`building the wide q8 model failed (exit ${built.code}):\n${built.stderr}`);
    try {
      renameSync(tmp, dir);
    } catch (e) {
      if (!existsSync(path.join(dir, RANDOM_MODEL_MANIFEST))) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** (system utterance, the user turn before it) from the SGD test files in order, where the two hold 287+ characters. */
function longSgdPairs(n: number): { premise: string; hypothesis: string }[] {
  const dir = path.join(DATA_DIR, path.dirname(SGD_FILE));
  const files = readdirSync(dir).filter((f) => /^dialogues_\d+\.json$/.test(f)).sort();
  const dialogues = files.slice(0, 4).flatMap((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { turns: { speaker: string; utterance: string }[] }[]);
  const out: { premise: string; hypothesis: string }[] = [];
  for (const d of dialogues) {
    for (let i = 1; i < d.turns.length && out.length < n; i++) {
      const [user, system] = [d.turns[i - 1], d.turns[i]];
      if (system.speaker === 'SYSTEM' && system.utterance.length + user.utterance.length >= LONG) out.push({ premise: system.utterance, hypothesis: user.utterance });
    }
  }
  return out;
}

describe.skipIf(!qemu || !hasData(SGD_FILE))('q8-row2 across x86 CPUs (qemu-x86_64): bit-identical within a kernel class', () => {
  let tmp: string;
  let onnxFile: string;
  let idsFile: string;
  let native: { probe: string; logits: string[] };

  // Plain JavaScript over dist/ (built by the tests' globalSetup): tsx's transform under qemu costs ~12 s a run.
  const runner = path.join(REPO_ROOT, 'test', 'helpers', 'q8-pairs-run.mjs');
  const run = async (cpu?: string): Promise<{ probe: string; logits: string[] }> => {
    const args = [process.execPath, runner, onnxFile, idsFile];
    const [cmd, ...rest] = cpu ? [qemu!, '-cpu', cpu, ...args] : args;
    const { stdout } = await promisify(execFile)(cmd, rest, { cwd: REPO_ROOT, timeout: 480_000, maxBuffer: 1 << 24 });
    return JSON.parse(stdout.trim().split('\n').pop()!) as { probe: string; logits: string[] };
  };

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'todeval-q8-xcpu-'));
    const dir = await cachedWideQ8();
    onnxFile = path.join(dir, 'onnx', 'model_q8_row.onnx');
    const tok = PairTokenizer.fromFiles(path.join(dir, 'tokenizer.json'), path.join(dir, 'tokenizer_config.json'));
    const pairs = longSgdPairs(PAIRS);
    expect(pairs).toHaveLength(PAIRS);
    idsFile = path.join(tmp, 'ids.json');
    writeFileSync(idsFile, JSON.stringify(pairs.map((p) => tok.encodePair(p.premise, p.hypothesis).ids)));
    native = await run();
  }, 900_000);
  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('this host runs the FMA kernels (AVX2+FMA or AVX-512), measured by the probe', async () => {
    expect(native.probe).toBe(await kernelProbeHash());
    expect(kernelClassOf(native.probe)).toBe('fma');
  });

  it('an AVX2+FMA CPU without AVX-512 or VNNI (-cpu Haswell) is the same class and gives every long pair the same logits bit for bit', async () => {
    const haswell = await run('Haswell');
    expect(kernelClassOf(haswell.probe)).toBe('fma');
    expect(haswell.logits).toHaveLength(PAIRS);
    expect(haswell.logits).toEqual(native.logits);
  }, 600_000);

  it('an SSE4.2 CPU without FMA (-cpu Nehalem) is another class (no-fma): its q8-row2 signatures never equal ours', async () => {
    const { stdout } = await promisify(execFile)(qemu!, ['-cpu', 'Nehalem', process.execPath, path.join(REPO_ROOT, 'test', 'helpers', 'kernel-probe-run.mjs')], {
      cwd: REPO_ROOT,
      timeout: 240_000,
    });
    const hash = stdout.trim().split('\n').pop()!;
    expect(kernelClassOf(hash)).toBe('no-fma');
    expect(hash).not.toBe(native.probe);
  }, 300_000);
});
