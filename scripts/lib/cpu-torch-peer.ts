/**
 * The PyTorch CPU peer as one of bench:nli's contenders: a persistent Python process
 * (scripts/lib/torch_peer_server.py, which imports ../shared/tools/peer-torch/roberta_torch.py) fed
 * round by round over a pipe, so it takes its turn in the same small rounds as todeval's contenders
 * and the machine's load falls on all alike. Each round it scores the round's token ids (from
 * todeval's tokenizer) and reports the seconds it took inside Python, padding included,
 * tokenization not: the best case for torch.
 *
 * Debian's torch calls the system libblas.so.3; the pthread OpenBLAS (Debian's default) fights
 * torch's OpenMP threads on small machines, so the peer runs with the OpenMP OpenBLAS (if
 * installed) and passive OpenMP waits, as the peer folder's README prescribes.
 */
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { REPO_ROOT } from './large-model.js';

// Asynchronous probes: a vitest worker imports this (test/torch-peer-server.test.ts), and a worker
// blocked on a child process cannot answer vitest's RPC under load.
const execFileAsync = promisify(execFile);

/** An interpreter that has torch and onnx: $PYTHON, else Debian's system one, else python3 on PATH. */
async function findPython(): Promise<string> {
  for (const py of [process.env.PYTHON, '/usr/bin/python3', 'python3'].filter((p): p is string => !!p)) {
    try {
      await execFileAsync(py, ['-c', 'import torch, onnx']);
      return py;
    } catch {
      // next
    }
  }
  throw new Error('--peer-torch: no python3 with torch and onnx; apt-get install -y python3-torch python3-onnx python3-numpy libopenblas0-openmp');
}

async function openmpBlasDir(): Promise<string | undefined> {
  try {
    const lib = (await execFileAsync('dpkg', ['-L', 'libopenblas0-openmp'], { encoding: 'utf8' })).stdout
      .split('\n')
      .find((l) => l.endsWith('/libblas.so.3'));
    return lib ? path.dirname(lib) : undefined;
  } catch {
    return undefined;
  }
}

export interface TorchPeerInfo {
  torch: string;
  threads: number;
  blas: string[];
  int8Engine: string | null;
  loadSeconds: number;
}

export interface TorchRun {
  seconds: number;
  /** CPU seconds of the peer process (all its threads) over the same span. */
  cpuSeconds: number;
  /** Logits per row, in the order the rows were sent; label order of the model's config (id2label). */
  logits: number[][];
  real: number;
  padded: number;
}

export class TorchPeerProcess {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly lines: Interface;
  private readonly waiting: ((line: string) => void)[] = [];
  private exited: string | undefined;
  info?: TorchPeerInfo;

  private constructor(peerDir: string, modelDir: string, threads: number, python: string, blas: string | undefined) {
    this.child = spawn(python, [path.join(REPO_ROOT, 'scripts', 'lib', 'torch_peer_server.py'), peerDir, modelDir, '--threads', String(threads)], {
      env: { ...process.env, OMP_WAIT_POLICY: 'PASSIVE', ...(blas ? { LD_LIBRARY_PATH: blas } : {}) },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.lines = createInterface({ input: this.child.stdout });
    this.lines.on('line', (l) => this.waiting.shift()?.(l));
    this.child.on('exit', (code, signal) => {
      this.exited = `exit ${code ?? signal}`;
      for (const w of this.waiting.splice(0)) w(JSON.stringify({ error: `the PyTorch peer ended (${this.exited}); its output is above` }));
    });
  }

  /** Starts the peer and waits until its fp32 and int8 models are loaded. */
  static async start(peerDir: string, modelDir: string, threads: number): Promise<TorchPeerProcess> {
    const script = path.join(peerDir, 'roberta_torch.py');
    if (!existsSync(script)) throw new Error(`--peer-torch: ${script} not found`);
    const p = new TorchPeerProcess(peerDir, modelDir, threads, await findPython(), await openmpBlasDir());
    p.info = (await p.next()) as unknown as TorchPeerInfo;
    return p;
  }

  private next(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      if (this.exited) return reject(new Error(`the PyTorch peer ended (${this.exited})`));
      this.waiting.push((line) => {
        const msg = JSON.parse(line) as Record<string, unknown>;
        if (typeof msg.error === 'string') reject(new Error(`--peer-torch: ${msg.error}`));
        else resolve(msg);
      });
    });
  }

  private ask(msg: object): Promise<Record<string, unknown>> {
    const answer = this.next();
    this.child.stdin.write(`${JSON.stringify(msg)}\n`);
    return answer;
  }

  /** max |logit diff| of torch fp32 vs ONNX Runtime's logits on the same rows, as one padded batch and each alone. */
  async check(rows: number[][], padId: number, batchLogits: number[][], singleLogits: number[][]): Promise<{ batch: number; single: number }> {
    return (await this.ask({ op: 'check', rows, padId, batchLogits, singleLogits })) as unknown as { batch: number; single: number };
  }

  /** Scores the rows: in the given batches (indices into ids), else the peer's own plan at `batch` rows. */
  async run(variant: 'fp32' | 'int8', batch: number, ids: number[][], padId: number, batches?: number[][]): Promise<TorchRun> {
    return (await this.ask({ op: 'run', variant, batch, ids, padId, ...(batches ? { batches } : {}) })) as unknown as TorchRun;
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end(`${JSON.stringify({ op: 'quit' })}\n`);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
    this.lines.close();
  }

  /** Ends the process at once (a failed bench). */
  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}
