import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, copyFileSync, writeFileSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { downloadFile, modelInfo, pathsInfo } from '@huggingface/hub';
import { InputError, MissingResourceError } from '../util/errors.js';
import { requireHttpUrl } from '../util/url.js';
import { hubCacheDir, isCommitSha, manifestFor, repoCacheFolder, type NliDtype } from './model-store.js';
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
  const cacheDir = opts.cacheDir ?? hubCacheDir();
  const folder = repoCacheFolder(cacheDir, opts.id);
  const creds = opts.accessToken ? { accessToken: opts.accessToken } : {};
  const common = { repo: { type: 'model' as const, name: opts.id }, hubUrl, fetch: opts.fetch, ...creds };
  // q8 (the row scheme) is not on the hub: its source dtype is downloaded and the file built from it.
  const builtFrom = manifest.dtypes[opts.dtype].builtFrom;
  const wanted = [manifest.dtypes[builtFrom ?? opts.dtype].onnx, ...manifest.common];

  let commit: string;
  let infos: Awaited<ReturnType<typeof pathsInfo>>;
  try {
    if (isCommitSha(revision)) {
      commit = revision;
    } else {
      const info = await modelInfo({ name: opts.id, revision, additionalFields: ['sha'], hubUrl, fetch: opts.fetch, ...creds });
      commit = (info as { sha?: string }).sha ?? '';
      if (!isCommitSha(commit)) throw new Error(`hub did not report a commit for ${opts.id}@${revision}`);
    }
    infos = await pathsInfo({ ...common, paths: wanted, revision: commit });
  } catch (e) {
    throw new MissingResourceError(`cannot reach the model hub at ${hubUrl} for ${opts.id}: ${netReason(e)}; download elsewhere and pass --model <dir>`);
  }
  const byPath = new Map(infos.map((i) => [i.path, i]));
  const absent = wanted.filter((w) => !byPath.has(w));
  if (absent.length > 0) throw new MissingResourceError(`${opts.id}@${commit} has no ${absent.join(', ')} on ${hubUrl}`);

  const total = wanted.reduce((s, w) => s + (byPath.get(w)!.lfs?.size ?? byPath.get(w)!.size), 0);
  let done = 0;
  const files: PulledFile[] = [];
  for (const rel of wanted) {
    const info = byPath.get(rel)!;
    const size = info.lfs?.size ?? info.size;
    const etag = info.lfs?.oid ?? info.oid;
    if (!etag) throw new InputError(`hub reported no hash for ${rel}: cannot verify it`);
    const kind = info.lfs ? 'sha256' : 'gitsha1';
    const blob = path.join(folder, 'blobs', etag);
    const pointer = path.join(folder, 'snapshots', commit, rel);
    if (existsSync(blob) && statSync(blob).size === size) {
      linkIntoSnapshot(blob, pointer);
      done += size;
      opts.onProgress?.(done, total, rel);
      files.push({ path: rel, size, digest: etag, downloaded: false });
      continue;
    }
    mkdirSync(path.dirname(blob), { recursive: true });
    const partial = `${blob}.incomplete`;
    try {
      const remote = await downloadFile({ ...common, path: rel, revision: commit });
      if (!remote) throw new Error('file not found');
      const out = createWriteStream(partial);
      const reader = remote.stream().getReader();
      for (;;) {
        const { done: end, value } = await reader.read();
        if (end) break;
        if (!out.write(value)) await new Promise<void>((r) => out.once('drain', () => r()));
        done += value.byteLength;
        opts.onProgress?.(done, total, rel);
      }
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    } catch (e) {
      rmSync(partial, { force: true });
      throw new MissingResourceError(`download of ${opts.id}/${rel} failed: ${netReason(e)}`);
    }
    const got = statSync(partial).size;
    if (got !== size) {
      rmSync(partial, { force: true });
      throw new InputError(`download of ${opts.id}/${rel} is corrupt: ${got} bytes, the hub reports ${size}; run the pull again`);
    }
    const digest = verifyDigest(partial, kind, size);
    if (digest !== etag) {
      rmSync(partial, { force: true });
      throw new InputError(`download of ${opts.id}/${rel} is corrupt: ${kind === 'sha256' ? 'sha256' : 'git sha1'} ${digest.slice(0, 12)}… differs from the hub's ${etag.slice(0, 12)}…; run the pull again`);
    }
    renameSync(partial, blob);
    linkIntoSnapshot(blob, pointer);
    files.push({ path: rel, size, digest: etag, downloaded: true });
  }
  const dir = path.join(folder, 'snapshots', commit);
  if (builtFrom) {
    const rel = manifest.dtypes[opts.dtype].onnx;
    const built = quantizeOnnxFile(path.join(dir, manifest.dtypes[builtFrom].onnx), path.join(dir, rel), 'row');
    files.push({ path: rel, size: built.bytes, digest: built.sha256, downloaded: false, built: true });
  }
  if (!isCommitSha(revision)) {
    mkdirSync(path.join(folder, 'refs'), { recursive: true });
    writeFileSync(path.join(folder, 'refs', revision), commit);
  }
  return { id: opts.id, commit, dir, files };
}
