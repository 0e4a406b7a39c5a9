import { execFileSync } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { MissingResourceError } from '../../util/errors.js';

/**
 * The ONNX Runtime CUDA execution provider is two shared libraries that must sit next to
 * onnxruntime-node's libonnxruntime.so and come from the very same ONNX Runtime release: the
 * provider calls into the runtime through an internal interface with no version tolerance.
 */
export const PROVIDER_LIBS = ['libonnxruntime_providers_shared.so', 'libonnxruntime_providers_cuda.so'] as const;

/**
 * Registry-only source of the CUDA 13 provider for ONNX Runtime 1.29.0 (an npm package built for
 * Unity that carries the Linux x64 provider libraries); onnxruntime-node is pinned to the same
 * release in package.json for this reason.
 */
export const REGISTRY_PROVIDER = {
  packageName: 'com.github.asus4.onnxruntime.linux-x64-gpu',
  version: '0.4.9',
  ortVersion: '1.29.0',
  cuda: '13',
  libDir: 'package/Plugins/Linux/x64',
} as const;

export const OFFICIAL_CUDA_INSTALL = 'ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node --ignore-scripts=false';
export const REGISTRY_CUDA_INSTALL = 'npm run cuda:setup   (or: npx todeval doctor --fix-cuda)';

/** Written beside the libraries we place, so doctor can say where they came from. */
export const PROVIDER_STAMP = 'todeval-cuda-provider.json';

const requireHere = createRequire(import.meta.url);

export interface OrtInstall {
  /** onnxruntime-node's version from its package.json. */
  version: string;
  /** Folder of libonnxruntime.so and the native binding for this platform. */
  binDir: string;
}

export function ortInstall(): OrtInstall {
  const pkgJson = requireHere.resolve('onnxruntime-node/package.json');
  const version = (requireHere(pkgJson) as { version: string }).version;
  const binDir = path.join(path.dirname(pkgJson), 'bin', 'napi-v6', process.platform, process.arch);
  return { version, binDir };
}

/** First match of `re` (with one group) in a binary file, read in chunks: the CUDA provider is 230 MB. */
function scanBinary(file: string, re: RegExp): string | undefined {
  const fd = openSync(file, 'r');
  try {
    const chunk = Buffer.alloc(1 << 22);
    let carry = '';
    let pos = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, pos);
      if (n <= 0) return undefined;
      pos += n;
      const text = carry + chunk.toString('latin1', 0, n);
      const m = re.exec(text);
      if (m) return m[1];
      carry = text.slice(-32);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The ONNX Runtime release a library was built from: ORT embeds its version as a NUL-terminated
 * "major.minor.patch" string (the only such string starting with "1." in the provider).
 */
export function embeddedOrtVersion(file: string): string | undefined {
  return scanBinary(file, /\0(1\.\d{1,2}\.\d{1,2})\0/);
}

/** The CUDA major a provider library links against, from its libcublas soname (12 or 13). */
export function linkedCudaMajor(file: string): string | undefined {
  return scanBinary(file, /libcublas\.so\.(\d+)\0/);
}

export interface ProviderCheck {
  dir: string;
  ortVersion: string;
  /** Each provider library: found, and the ORT version it was built for. */
  libs: { name: string; present: boolean; builtFor?: string }[];
  /** CUDA major the provider links against (12 or 13), when it is present. */
  cudaMajor?: string;
  /** Where the libraries came from, when `cuda:setup` placed them. */
  source?: string;
  /** One line per problem; empty when the provider libraries are in place and match. */
  problems: string[];
  ok: boolean;
}

/** Are the CUDA provider libraries next to libonnxruntime.so, and built for this ORT release? */
export function checkProviderDir(dir: string, ortVersion: string): ProviderCheck {
  const libs = PROVIDER_LIBS.map((name) => {
    const file = path.join(dir, name);
    const present = existsSync(file) && statSync(file).isFile();
    return { name, present, builtFor: present && name.includes('cuda') ? embeddedOrtVersion(file) : undefined };
  });
  const problems: string[] = [];
  const missing = libs.filter((l) => !l.present).map((l) => l.name);
  if (missing.length > 0) problems.push(`CUDA execution provider missing: no ${missing.join(', ')} in ${dir}`);
  for (const l of libs) {
    if (l.builtFor && l.builtFor !== ortVersion) {
      problems.push(`${l.name} was built for ONNX Runtime ${l.builtFor} but onnxruntime-node is ${ortVersion}; the versions must match`);
    }
  }
  const cudaLib = path.join(dir, 'libonnxruntime_providers_cuda.so');
  const cudaMajor = existsSync(cudaLib) ? linkedCudaMajor(cudaLib) : undefined;
  let source: string | undefined;
  try {
    source = (JSON.parse(readFileSync(path.join(dir, PROVIDER_STAMP), 'utf8')) as { package?: string }).package;
  } catch {
    // placed by ONNX Runtime's own installer, or by hand
  }
  return { dir, ortVersion, libs, cudaMajor, source, problems, ok: problems.length === 0 };
}

export interface SetupResult {
  placed: string[];
  dir: string;
  source: string;
}

/**
 * The registry-only route: fetch the provider package with `npm pack` (npm registry only, no
 * NuGet), check it is built for our ONNX Runtime, and place its two libraries next to
 * libonnxruntime.so. `tarball` skips the download (an already fetched .tgz).
 */
export function setupCudaProvider(opts: { tarball?: string; log?: (line: string) => void; binDir?: string } = {}): SetupResult {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new MissingResourceError(`the registry CUDA provider is built for linux-x64 only (this is ${process.platform}-${process.arch}); use ${OFFICIAL_CUDA_INSTALL}`);
  }
  const ort = { ...ortInstall(), ...(opts.binDir ? { binDir: opts.binDir } : {}) };
  if (ort.version !== REGISTRY_PROVIDER.ortVersion) {
    throw new MissingResourceError(
      `onnxruntime-node is ${ort.version} but ${REGISTRY_PROVIDER.packageName}@${REGISTRY_PROVIDER.version} is built for ONNX Runtime ${REGISTRY_PROVIDER.ortVersion}; install onnxruntime-node@${REGISTRY_PROVIDER.ortVersion}`,
    );
  }
  const work = mkdtempSync(path.join(os.tmpdir(), 'todeval-cuda-'));
  try {
    let tarball = opts.tarball;
    const spec = `${REGISTRY_PROVIDER.packageName}@${REGISTRY_PROVIDER.version}`;
    if (!tarball) {
      log(`todeval: fetching ${spec} from the npm registry (about 180 MB) ...`);
      const name = execFileSync('npm', ['pack', spec, '--pack-destination', work, '--silent'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
        .trim()
        .split('\n')
        .pop() as string;
      tarball = path.join(work, name);
    }
    if (!existsSync(tarball)) throw new MissingResourceError(`no such provider package: ${tarball}`);
    const members = PROVIDER_LIBS.map((l) => `${REGISTRY_PROVIDER.libDir}/${l}`);
    execFileSync('tar', ['-xzf', tarball, '-C', work, ...members], { stdio: ['ignore', 'ignore', 'pipe'] });
    const placed: string[] = [];
    for (const lib of PROVIDER_LIBS) {
      const src = path.join(work, REGISTRY_PROVIDER.libDir, lib);
      const builtFor = lib.includes('cuda') ? embeddedOrtVersion(src) : undefined;
      if (builtFor && builtFor !== ort.version) {
        throw new MissingResourceError(`${tarball}: ${lib} is built for ONNX Runtime ${builtFor}, onnxruntime-node is ${ort.version}; refusing the mismatch`);
      }
      // Copy then rename: a half-copied 230 MB library must never be what ORT finds.
      const dest = path.join(ort.binDir, lib);
      copyFileSync(src, `${dest}.partial`);
      renameSync(`${dest}.partial`, dest);
      placed.push(dest);
    }
    writeFileSync(
      path.join(ort.binDir, PROVIDER_STAMP),
      JSON.stringify({ package: spec, ortVersion: REGISTRY_PROVIDER.ortVersion, cuda: REGISTRY_PROVIDER.cuda, placedAt: new Date().toISOString() }, null, 2) + '\n',
    );
    log(`todeval: placed ${placed.map((p) => path.basename(p)).join(', ')} in ${ort.binDir} (CUDA ${REGISTRY_PROVIDER.cuda} build for ONNX Runtime ${REGISTRY_PROVIDER.ortVersion})`);
    return { placed, dir: ort.binDir, source: spec };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

