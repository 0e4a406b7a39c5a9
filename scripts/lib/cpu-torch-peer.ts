/**
 * The PyTorch CPU peer (../shared/tools/peer-torch/roberta_torch.py), timed inside bench:nli's run:
 * after each pass of todeval's contenders, the peer scores the same pass's token ids (fp32 eager
 * and `quantize_dynamic` int8), so the machine's load falls on both alike. The peer first checks its
 * logits against ONNX Runtime's on a few of the pairs; a failed check stops the bench, because a
 * faster wrong model proves nothing.
 *
 * Debian's torch calls the system libblas.so.3; the pthread OpenBLAS (Debian's default) fights
 * torch's OpenMP threads on small machines, so the peer runs with the OpenMP OpenBLAS (if
 * installed) and passive OpenMP waits, as the peer folder's README prescribes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { padRows } from '../../src/nli/feeds.js';
import { openSession } from '../../src/nli/session.js';

export interface TorchFigure {
  mode: string;
  batch: number;
  /** Seconds per pass over that pass's pairs. */
  seconds: number[];
  pairs: number[];
}

export interface TorchPeerResult {
  torch: string;
  figures: TorchFigure[];
  /** max |logit diff| vs ORT fp32 (padded batch, each alone), per pass. */
  checks: { batch: number; single: number }[];
}

/** An interpreter that has torch and onnx: $PYTHON, python3 on PATH, or Debian's system one. */
function findPython(): string {
  for (const py of [process.env.PYTHON, 'python3', '/usr/bin/python3'].filter((p): p is string => !!p)) {
    try {
      execFileSync(py, ['-c', 'import torch, onnx'], { stdio: 'ignore' });
      return py;
    } catch {
      // next
    }
  }
  throw new Error('--peer-torch: no python3 with torch and onnx; apt-get install -y python3-torch python3-onnx python3-numpy libopenblas0-openmp');
}

function openmpBlasDir(): string | undefined {
  try {
    const lib = execFileSync('dpkg', ['-L', 'libopenblas0-openmp'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')
      .find((l) => l.endsWith('/libblas.so.3'));
    return lib ? path.dirname(lib) : undefined;
  } catch {
    return undefined;
  }
}

export class CpuTorchPeer {
  private readonly python: string;
  private readonly script: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly tmp = mkdtempSync(path.join(os.tmpdir(), 'todeval-peer-'));
  private readonly result: TorchPeerResult = { torch: '', figures: [], checks: [] };

  constructor(
    peerDir: string,
    private readonly modelDir: string,
    private readonly threads: number,
    private readonly args = { sizes: '1,16,32', int8Sizes: '1,16,32' },
  ) {
    this.script = path.join(peerDir, 'roberta_torch.py');
    if (!existsSync(this.script)) throw new Error(`--peer-torch: ${this.script} not found`);
    this.python = findPython();
    const blas = openmpBlasDir();
    this.env = { ...process.env, OMP_WAIT_POLICY: 'PASSIVE', ...(blas ? { LD_LIBRARY_PATH: blas } : {}) };
  }

  /**
   * Times the peer on one pass's token ids. ORT fp32 logits of a few rows (one padded batch and each
   * alone) go with them for the peer's check; computed here with a short-lived session.
   */
  async timePass(onnxFp32: string, ids: number[][], padId: number): Promise<void> {
    const n = Math.min(8, ids.length);
    const indices = Array.from({ length: n }, (_, i) => Math.floor((i * ids.length) / n));
    const longest = ids.reduce((b, r, i) => (r.length > ids[b].length ? i : b), 0);
    if (n > 1 && !indices.includes(longest)) indices[n - 1] = longest;
    const rows = indices.map((i) => ids[i]);
    const session = await openSession(onnxFp32, { device: 'cpu', threads: this.threads, notice: () => {} });
    const split = (flat: Float32Array, k: number) => Array.from({ length: k }, (_, i) => Array.from(flat.subarray(i * 3, i * 3 + 3)));
    const batchLogits = split(await session.run(padRows(rows, padId)), n);
    const singleLogits: number[][] = [];
    for (const r of rows) singleLogits.push(split(await session.run(padRows([r], padId)), 1)[0]);
    await session.release();

    const pass = this.result.checks.length;
    const pairsFile = path.join(this.tmp, `pairs-${pass}.json`);
    const outFile = path.join(this.tmp, `torch-${pass}.json`);
    writeFileSync(pairsFile, JSON.stringify({ padId, ids, check: { n, indices, batchLogits, singleLogits } }));
    const run = spawnSync(
      this.python,
      [this.script, this.modelDir, pairsFile, '--threads', String(this.threads), '--sizes', this.args.sizes, '--int8-sizes', this.args.int8Sizes, '--int8-engine', 'onednn', '--json', outFile],
      { env: this.env, stdio: ['ignore', 'inherit', 'inherit'] },
    );
    if (run.status !== 0 || !existsSync(outFile)) throw new Error(`--peer-torch: the PyTorch peer failed (exit ${run.status ?? run.signal}); its output is above`);
    const out = JSON.parse(readFileSync(outFile, 'utf8')) as { torch: string; check: { batch: number; single: number }; figures: { mode: string; batch: number; seconds: number[] }[] };
    this.result.torch = out.torch;
    this.result.checks.push({ batch: out.check.batch, single: out.check.single });
    for (const f of out.figures) {
      let fig = this.result.figures.find((g) => g.mode === f.mode);
      if (!fig) this.result.figures.push((fig = { mode: f.mode, batch: f.batch, seconds: [], pairs: [] }));
      fig.seconds.push(f.seconds.reduce((a, b) => a + b, 0));
      fig.pairs.push(ids.length * f.seconds.length);
    }
  }

  done(): TorchPeerResult {
    rmSync(this.tmp, { recursive: true, force: true });
    return this.result;
  }
}

/** pairs/s of a peer figure over all passes. */
export function torchPairsPerSec(f: TorchFigure): number {
  return f.pairs.reduce((a, b) => a + b, 0) / f.seconds.reduce((a, b) => a + b, 0);
}
