import { existsSync } from 'node:fs';
import path from 'node:path';
import { pythonImports } from './run-fixture.js';
import { REPO_ROOT } from './shared.js';
import { TORCH_PYTHON } from './tiny-cross-encoders.js';

/** ../shared/tools/peer-torch (the PyTorch RoBERTa that loads an ONNX model's initializers), or $PEER_TORCH_DIR. */
export const PEER_TORCH = path.resolve(REPO_ROOT, process.env.PEER_TORCH_DIR ?? '../shared/tools/peer-torch');

/**
 * Why the PyTorch peer cannot run here (its folder, or torch/onnx/numpy for TORCH_PYTHON), or
 * undefined when it can. Asynchronous: a worker waiting on a child cannot answer vitest's RPC.
 */
export async function peerTorchMissing(): Promise<string | undefined> {
  const script = path.join(PEER_TORCH, 'roberta_torch.py');
  if (!existsSync(script)) return `no ${script} (set PEER_TORCH_DIR)`;
  if (!(await pythonImports(TORCH_PYTHON, ['torch', 'onnx', 'numpy']))) return `${TORCH_PYTHON} cannot import torch, onnx and numpy (Debian: apt-get install python3-torch python3-onnx python3-numpy)`;
  return undefined;
}
