/**
 * Prints this CPU's kernel probe hash (src/nli/cpu-kernels.ts, as built into dist/): run directly,
 * or under `qemu-x86_64 -cpu Haswell|Nehalem` so that onnxruntime picks that CPU's float kernels.
 *
 *   node test/helpers/kernel-probe-run.mjs
 *
 * Plain JavaScript over dist/, not TypeScript through tsx: tsx's transform under emulation costs
 * about 12 s a run.
 */
import { kernelProbeHash } from '../../dist/src/nli/cpu-kernels.js';

process.stdout.write(`${await kernelProbeHash()}\n`);
