import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, copyFileSync, writeFileSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { downloadFile, modelInfo, pathsInfo } from '@huggingface/hub';
import { InputError, MissingResourceError } from '../util/errors.js';
import { requireHttpUrl } from '../util/url.js';
import { hubCacheDir, isCommitSha, manifestFor, onnxCandidates, repoCacheFolder, type NliDtype } from './model-store.js';
import { quantizeOnnxFile } from './onnx-builder/quantize.js';

export interface PullOptions {
  id: string;
  dtype: NliDtype;
  /** Branch, tag or commit; defaults to the manifest's pinned revision. */
  revision?: string;
  /** Hub endpoint (`--hub-url`, $HF_ENDPOINT); tests point it at a loopback server. */
  hubUrl?: string;
  cacheDir?: string;
  accessToken?: string;
  fetch?: typeof fetch;
  /** Called with bytes done/total across all files of this pull. */
  onProgress?: (done: number, total: number, file: string) => void;
}

export interface PulledFile {
  path: string;
  size: number;
  /** sha256 for LFS files, git blob sha1 for small ones. */
  digest: string;
  downloaded: boolean;
  /** Built here from a downloaded file (q8 from fp32), not downloaded. */
  built?: boolean;
}

export interface PullResult {
  id: string;
  commit: string;
  dir: string;
  files: PulledFile[];
}

/** Why a network call failed, in one line (the hub library throws rich errors with long bodies). */
function netReason(e: unknown): string {
  const err = e as Error & { cause?: { code?: string; message?: string }; statusCode?: number };
  const cause = err.cause?.code ?? err.cause?.message;
  const msg = (err.message ?? String(e)).split('\n')[0];
  return cause ? `${msg} (${cause})` : msg;
}

function verifyDigest(file: string, kind: 'sha256' | 'gitsha1', size: number): string {
  // Reading back what was written catches a truncated or altered stream, not just a bad length.
  if (kind === 'sha256') {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  }
  const h = createHash('sha1');
  h.update(`blob ${size}\0`);
  h.update(readFileSync(file));
  return h.digest('hex');
}

function linkIntoSnapshot(blob: string, pointer: string): void {
  mkdirSync(path.dirname(pointer), { recursive: true });
  try {
    lstatSync(pointer);
    rmSync(pointer);
  } catch {
    // not there yet
  }
  try {
    symlinkSync(path.relative(path.dirname(pointer), blob), pointer);
  } catch {
    copyFileSync(blob, pointer);
  }
}

/**
 * Download one dtype of a model into the standard Hugging Face cache layout
 * (`models--owner--name/{blobs,refs,snapshots}`), so Python tools and ours share one copy.
 * Each file is checked against the size and LFS sha256 (or git blob sha1) the hub reports before it
 * is moved into place; a mismatch leaves nothing behind and is a one-line error.
 */
export async function pullModel(opts: PullOptions): Promise<PullResult> {
  const manifest = manifestFor(opts.id);
  const revision = opts.revision ?? manifest.revision;
  const hubUrl = requireHttpUrl(opts.hubUrl ?? process.env.HF_ENDPOINT ?? 'https://huggingface.co', 'hub URL (--hub-url or $HF_ENDPOINT)');
  const folder = repoCacheFolder(opts.cacheDir ?? hubCacheDir(), opts.id);
  const creds = opts.accessToken ? { accessToken: opts.accessToken } : {};
  const hub: Hub = { repo: { type: 'model', name: opts.id }, hubUrl, fetch: opts.fetch, ...creds };
  // q8 (the row scheme) is not on the hub: its source dtype is downloaded and the file built from it.
  const builtFrom = manifest.dtypes[opts.dtype].builtFrom;
  // One question to the hub covers every layout: the ONNX file wherever exports put it, the files needed, the optional ones.
  const onnxPaths = onnxCandidates(manifest, builtFrom ?? opts.dtype);
  const optional = manifest.optional ?? [];
  const { commit, byPath } = await locateFiles(hub, revision, [...onnxPaths, ...manifest.common, ...optional]);
  const onnx = onnxPaths.find((p) => byPath.has(p));
  const absent = [...(onnx === undefined ? [onnxPaths.join(' or ')] : []), ...manifest.common.filter((f) => !byPath.has(f))];
  if (absent.length > 0) throw new MissingResourceError(`${opts.id}@${commit} has no ${absent.join(', ')} on ${hubUrl}`);
  const wanted = [onnx!, ...manifest.common, ...optional.filter((f) => byPath.has(f))];
  const total = wanted.reduce((s, w) => s + (byPath.get(w)!.lfs?.size ?? byPath.get(w)!.size), 0);
  const progress = new PullProgress(total, opts.onProgress);
  const files: PulledFile[] = [];
  for (const rel of wanted) files.push(await pullFile(hub, cachedFile(folder, commit, rel, byPath.get(rel)!), commit, progress));
  const dir = path.join(folder, 'snapshots', commit);
  if (builtFrom) {
    const rel = manifest.dtypes[opts.dtype].onnx;
    // Into onnx/ whichever layout the fp32 file came in (an optimum export has no onnx/ folder).
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    const built = quantizeOnnxFile(path.join(dir, onnx!), path.join(dir, rel), 'row');
    files.push({ path: rel, size: built.bytes, digest: built.sha256, downloaded: false, built: true });
  }
  if (!isCommitSha(revision)) {
    mkdirSync(path.join(folder, 'refs'), { recursive: true });
    writeFileSync(path.join(folder, 'refs', revision), commit);
  }
  return { id: opts.id, commit, dir, files };
}

/** The repository on the hub and how to reach it: what every hub call of a pull takes. */
interface Hub {
  repo: { type: 'model'; name: string };
  hubUrl: string;
  fetch?: typeof fetch;
  accessToken?: string;
}

type HubPathInfo = Awaited<ReturnType<typeof pathsInfo>>[number];

/**
 * The commit `revision` names (asked of the hub unless it is one) and the hub's record of each
 * asked-for file it has there (the caller decides which absences matter); an unreachable hub is one line.
 */
async function locateFiles(hub: Hub, revision: string, wanted: string[]): Promise<{ commit: string; byPath: Map<string, HubPathInfo> }> {
  const { repo, ...access } = hub;
  let commit: string;
  let infos: HubPathInfo[];
  try {
    if (isCommitSha(revision)) {
      commit = revision;
    } else {
      const info = await modelInfo({ name: repo.name, revision, additionalFields: ['sha'], ...access });
      commit = (info as { sha?: string }).sha ?? '';
      if (!isCommitSha(commit)) throw new Error(`hub did not report a commit for ${repo.name}@${revision}`);
    }
    infos = await pathsInfo({ ...hub, paths: wanted, revision: commit });
  } catch (e) {
    throw new MissingResourceError(`cannot reach the model hub at ${hub.hubUrl} for ${repo.name}: ${netReason(e)}; download elsewhere and pass --model <dir>`);
  }
  return { commit, byPath: new Map(infos.map((i) => [i.path, i])) };
}

/** Bytes done across all files of a pull, reported as they come. */
class PullProgress {
  private done = 0;
  constructor(
    private readonly total: number,
    private readonly report?: (done: number, total: number, file: string) => void,
  ) {}

  add(bytes: number, file: string): void {
    this.done += bytes;
    this.report?.(this.done, this.total, file);
  }
}

/** One file of the snapshot: what the hub says it is, and where its blob and snapshot link go. */
interface CachedFile {
  rel: string;
  size: number;
  /** The LFS sha256 or the git blob sha1: the blob's name and what its bytes must hash to. */
  etag: string;
  kind: 'sha256' | 'gitsha1';
  blob: string;
  pointer: string;
}

function cachedFile(folder: string, commit: string, rel: string, info: HubPathInfo): CachedFile {
  const etag = info.lfs?.oid ?? info.oid;
  if (!etag) throw new InputError(`hub reported no hash for ${rel}: cannot verify it`);
  return {
    rel,
    size: info.lfs?.size ?? info.size,
    etag,
    kind: info.lfs ? 'sha256' : 'gitsha1',
    blob: path.join(folder, 'blobs', etag),
    pointer: path.join(folder, 'snapshots', commit, rel),
  };
}

/** A file into the snapshot: its blob reused when present at the right size, else downloaded and verified. */
async function pullFile(hub: Hub, f: CachedFile, commit: string, progress: PullProgress): Promise<PulledFile> {
  if (existsSync(f.blob) && statSync(f.blob).size === f.size) {
    linkIntoSnapshot(f.blob, f.pointer);
    progress.add(f.size, f.rel);
    return { path: f.rel, size: f.size, digest: f.etag, downloaded: false };
  }
  mkdirSync(path.dirname(f.blob), { recursive: true });
  const partial = `${f.blob}.incomplete`;
  try {
    await downloadTo(partial, hub, f.rel, commit, progress);
  } catch (e) {
    rmSync(partial, { force: true });
    throw new MissingResourceError(`download of ${hub.repo.name}/${f.rel} failed: ${netReason(e)}`);
  }
  verifyDownload(partial, f, hub.repo.name);
  renameSync(partial, f.blob);
  linkIntoSnapshot(f.blob, f.pointer);
  return { path: f.rel, size: f.size, digest: f.etag, downloaded: true };
}

/** Streams the file at `commit` to `file`, reporting each chunk. */
async function downloadTo(file: string, hub: Hub, rel: string, commit: string, progress: PullProgress): Promise<void> {
  const remote = await downloadFile({ ...hub, path: rel, revision: commit });
  if (!remote) throw new Error('file not found');
  const out = createWriteStream(file);
  const reader = remote.stream().getReader();
  for (;;) {
    const { done: end, value } = await reader.read();
    if (end) break;
    if (!out.write(value)) await new Promise<void>((r) => out.once('drain', () => r()));
    progress.add(value.byteLength, rel);
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

/** The downloaded file has the size and hash the hub reports, or it is removed and the pull fails in one line. */
function verifyDownload(partial: string, f: CachedFile, id: string): void {
  const got = statSync(partial).size;
  if (got !== f.size) {
    rmSync(partial, { force: true });
    throw new InputError(`download of ${id}/${f.rel} is corrupt: ${got} bytes, the hub reports ${f.size}; run the pull again`);
  }
  const digest = verifyDigest(partial, f.kind, f.size);
  if (digest !== f.etag) {
    rmSync(partial, { force: true });
    throw new InputError(
      `download of ${id}/${f.rel} is corrupt: ${f.kind === 'sha256' ? 'sha256' : 'git sha1'} ${digest.slice(0, 12)}… differs from the hub's ${f.etag.slice(0, 12)}…; run the pull again`,
    );
  }
}
