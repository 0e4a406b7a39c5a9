import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findDataDir } from '../../data/data-dir.js';
import { findPackageFile } from '../../util/package-file.js';
import { localModelId, standinKind, type StandinKind } from '../onnx-builder/standins.js';
import { DEFAULT_MODEL_ID, hubCacheDir, listCachedModels, Q8_SIGNATURE_DTYPE, type PresentModel } from '../model-store.js';
import { cpuKernelClass } from '../cpu-kernels.js';
import { findCudaLibraries, ldLibraryPathFix, type LibraryHit } from './libraries.js';
import { probeProvider, type ProbeResult } from './probe.js';
import { checkProviderDir, OFFICIAL_CUDA_INSTALL, ortInstall, REGISTRY_CUDA_INSTALL, REGISTRY_PROVIDER, type ProviderCheck } from './provider.js';

export type DoctorDevice = 'auto' | 'cpu' | 'cuda';

export interface DoctorReport {
  node: { version: string; platform: string };
  onnxruntime: { version: string; binDir: string };
  providers: ProbeResult[];
  cudaProvider: ProviderCheck;
  cudaLibraries: { found: LibraryHit[]; missing: LibraryHit[] };
  models: { cacheDir: string; present: PresentModel[]; standins: LocalStandin[] };
  /** What the CPU offers (cores, memory, the instruction sets the q8 kernels use). */
  cpu: CpuFacts;
  /**
   * Whether this machine has an NVIDIA GPU (a driver library or a /dev/nvidia device). Without one,
   * and unless --device cuda is asked, the CUDA rows and fixes are not shown: they fix nothing here.
   */
  gpu: boolean;
  data: { dir?: string; source?: string };
  /** One line per missing piece: what is wrong, then the one command that fixes it. */
  fixes: { problem: string; fix: string }[];
  device: DoctorDevice;
  /** Whether `--device <device>` can run here. */
  canRun: boolean;
}

export interface DoctorOptions {
  device?: DoctorDevice;
  /** Check this folder for the provider libraries instead of onnxruntime-node's (tests, unusual layouts). */
  providerDir?: string;
  env?: NodeJS.ProcessEnv;
  /** The folder whose models/ and .cache/models/ are searched for stand-ins (default: the working folder). */
  cwd?: string;
}

export interface CpuFacts {
  model: string;
  cores: number;
  memoryGiB: number;
  /** Of avx2, avx512f, avx512_vnni, avx_vnni: those /proc/cpuinfo lists (empty where it cannot be read). */
  features: string[];
  /** The float-kernel class onnxruntime's CPU provider runs here (cpu-kernels.ts), which q8-row2 signatures carry; absent when it does not load. */
  kernels?: string;
}

/** A stand-in model folder doctor found: a test model, never a language model. */
export interface LocalStandin {
  dir: string;
  kind: StandinKind;
  modelId: string;
}

const CPU_FEATURES = ['avx2', 'avx512f', 'avx512_vnni', 'avx_vnni'];

function cpuFacts(): CpuFacts {
  const cpus = os.cpus();
  let flags: string[] = [];
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('flags'));
    flags = line ? line.split(':')[1].trim().split(/\s+/) : [];
  } catch {
    // not Linux: no flags to show
  }
  return {
    model: cpus[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    features: CPU_FEATURES.filter((f) => flags.includes(f)),
  };
}

/**
 * Stand-in models where the docs build them: models/ and .cache/models/ under the working folder
 * and under the package (`todeval models build-standin`, `npm run example`), and $TODEVAL_MODEL.
 */
function findStandins(env: NodeJS.ProcessEnv, cwd: string): LocalStandin[] {
  const roots = [path.join(cwd, 'models'), path.join(cwd, '.cache', 'models'), findPackageFile('models'), findPackageFile('.cache', 'models')];
  const dirs = new Set<string>();
  for (const root of roots) {
    if (!root || !existsSync(root)) continue;
    for (const name of readdirSync(root, { withFileTypes: true })) if (name.isDirectory()) dirs.add(path.resolve(root, name.name));
  }
  if (env.TODEVAL_MODEL && existsSync(env.TODEVAL_MODEL)) dirs.add(path.resolve(cwd, env.TODEVAL_MODEL));
  return [...dirs].sort().flatMap((dir) => {
    const kind = standinKind(dir);
    return kind ? [{ dir, kind, modelId: localModelId(dir) }] : [];
  });
}

/** Everything `todeval doctor` reports; providers are tried for real, not guessed from files. */
export async function runDoctor(opts: DoctorOptions = {}): Promise<DoctorReport> {
  const env = opts.env ?? process.env;
  const device = opts.device ?? 'auto';
  const ort = ortInstall();
  const providerDir = opts.providerDir ? path.resolve(opts.providerDir) : ort.binDir;
  const cudaProvider = checkProviderDir(providerDir, ort.version);
  const cudaMajor = cudaProvider.cudaMajor ?? REGISTRY_PROVIDER.cuda;
  const libs = findCudaLibraries(cudaMajor, env);
  const providers = [await probeProvider('cpu'), await probeProvider('cuda')];
  const fixes: { problem: string; fix: string }[] = [];
  const driver = libs.missing.find((l) => l.name === 'libcuda.so.1');
  const gpu = !driver || hasNvidiaDevice();
  // On a machine without a GPU the CUDA pieces fix nothing, unless CUDA is what was asked for.
  const cudaFixes = gpu || device === 'cuda';

  for (const p of cudaFixes ? cudaProvider.problems : []) {
    fixes.push({ problem: p, fix: `${REGISTRY_CUDA_INSTALL}; or with NuGet access (CUDA 12 + cuDNN 9): ${OFFICIAL_CUDA_INSTALL}` });
  }
  if (driver && cudaFixes) fixes.push({ problem: 'no NVIDIA driver (libcuda.so.1 not found)', fix: 'install the NVIDIA driver for this GPU (nvidia-smi must work)' });
  const reachable = cudaFixes ? libs.missing.filter((l) => l.dir && l !== driver) : [];
  if (reachable.length > 0) {
    fixes.push({
      problem: `${reachable.map((l) => l.name).join(', ')} found outside the loader's path (${[...new Set(reachable.map((l) => l.dir))].join(', ')})`,
      fix: ldLibraryPathFix(libs.toAdd),
    });
  }
  const absent = cudaFixes ? libs.missing.filter((l) => !l.dir && l !== driver) : [];
  if (absent.length > 0) {
    const pips = [...new Set(absent.map((l) => l.pip).filter(Boolean))];
    fixes.push({
      problem: `CUDA ${cudaMajor} libraries missing: ${absent.map((l) => l.name).join(', ')}`,
      fix: `pip install ${pips.join(' ')} (then run todeval doctor again: it finds them in site-packages), or install CUDA ${cudaMajor} and cuDNN 9`,
    });
  }
  const cuda = providers.find((p) => p.provider === 'cuda');
  if (cuda && !cuda.ok && cudaFixes && fixes.length === 0) {
    fixes.push({ problem: `the CUDA provider did not load: ${cuda.error}`, fix: 'TODEVAL_DEBUG=1 todeval doctor --device cuda shows ONNX Runtime\'s own log' });
  }
  const cacheDir = hubCacheDir(env);
  const present = listCachedModels(cacheDir);
  const standins = findStandins(env, opts.cwd ?? process.cwd());
  const realModel = present.length > 0 || (Boolean(env.TODEVAL_MODEL) && !standins.some((m) => m.dir === path.resolve(opts.cwd ?? process.cwd(), env.TODEVAL_MODEL!)));
  if (!realModel) {
    const only = standins.length > 0 ? ` (only stand-ins: ${standins.map((m) => m.modelId).join(', ')}, whose numbers are not SGSAcc)` : '';
    fixes.push({ problem: `no NLI model in ${cacheDir}${only}`, fix: 'todeval models pull   (or pass --model DIR)' });
  }
  const data = findDataDir(undefined, process.cwd(), env);
  if (!data) fixes.push({ problem: 'no data directory', fix: 'todeval data pull   (or pass --data-dir / set TODEVAL_DATA)' });

  const cpuOk = providers[0].ok;
  const canRun = device === 'cuda' ? Boolean(cuda?.ok) : cpuOk || Boolean(cuda?.ok);
  return {
    node: { version: process.version, platform: `${process.platform}-${process.arch}` },
    onnxruntime: { version: ort.version, binDir: ort.binDir },
    providers,
    cudaProvider,
    cudaLibraries: { found: libs.hits, missing: libs.missing },
    models: { cacheDir, present, standins },
    cpu: { ...cpuFacts(), ...(cpuOk ? { kernels: await cpuKernelClass() } : {}) },
    gpu,
    data: { dir: data?.dir, source: data?.source },
    fixes,
    device,
    canRun,
  };
}

function hasNvidiaDevice(): boolean {
  return existsSync('/dev/nvidia0') || existsSync('/dev/nvidiactl');
}

function quantizeCommand(id: string): string {
  return `todeval models quantize${id === DEFAULT_MODEL_ID ? '' : ` --model ${id}`}`;
}

/** The report as the terminal shows it. */
export function formatDoctor(r: DoctorReport): string {
  const lines: string[] = [];
  const row = (k: string, v: string) => lines.push(`${k.padEnd(18)} ${v}`);
  row('node', `${r.node.version} (${r.node.platform})`);
  row('onnxruntime-node', `${r.onnxruntime.version} (${r.onnxruntime.binDir})`);
  const c = r.cpu;
  row('cpu', `${c.model}: ${c.cores} cores, ${c.memoryGiB} GiB${c.features.length > 0 ? `, ${c.features.join(' ')}` : ''}`);
  // Measured by a probe, not read from the flags above (an emulator may show the host's flags).
  if (c.kernels) row('cpu kernels', `${c.kernels}: q8-row2 scores are bit-identical on CPUs of this class only (signature key kernels)`);
  const showCuda = r.gpu || r.device === 'cuda';
  for (const p of r.providers) {
    if (p.provider === 'cuda' && !showCuda) continue;
    row(`provider ${p.provider}`, p.ok ? `loads and runs (${(p.ms ?? 0).toFixed(0)} ms)` : `not available: ${p.error}`);
  }
  if (showCuda) {
    const cp = r.cudaProvider;
    const libsLine = cp.libs.map((l) => `${l.name} ${l.present ? `present${l.builtFor ? ` (ORT ${l.builtFor})` : ''}` : 'MISSING'}`).join(', ');
    row('CUDA provider', `${libsLine}${cp.cudaMajor ? `; links CUDA ${cp.cudaMajor}` : ''}${cp.source ? `; from ${cp.source}` : ''} in ${cp.dir}`);
    for (const l of r.cudaLibraries.found) row(`  ${l.name}`, `${l.what}: ${l.dir} (${l.via})`);
    for (const l of r.cudaLibraries.missing) row(`  ${l.name}`, `${l.what}: ${l.dir ? `in ${l.dir}, not on the loader's path` : 'MISSING'}`);
  } else {
    row('gpu', 'none (no NVIDIA driver or device): the CPU runs everything; `todeval doctor --device cuda` checks the CUDA pieces');
  }
  if (r.models.present.length === 0) row('models', `none in ${r.models.cacheDir}`);
  for (const m of r.models.present) {
    row('model', `${m.id}@${m.revision.slice(0, 12)} (${m.dtypes.join(', ')}) in ${m.dir}`);
    // Which cross-encoder it is and how its pairs are encoded (docs/nli.md "Other cross-encoders").
    row('  family', `${m.family}; pair ${m.pairEncoding}`);
    // The two int8 schemes score differently; say which one --dtype q8 will load (docs/nli.md "q8").
    if (m.q8Row === Q8_SIGNATURE_DTYPE.rowV1) {
      row('  q8', `per-row int8 built before graph 2 (signature q8-row): its softmax differs between AVX-512 and AVX2; \`${quantizeCommand(m.id)}\` rebuilds it as q8-row2`);
    } else if (m.dtypes.includes('q8') && m.q8Row !== Q8_SIGNATURE_DTYPE.tensor) {
      row('  q8', `per-row int8 (signature ${m.q8Row ?? Q8_SIGNATURE_DTYPE.row}): a pair scores the same in any batch, and on any CPU of the same kernel class`);
    } else if (m.dtypes.includes('q8-tensor') || m.q8Row === Q8_SIGNATURE_DTYPE.tensor) {
      row('  q8', `only the hub's per-tensor int8 file (signature q8-tensor): its scores move with the batch and the CPU; \`${quantizeCommand(m.id)}\` builds the per-row one`);
    }
  }
  for (const m of r.models.standins) row('stand-in', `${m.modelId} in ${m.dir}: stand-in (${m.kind}), NOT a language model: its numbers are not SGSAcc`);
  row('data', r.data.dir ? `${r.data.dir} (${r.data.source})` : 'none');
  if (r.fixes.length > 0) {
    lines.push('', 'to fix:');
    for (const f of r.fixes) lines.push(`- ${f.problem}`, `    ${f.fix}`);
  }
  lines.push('', `--device ${r.device}: ${r.canRun ? 'can run' : 'cannot run here'}${r.device === 'auto' ? ` (would use ${r.providers.find((p) => p.provider === 'cuda')?.ok ? 'cuda' : 'cpu'})` : ''}`);
  return lines.join('\n') + '\n';
}
