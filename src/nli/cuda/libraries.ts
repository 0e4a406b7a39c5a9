import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Shared libraries the CUDA provider needs at load time (its ELF NEEDED entries, read from the
 * 1.29.0 CUDA 13 build) plus cuDNN, which ONNX Runtime opens by name when it creates the provider.
 * The soname majors follow the provider's CUDA major: CUDA 12 builds want .so.12 / cublas .so.12.
 */
export function requiredCudaLibraries(cudaMajor: string): { name: string; what: string; pip?: string }[] {
  return [
    { name: 'libcuda.so.1', what: 'NVIDIA driver' },
    { name: `libcudart.so.${cudaMajor}`, what: 'CUDA runtime', pip: `nvidia-cuda-runtime-cu${cudaMajor}` },
    { name: `libcublas.so.${cudaMajor}`, what: 'cuBLAS', pip: `nvidia-cublas-cu${cudaMajor}` },
    { name: `libcublasLt.so.${cudaMajor}`, what: 'cuBLASLt', pip: `nvidia-cublas-cu${cudaMajor}` },
    { name: 'libcurand.so.10', what: 'cuRAND', pip: `nvidia-curand-cu${cudaMajor}` },
    { name: 'libcudnn.so.9', what: 'cuDNN 9', pip: `nvidia-cudnn-cu${cudaMajor}` },
  ];
}

export interface LibraryHit {
  name: string;
  what: string;
  /** Directory it was found in, and how that directory is reachable by the dynamic loader. */
  dir?: string;
  via?: 'LD_LIBRARY_PATH' | 'ldconfig' | 'python' | 'cuda-home';
  pip?: string;
}

/** The loader's cache (`ldconfig -p`): soname -> directory. Empty where ldconfig is absent. */
export function ldconfigDirs(): Map<string, string> {
  const out = new Map<string, string>();
  for (const bin of ['/sbin/ldconfig', '/usr/sbin/ldconfig', 'ldconfig']) {
    try {
      const text = execFileSync(bin, ['-p'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 });
      for (const line of text.split('\n')) {
        const m = /^\s*(\S+)\s.*=>\s*(\S+)$/.exec(line);
        if (m && !out.has(m[1])) out.set(m[1], path.dirname(m[2]));
      }
      return out;
    } catch {
      // try the next spelling
    }
  }
  return out;
}

/**
 * `site-packages/nvidia/<pkg>/lib` folders of the Python environments at hand: PyTorch wheels and
 * the nvidia-*-cu12/13 wheels install the CUDA libraries there, and a GPU box with torch has them
 * even when no system CUDA toolkit is installed.
 */
export function pythonNvidiaLibDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const roots = new Set<string>();
  for (const py of [env.TODEVAL_PYTHON, 'python3', 'python'].filter(Boolean) as string[]) {
    try {
      const text = execFileSync(py, ['-c', 'import site,sys;print("\\n".join(site.getsitepackages()+[site.getusersitepackages()]))'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 10000,
      });
      for (const l of text.split('\n')) if (l.trim()) roots.add(l.trim());
    } catch {
      // no such interpreter
    }
  }
  // Wheels differ in layout (nvidia/cublas/lib for CUDA 12, nvidia/cu13/lib for CUDA 13): any
  // folder up to three levels under nvidia/ that holds a shared library counts.
  const dirs: string[] = [];
  const walk = (dir: string, depth: number) => {
    const entries = safeList(dir);
    if (entries.some((f) => f.startsWith('lib') && f.includes('.so'))) dirs.push(dir);
    if (depth === 0) return;
    for (const e of entries) {
      const sub = path.join(dir, e);
      if (!e.includes('.') && existsSync(sub) && statSync(sub).isDirectory()) walk(sub, depth - 1);
    }
  };
  for (const root of roots) walk(path.join(root, 'nvidia'), 3);
  return dirs;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

export interface LibrarySearch {
  hits: LibraryHit[];
  missing: LibraryHit[];
  /** Directories holding missing libraries that the loader does not search: add them to LD_LIBRARY_PATH. */
  toAdd: string[];
}

/** Where each required library is, as the dynamic loader would find it, or where it could be added from. */
export function findCudaLibraries(cudaMajor: string, env: NodeJS.ProcessEnv = process.env): LibrarySearch {
  const ldPath = (env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean);
  const cache = ldconfigDirs();
  const cudaHome = [env.CUDA_HOME, env.CUDA_PATH, '/usr/local/cuda'].filter(Boolean).map((d) => path.join(d as string, 'lib64'));
  let python: string[] | undefined;
  const hits: LibraryHit[] = [];
  const missing: LibraryHit[] = [];
  const toAdd = new Set<string>();
  for (const lib of requiredCudaLibraries(cudaMajor)) {
    const inLd = ldPath.find((d) => existsSync(path.join(d, lib.name)));
    if (inLd) {
      hits.push({ ...lib, dir: inLd, via: 'LD_LIBRARY_PATH' });
      continue;
    }
    const cached = cache.get(lib.name);
    if (cached) {
      hits.push({ ...lib, dir: cached, via: 'ldconfig' });
      continue;
    }
    python ??= pythonNvidiaLibDirs(env);
    const offPath = [...python, ...cudaHome].find((d) => existsSync(path.join(d, lib.name)));
    missing.push({ ...lib, dir: offPath, via: offPath ? (python.includes(offPath) ? 'python' : 'cuda-home') : undefined });
    if (offPath) toAdd.add(offPath);
  }
  return { hits, missing, toAdd: [...toAdd] };
}

/** The one command that makes the found-but-unreachable libraries loadable. */
export function ldLibraryPathFix(dirs: string[]): string {
  return `export LD_LIBRARY_PATH=${dirs.join(':')}\${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}`;
}
