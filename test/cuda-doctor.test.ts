import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDoctor, type DoctorReport } from '../src/nli/cuda/doctor.js';
import { findCudaLibraries } from '../src/nli/cuda/libraries.js';
import { probeProvider } from '../src/nli/cuda/probe.js';
import { checkProviderDir, embeddedOrtVersion, ortInstall, PROVIDER_STAMP, REGISTRY_PROVIDER, setupCudaProvider } from '../src/nli/cuda/provider.js';
import { runCli, runProcess } from './helpers/cli.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'todeval-doctor-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A stand-in provider library: just the strings doctor reads from the real one (ORT version, cuBLAS soname). */
function fakeProviderLib(file: string, ortVersion: string): void {
  writeFileSync(file, Buffer.concat([Buffer.alloc(1000, 7), Buffer.from(`\0${ortVersion}\0libcublas.so.13\0`), Buffer.alloc(1000, 9)]));
}

function fakeProviderDir(name: string, ortVersion: string | undefined, withShared = true): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir, { recursive: true });
  if (withShared) writeFileSync(path.join(dir, 'libonnxruntime_providers_shared.so'), 'shared');
  if (ortVersion) fakeProviderLib(path.join(dir, 'libonnxruntime_providers_cuda.so'), ortVersion);
  return dir;
}

describe('todeval doctor on this CPU machine', () => {
  // This machine has no NVIDIA driver or device (the test says so when that changes).
  const cpuOnly = !existsSync('/dev/nvidia0') && !existsSync('/dev/nvidiactl');

  it.skipIf(!cpuOnly)('says what the CPU can do and shows no GPU fix; --device cuda shows the CUDA pieces and their fixes, exit 2', async () => {
    const auto = await runCli(['doctor']);
    expect(auto.code).toBe(0);
    expect(auto.stdout).toMatch(/^cpu\s+.+: \d+ cores, [\d.]+ GiB/m);
    expect(auto.stdout).toMatch(/provider cpu\s+loads and runs/);
    expect(auto.stdout).toMatch(/^gpu\s+none \(no NVIDIA driver or device\)/m);
    // No GPU line of any kind: no CUDA provider, library, driver or cuDNN row or fix.
    expect(auto.stdout).not.toMatch(/provider cuda|CUDA provider|libcu|cuDNN|cuBLAS|NVIDIA driver for|cuda:setup|nvidia-/);
    expect(auto.stdout).toMatch(/--device auto: can run \(would use cpu\)/);
    const cpu = await runCli(['doctor', '--device', 'cpu', '--json']);
    expect(cpu.code).toBe(0);
    const report = JSON.parse(cpu.stdout) as DoctorReport;
    expect(report.gpu).toBe(false);
    expect(report.cpu.cores).toBeGreaterThan(0);
    // The float-kernel class q8-row2 signatures carry, measured by the probe (src/nli/cpu-kernels.ts).
    expect(report.cpu.kernels).toMatch(/^(fma|no-fma|probe-[0-9a-f]{12})$/);
    expect(auto.stdout).toContain(`cpu kernels        ${report.cpu.kernels}: q8-row2 scores are bit-identical on CPUs of this class only`);
    expect(report.onnxruntime.version).toBe('1.29.0');
    expect(report.fixes.filter((f) => /cuda|nvidia|cudnn|cublas/i.test(`${f.problem} ${f.fix}`))).toEqual([]);

    const cuda = await runCli(['doctor', '--device', 'cuda']);
    expect(cuda.code).toBe(2);
    expect(cuda.stdout).toMatch(/provider cuda\s+not available: /);
    expect(cuda.stdout).toContain('npm run cuda:setup');
    expect(cuda.stdout).toContain('ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node --ignore-scripts=false');
    expect(cuda.stdout).toContain('--device cuda: cannot run here');
  }, 180_000);

  it('lists a stand-in built with models build-standin as a stand-in, and still asks for a real model', async () => {
    const dir = path.join(tmp, 'cwd');
    mkdirSync(path.join(dir, 'models'), { recursive: true });
    const built = await runCli(['models', 'build-standin', 'lexical', '--out', path.join(dir, 'models', 'lexical')]);
    expect(built.code, built.stderr).toBe(0);
    const r = await runDoctor({ cwd: dir, env: { HF_HOME: path.join(tmp, 'no-hub') } });
    expect(r.models.standins).toContainEqual({ dir: path.join(dir, 'models', 'lexical'), kind: 'lexical-standin', modelId: 'local:lexical-standin' });
    expect(r.fixes.find((f) => f.problem.startsWith('no NLI model'))?.problem).toMatch(/only stand-ins: .*local:lexical-standin.*, whose numbers are not SGSAcc/);
  }, 180_000);

  it('names a provider built for another ONNX Runtime, and a missing provider library', async () => {
    const mismatch = await runCli(['doctor', '--provider-dir', fakeProviderDir('mismatch', '1.28.0'), '--json']);
    const m = JSON.parse(mismatch.stdout) as DoctorReport;
    expect(m.cudaProvider.problems).toEqual([
      'libonnxruntime_providers_cuda.so was built for ONNX Runtime 1.28.0 but onnxruntime-node is 1.29.0; the versions must match',
    ]);
    expect(m.cudaProvider.cudaMajor).toBe('13');
    const missing = await runCli(['doctor', '--device', 'cuda', '--provider-dir', fakeProviderDir('half', undefined)]);
    expect(missing.stdout).toMatch(/CUDA execution provider missing: no libonnxruntime_providers_cuda\.so in .*half/);
    expect(missing.stdout).toContain('npm run cuda:setup');
  }, 180_000);
});

describe('CUDA provider files', () => {
  it('reads the ONNX Runtime version a provider was built for, and accepts a matching one', () => {
    const dir = fakeProviderDir('match', '1.29.0');
    expect(embeddedOrtVersion(path.join(dir, 'libonnxruntime_providers_cuda.so'))).toBe('1.29.0');
    const check = checkProviderDir(dir, '1.29.0');
    expect(check.ok).toBe(true);
    expect(check.libs.map((l) => l.present)).toEqual([true, true]);
  });

  it('cuda:setup places the two libraries from the package and refuses a version mismatch', async () => {
    const pack = async (name: string, ortVersion: string): Promise<string> => {
      const root = path.join(tmp, name);
      const libDir = path.join(root, REGISTRY_PROVIDER.libDir);
      mkdirSync(libDir, { recursive: true });
      fakeProviderLib(path.join(libDir, 'libonnxruntime_providers_cuda.so'), ortVersion);
      writeFileSync(path.join(libDir, 'libonnxruntime_providers_shared.so'), 'shared');
      const tgz = path.join(tmp, `${name}.tgz`);
      const tar = await runProcess('tar', ['-czf', tgz, '-C', root, 'package']);
      if (tar.code !== 0) throw new Error(`tar: ${tar.stderr}`);
      return tgz;
    };
    const bin = path.join(tmp, 'ortbin');
    mkdirSync(bin);
    const lines: string[] = [];
    const placed = setupCudaProvider({ tarball: await pack('good', '1.29.0'), binDir: bin, log: (l) => lines.push(l) });
    expect(placed.placed.map((p) => path.basename(p))).toEqual(['libonnxruntime_providers_shared.so', 'libonnxruntime_providers_cuda.so']);
    expect(checkProviderDir(bin, ortInstall().version).ok).toBe(true);
    expect(JSON.parse(readFileSync(path.join(bin, PROVIDER_STAMP), 'utf8')).package).toBe(`${REGISTRY_PROVIDER.packageName}@${REGISTRY_PROVIDER.version}`);
    const other = path.join(tmp, 'ortbin2');
    mkdirSync(other);
    const oldTarball = await pack('old', '1.28.0');
    expect(() => setupCudaProvider({ tarball: oldTarball, binDir: other, log: () => {} })).toThrow(
      /built for ONNX Runtime 1\.28\.0, onnxruntime-node is 1\.29\.0; refusing the mismatch/,
    );
    expect(existsSync(path.join(other, 'libonnxruntime_providers_cuda.so'))).toBe(false);
  });

  it('finds CUDA libraries on LD_LIBRARY_PATH and in a Python environment, with the export line for the latter', () => {
    const ld = path.join(tmp, 'ld');
    mkdirSync(ld);
    writeFileSync(path.join(ld, 'libcublas.so.13'), '');
    const site = path.join(tmp, 'site');
    const cu13 = path.join(site, 'nvidia', 'cu13', 'lib');
    mkdirSync(cu13, { recursive: true });
    writeFileSync(path.join(cu13, 'libcudnn.so.9'), '');
    const fakePython = path.join(tmp, 'fake-python');
    writeFileSync(fakePython, `#!/bin/sh\necho ${site}\n`);
    chmodSync(fakePython, 0o755);
    const found = findCudaLibraries('13', { LD_LIBRARY_PATH: ld, TODEVAL_PYTHON: fakePython, PATH: '/nonexistent' });
    expect(found.hits.find((h) => h.name === 'libcublas.so.13')).toMatchObject({ dir: ld, via: 'LD_LIBRARY_PATH' });
    expect(found.missing.find((h) => h.name === 'libcudnn.so.9')).toMatchObject({ dir: cu13, via: 'python' });
    expect(found.toAdd).toContain(cu13);
  });

  it('the probe model runs on the CPU provider (and CUDA fails cleanly here)', async () => {
    expect((await probeProvider('cpu')).ok).toBe(true);
    const cuda = await probeProvider('cuda');
    expect(cuda.ok).toBe(false);
    expect(cuda.error).toBeTruthy();
  });
});
