/**
 * Prints this CPU's kernel probe hash (src/nli/cpu-kernels.ts): run directly, or under
 * `qemu-x86_64 -cpu Haswell|Nehalem` so that onnxruntime picks that CPU's float kernels.
 *
 *   node --import tsx test/helpers/kernel-probe-run.ts
 */
import { kernelProbeHash } from '../../src/nli/cpu-kernels.js';

process.stdout.write(`${await kernelProbeHash()}\n`);
