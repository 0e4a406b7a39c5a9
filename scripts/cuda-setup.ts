/**
 * Registry-only CUDA set-up: fetch the ONNX Runtime 1.29.0 CUDA 13 provider libraries from the npm
 * registry and place them beside onnxruntime-node's libonnxruntime.so, then run doctor for cuda.
 *
 *   npm run cuda:setup [-- --tgz FILE]
 */
import { formatDoctor, runDoctor } from '../src/nli/cuda/doctor.js';
import { setupCudaProvider } from '../src/nli/cuda/provider.js';
import { isInputError } from '../src/util/errors.js';

const args = process.argv.slice(2).filter((a) => a !== '--');
const tgzAt = args.indexOf('--tgz');
try {
  setupCudaProvider({ tarball: tgzAt >= 0 ? args[tgzAt + 1] : undefined });
  const report = await runDoctor({ device: 'cuda' });
  process.stdout.write(formatDoctor(report));
  if (!report.canRun) process.exitCode = 2;
} catch (e) {
  if (!isInputError(e)) throw e;
  process.stderr.write(`todeval: ${e.oneLine()}\n`);
  process.exit(2);
}
