/**
 * Everything the GPU test machine needs and lacks (it has no Node and no network), in parts small
 * enough to travel one per device call: this machine's Node binary, todeval built (dist/ with the
 * scripts), its production dependencies for linux-x64 only, the CUDA execution provider, the
 * tokenizer (in models/), the SGD data and gpu/run.sh + the PyTorch peer. See docs/gpu.md.
 *
 *   npm run gpu:bundle -- [--out .gpu] [--part-mib 55] [--provider auto|none|FILE.tgz] [--data sgd|none]
 *     [--level 9]
 *
 * Writes OUT/part-1/bundle.part-01, OUT/part-2/bundle.part-02, ... (one tar stream cut in pieces)
 * and OUT/part-1/run.sh. Large members (node, the 230 MB provider, the production packages) are
 * xz-compressed once and cached under .cache/gpu-bundle/ by content (the packages: by their files'
 * paths, sizes and times).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, cpSync, createReadStream, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { resolveDataDir } from '../src/data/data-dir.js';
import { REGISTRY_PROVIDER } from '../src/nli/cuda/provider.js';

const program = new Command('gpu-bundle')
  .option('--out <dir>', 'output folder (git-ignored)', '.gpu')
  .option('--part-mib <n>', 'largest part in MiB (a device call carries 64 MiB with the tree)', (v) => Number(v), 55)
  .option('--provider <src>', 'CUDA provider: auto (npm registry, cached), none, or a downloaded .tgz', 'auto')
  .option('--data <what>', 'sgd (the SGD test split and schemas) or none (the runner reads --data-dir)', 'sgd')
  .option('--level <n>', 'xz level for the large members (0 = fast, for dry runs)', (v) => Number(v), 9);
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ out: string; partMib: number; provider: string; data: string; level: number }>();

const repo = process.cwd();
const out = path.resolve(o.out);
const cache = path.join(repo, '.cache', 'gpu-bundle');
const stage = mkdtempSync(path.join(os.tmpdir(), 'todeval-gpu-bundle-'));
// The staging folder goes however the run ends: done, failed, or stopped (a test's timeout sends SIGTERM).
process.on('exit', () => rmSync(stage, { recursive: true, force: true }));
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => process.exit(sig === 'SIGINT' ? 130 : 143));
const log = (l: string) => console.log(`gpu:bundle: ${l}`);
const sh = (cmd: string, args: string[], cwd = repo) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });

function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (c) => h.update(c))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}

/** xz of a large file, cached by its content and the level: recompressing 230 MB takes minutes. */
async function xzCached(src: string, level: number): Promise<string> {
  const key = `${(await sha256File(src)).slice(0, 16)}-${level}`;
  const dest = path.join(cache, `${path.basename(src)}.${key}.xz`);
  if (!existsSync(dest)) {
    log(`xz -${level} ${path.basename(src)} (${(statSync(src).size / 2 ** 20).toFixed(0)} MiB) ...`);
    execFileSync('sh', ['-c', `xz -T0 -${level} -c "$1" > "$2.tmp" && mv "$2.tmp" "$2"`, 'xz', src, dest], { stdio: 'inherit' });
  }
  return dest;
}

/** Production packages from package-lock.json (no dev ones), top-most paths only: nested ones ride along. */
function productionPackages(): string[] {
  const lock = JSON.parse(readFileSync(path.join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; optional?: boolean }> };
  const keep = Object.entries(lock.packages)
    .filter(([k, v]) => k.startsWith('node_modules/') && !v.dev && existsSync(path.join(repo, k)))
    .map(([k]) => k)
    .sort();
  return keep.filter((k) => !keep.some((p) => p !== k && k.startsWith(`${p}/`)));
}

/** The .ts files under `root` (relative to the repo), as paths relative to it. */
function tsFiles(root: string): string[] {
  return readdirSync(path.join(repo, root), { recursive: true, encoding: 'utf8' }).filter((rel) => rel.endsWith('.ts') && !rel.endsWith('.d.ts'));
}

/**
 * dist/src's JavaScript, when `npm run build` made it from these very sources (`npm test` builds
 * it first): each src/X.ts has a dist/src/X.js written after the .ts last changed. tsc rewrites
 * the .js of every source it recompiles, so an edited source makes this false, and src/ is then
 * transpiled like scripts/. Copied without the sourceMappingURL line (the maps do not travel).
 */
function copyBuiltSrc(outDir: string): boolean {
  const files = tsFiles('src');
  const built = (rel: string) => path.join(repo, 'dist', 'src', rel.replace(/\.ts$/, '.js'));
  const current = (rel: string) => existsSync(built(rel)) && statSync(built(rel)).mtimeMs >= statSync(path.join(repo, 'src', rel)).mtimeMs;
  if (!files.every(current)) return false;
  for (const rel of files) {
    const dest = path.join(outDir, 'src', rel.replace(/\.ts$/, '.js'));
    mkdirSync(path.dirname(dest), { recursive: true });
    writeFileSync(dest, readFileSync(built(rel), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
  }
  return true;
}

/**
 * transpileTree's output, cached under .cache/gpu-bundle/ by every source's path and content and
 * TypeScript's version: the scripts change far less often than bundles are made (the test suite
 * makes one per run), and transpiling them, with loading the compiler, cost about 2 CPU-seconds.
 * A new entry replaces the older ones.
 */
async function transpileTreeCached(roots: string[], outDir: string): Promise<void> {
  const tsVersion = (JSON.parse(readFileSync(path.join(repo, 'node_modules', 'typescript', 'package.json'), 'utf8')) as { version: string }).version;
  const h = createHash('sha256').update(`transpile v1 typescript ${tsVersion}\n`);
  for (const root of roots) for (const rel of tsFiles(root).sort()) h.update(`${root}/${rel}\0`).update(readFileSync(path.join(repo, root, rel))).update('\0');
  const name = `js.${h.digest('hex').slice(0, 16)}`;
  const dest = path.join(cache, name);
  if (!existsSync(dest)) {
    const tmp = `${dest}.tmp-${process.pid}`;
    try {
      await transpileTree(roots, tmp);
      renameSync(tmp, dest);
    } catch (e) {
      if (!existsSync(dest)) throw e;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    for (const old of readdirSync(cache)) if (/^js\.[0-9a-f]{16}$/.test(old) && old !== name) rmSync(path.join(cache, old), { recursive: true, force: true });
  }
  cpSync(dest, outDir, { recursive: true });
}

/** Every .ts under `roots` (relative to the repo) as ES module JS under `outDir`, same layout. */
async function transpileTree(roots: string[], outDir: string): Promise<void> {
  // Loaded only here: a bundle whose scripts are cached never compiles the compiler's 9 MB module.
  const { default: ts } = await import('typescript');
  const options: import('typescript').CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, esModuleInterop: true };
  for (const root of roots) {
    for (const rel of tsFiles(root)) {
      const src = path.join(repo, root, rel);
      // .ts files of a "type": "module" package are ES modules: the .mts name says so to transpileModule.
      const js = ts.transpileModule(readFileSync(src, 'utf8'), { compilerOptions: options, fileName: src.replace(/\.ts$/, '.mts') }).outputText;
      const dest = path.join(outDir, root, rel.replace(/\.ts$/, '.js'));
      mkdirSync(path.dirname(dest), { recursive: true });
      writeFileSync(dest, js);
    }
  }
}

rmSync(out, { recursive: true, force: true });
mkdirSync(cache, { recursive: true });
const app = path.join(stage, 'app', 'todeval');
mkdirSync(app, { recursive: true });

// todeval itself, with the scripts compiled (the runner calls the benchmarks as plain JS).
// scripts/ transpiled file by file (TypeScript's transpileModule: no type check, which
// `npm run typecheck` does): a few seconds, where a full tsc build of them took most of the bundle's
// time. The bundle runs the scripts as plain JS, from the same relative paths. src/ as `npm run
// build` compiled it where that build is current (about 4 CPU-s less than transpiling its 290
// files again), else transpiled the same way.
const fromBuild = copyBuiltSrc(path.join(app, 'dist'));
log(fromBuild ? 'src from dist/ (current), transpiling scripts ...' : 'transpiling src + scripts ...');
await transpileTreeCached(fromBuild ? ['scripts'] : ['src', 'scripts'], path.join(app, 'dist'));
for (const f of ['package.json', 'package-lock.json', 'bin', 'rules', 'models', 'schemas']) cpSync(path.join(repo, f), path.join(app, f), { recursive: true });
mkdirSync(path.join(app, 'data'));
for (const f of ['manifest.json', 'README.md']) if (existsSync(path.join(repo, 'data', f))) copyFileSync(path.join(repo, 'data', f), path.join(app, 'data', f));
// linux-x64 only: the other platforms' ONNX Runtime builds are most of the package's 250 MB. Left
// out while copying (copying 220 MB to delete it took seconds of a dry run), and removed after in
// case a path is spelled otherwise.
const ORT_BIN = path.join('node_modules', 'onnxruntime-node', 'bin', 'napi-v6');
const ORT_LEFT_OUT = [
  ...['darwin', 'win32', path.join('linux', 'arm64')],
  ...['libonnxruntime_providers_cuda.so', 'libonnxruntime_providers_shared.so', 'todeval-cuda-provider.json'].map((lib) => path.join('linux', 'x64', lib)),
];
const leftOut = new Set(ORT_LEFT_OUT.map((p) => path.join(repo, ORT_BIN, p)));
const pkgs = productionPackages();
const top = path.join(stage, 'top');
mkdirSync(top, { recursive: true });
copyFileSync(depsCached(pkgs), path.join(top, 'deps.tar.xz'));
log(`${pkgs.length} production packages`);

/**
 * The production packages as their own member (deps.tar.xz: todeval/node_modules/...), cached under
 * .cache/gpu-bundle/ by every file's path, size and time and the xz level: they change only with
 * `npm install`, while xz of their 113 MB cost about 5 CPU-seconds even at level 0 (minutes at 9)
 * on every bundle, and copying them into the staging folder as much again in system time.
 */
function depsCached(packages: string[]): string {
  const level = Math.min(3, o.level);
  const h = createHash('sha256').update(`deps v1\n${ORT_LEFT_OUT.join('\n')}\n`);
  for (const p of packages) {
    for (const rel of readdirSync(path.join(repo, p), { recursive: true, encoding: 'utf8' }).sort()) {
      const st = lstatSync(path.join(repo, p, rel));
      h.update(`${p}/${rel}|${st.isDirectory() ? 'd' : st.size}|${st.mtimeMs}\n`);
    }
  }
  const dest = path.join(cache, `deps.${h.digest('hex').slice(0, 16)}-${level}.tar.xz`);
  if (existsSync(dest)) return dest;
  log(`deps.tar.xz (xz -${level}) ...`);
  const root = path.join(stage, 'deps');
  for (const p of packages) cpSync(path.join(repo, p), path.join(root, 'todeval', p), { recursive: true, filter: (src) => !leftOut.has(src) });
  const ortBin = path.join(root, 'todeval', ORT_BIN);
  for (const p of ORT_LEFT_OUT) rmSync(path.join(ortBin, p), { recursive: true, force: true });
  sh('sh', ['-c', `tar -C "$1" -cf - todeval | xz -T0 -${level} > "$2.tmp-$$" && mv "$2.tmp-$$" "$2"`, 'tar', root, dest]);
  rmSync(root, { recursive: true, force: true });
  return dest;
}

// The tokenizer travels in models/ (copied above), where the random-model builder finds it.
if (o.data === 'sgd') {
  // The data never changes between bundles: compressed once, cached by its files' names, sizes and times.
  const dataDir = resolveDataDir().dir;
  const files = ['sgd/train/schema.json', ...readdirSync(path.join(dataDir, 'sgd', 'test')).sort().map((f) => `sgd/test/${f}`)];
  const key = createHash('sha256')
    .update(files.map((f) => `${f}|${statSync(path.join(dataDir, f)).size}|${statSync(path.join(dataDir, f)).mtimeMs}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
  const cached = path.join(cache, `data-sgd.${key}.tar.xz`);
  if (!existsSync(cached)) {
    log('data.tar.xz (SGD test split + train schema) ...');
    const script = 'out=$1; dir=$2; shift 2; tar -C "$dir" -cf - "$@" | xz -T0 -3 > "$out.tmp" && mv "$out.tmp" "$out"';
    execFileSync('sh', ['-c', script, 'sh', cached, dataDir, ...files], { stdio: 'inherit' });
  }
  copyFileSync(cached, path.join(top, 'data.tar.xz'));
} else if (o.data !== 'none') throw new Error(`--data must be sgd or none, got ${o.data}`);
cpSync(path.join(repo, 'gpu'), path.join(stage, 'app', 'gpu'), { recursive: true });

log('app.tar.xz ...');
sh('sh', ['-c', `tar -C "$1" -cf - . | xz -T0 -${Math.min(3, o.level)} > "$2"`, 'tar', path.join(stage, 'app'), path.join(top, 'app.tar.xz')]);
copyFileSync(await xzCached(process.execPath, o.level), path.join(top, 'node.xz'));

if (o.provider !== 'none') {
  let tgz = o.provider;
  if (o.provider === 'auto') {
    tgz = path.join(cache, `${REGISTRY_PROVIDER.packageName}-${REGISTRY_PROVIDER.version}.tgz`);
    if (!existsSync(tgz)) {
      log(`npm pack ${REGISTRY_PROVIDER.packageName}@${REGISTRY_PROVIDER.version} (about 180 MB) ...`);
      mkdirSync(cache, { recursive: true });
      sh('npm', ['pack', `${REGISTRY_PROVIDER.packageName}@${REGISTRY_PROVIDER.version}`, '--pack-destination', cache, '--silent']);
    }
  }
  const x = path.join(stage, 'provider');
  mkdirSync(x, { recursive: true });
  const libs = ['libonnxruntime_providers_cuda.so', 'libonnxruntime_providers_shared.so'];
  sh('tar', ['-xzf', path.resolve(tgz), '-C', x, ...libs.map((l) => `${REGISTRY_PROVIDER.libDir}/${l}`)]);
  const libDir = path.join(x, REGISTRY_PROVIDER.libDir);
  copyFileSync(await xzCached(path.join(libDir, libs[0]), o.level), path.join(top, 'providers_cuda.so.xz'));
  copyFileSync(path.join(libDir, libs[1]), path.join(top, libs[1]));
  writeFileSync(
    path.join(top, 'todeval-cuda-provider.json'),
    JSON.stringify({ package: `${REGISTRY_PROVIDER.packageName}@${REGISTRY_PROVIDER.version}`, ortVersion: REGISTRY_PROVIDER.ortVersion, cuda: REGISTRY_PROVIDER.cuda }, null, 2) + '\n',
  );
}
writeFileSync(
  path.join(top, 'MANIFEST.json'),
  JSON.stringify({ node: process.version, provider: o.provider !== 'none', data: o.data, commit: tryGit(['rev-parse', 'HEAD']), builtAt: new Date().toISOString() }, null, 2) + '\n',
);

function tryGit(args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

// One tar stream (members already compressed), cut into parts, each in its own folder.
const whole = path.join(stage, 'bundle.tar');
sh('tar', ['-C', top, '-cf', whole, '.']);
const size = statSync(whole).size;
const partBytes = Math.floor(o.partMib * 2 ** 20);
const fd = openSync(whole, 'r');
const buf = Buffer.alloc(1 << 20);
let part = 0;
for (let off = 0; off < size; off += partBytes) {
  part++;
  const dir = path.join(out, `part-${part}`);
  mkdirSync(dir, { recursive: true });
  const w = openSync(path.join(dir, `bundle.part-${String(part).padStart(2, '0')}`), 'w');
  for (let pos = off; pos < Math.min(size, off + partBytes); ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, off + partBytes - pos), pos);
    writeSync(w, buf, 0, n);
    pos += n;
  }
  closeSync(w);
}
closeSync(fd);
copyFileSync(path.join(repo, 'gpu', 'run.sh'), path.join(out, 'part-1', 'run.sh'));
rmSync(stage, { recursive: true, force: true });
log(`${(size / 2 ** 20).toFixed(1)} MiB in ${part} part(s) of <= ${o.partMib} MiB under ${path.relative(repo, out) || out}/part-*`);
log(`on the GPU machine, after every part has arrived: bash ${path.relative(repo, out)}/part-1/run.sh --parts '${Array.from({ length: part }, (_, i) => `DIR/part-${i + 1}`).join(' ')}'`);
