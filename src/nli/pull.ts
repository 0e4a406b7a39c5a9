import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, copyFileSync, writeFileSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { downloadFile, modelInfo, pathsInfo } from '@huggingface/hub';
import { InputError, MissingResourceError } from '../util/errors.js';
import { DOWNLOAD_RETRY, isTransientNetError, isTransientStatus, type RetryPolicy } from '../util/transient-net.js';
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
  /** How a file's download meets a reset connection (default DOWNLOAD_RETRY: 4 tries, 0.5/1/2 s apart). */
  retry?: RetryPolicy;
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
  const retry = opts.retry ?? DOWNLOAD_RETRY;
  for (const rel of wanted) files.push(await pullFile(hub, cachedFile(folder, commit, rel, byPath.get(rel)!), commit, progress, retry));
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

  /** `bytes` more of `file` (fewer, when a download restarts from its first byte). */
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
async function pullFile(hub: Hub, f: CachedFile, commit: string, progress: PullProgress, retry: RetryPolicy): Promise<PulledFile> {
  if (existsSync(f.blob) && statSync(f.blob).size === f.size) {
    linkIntoSnapshot(f.blob, f.pointer);
    progress.add(f.size, f.rel);
    return { path: f.rel, size: f.size, digest: f.etag, downloaded: false };
  }
  mkdirSync(path.dirname(f.blob), { recursive: true });
  // Bytes land under this name and take the blob's only once verified: a download cut off anywhere
  // leaves no file a later pull (or the runner) would take for the model. The name is this pull's own:
  // two pulls of one model at once (two shells, two jobs on a shared cache) each truncated and renamed
  // away the other's file when they shared one; now each verifies its own and the renames land the same bytes.
  const partial = `${f.blob}.${process.pid}-${randomBytes(4).toString('hex')}.incomplete`;
  try {
    await downloadWithRetries(partial, hub, f, commit, progress, retry);
  } catch (e) {
    rmSync(partial, { force: true });
    throw new MissingResourceError(`download of ${hub.repo.name}/${f.rel} failed: ${netReason(e)}`);
  }
  verifyDownload(partial, f, hub.repo.name);
  renameSync(partial, f.blob);
  linkIntoSnapshot(f.blob, f.pointer);
  return { path: f.rel, size: f.size, digest: f.etag, downloaded: true };
}

/**
 * What the hub library's requests of one try met. Its blob streams pass a failed request on as a bare
 * message (the socket error's code is lost), and a ranged request is read whatever the status: this
 * fetch keeps the error and status, and refuses any answer to a request for the rest of a file but a 206
 * from the byte asked for (a server that ignores Range sends the whole file, which appended to the part
 * already here is corrupt).
 */
class WatchedFetch {
  error: unknown;
  status = 0;
  rangeIgnored = false;
  constructor(
    private readonly inner: typeof fetch,
    /** The first byte asked for: a request with `Range: bytes=<from>-…` is this try's resumption. */
    private readonly from: number,
  ) {}

  readonly fetch: typeof fetch = async (input, init) => {
    let res: Response;
    try {
      res = await this.inner(input, init);
    } catch (e) {
      this.error = e;
      throw e;
    }
    if (isTransientStatus(res.status)) this.status = res.status;
    const range = new Headers(init?.headers).get('range');
    if (this.from > 0 && range?.startsWith(`bytes=${this.from}-`) && res.ok) {
      // Only a 206 whose Content-Range starts at the byte asked for continues the file; a 206 for other
      // bytes (a proxy that mangles ranges) appended here would be as corrupt as a whole file.
      const answered = res.headers.get('content-range');
      if (res.status !== 206 || !answered?.startsWith(`bytes ${this.from}-`)) {
        this.rangeIgnored = true;
        await res.body?.cancel();
        throw new Error(`the server ignored Range: ${range} (answered ${res.status}${answered ? `, ${answered}` : ''})`);
      }
    }
    return res;
  };

  /** Was this try's failure one a new request may not meet? */
  transient(e: unknown): boolean {
    return isTransientNetError(e) || isTransientNetError(this.error) || this.status !== 0;
  }

  /** The failure to report: the request's own error where the stream passed on only its message. */
  cause(e: unknown): unknown {
    if (e instanceof Error) return e;
    if (this.error !== undefined) return this.error;
    if (this.status !== 0) return new Error(`HTTP ${this.status}`);
    return e;
  }
}

/**
 * Downloads the file into `partial`; a transient failure mid-way (a reset or closed connection, a
 * gateway's 502/503/504) is tried again up to the policy's count, waiting longer each time. A retry asks
 * for the bytes not yet written (HTTP Range) and appends them; where the server answers with other bytes
 * (the whole file, mostly), the file is restarted from its first byte at once, that refused request not
 * counted as a try, and later tries of it start from byte 0 without asking. A failure after the last byte
 * goes to verification. Other failures, and the last try's, are thrown.
 */
async function downloadWithRetries(partial: string, hub: Hub, f: CachedFile, commit: string, progress: PullProgress, retry: RetryPolicy): Promise<void> {
  let written = 0;
  // Cleared once the server answered a request for the rest of the file with other bytes (the whole
  // file, mostly): later tries start over from the first byte without asking again (each ask cost a
  // request and, counted, a try).
  let resumable = true;
  for (let attempt = 1; ; ) {
    if (!resumable && written > 0) {
      progress.add(-written, f.rel);
      written = 0;
    }
    const watch = new WatchedFetch(hub.fetch ?? fetch, written);
    try {
      await downloadTo(partial, { ...hub, fetch: watch.fetch }, f.rel, commit, written, (n) => {
        written += n;
        progress.add(n, f.rel);
      });
      return;
    } catch (e) {
      if (watch.rangeIgnored) {
        // Refused before a byte was kept, the network was fine: the same try goes again at once, from byte 0.
        resumable = false;
        continue;
      }
      // What reached the disk: the write stream was closed before downloadTo rejected.
      const started = existsSync(partial);
      const onDisk = started ? statSync(partial).size : 0;
      if (onDisk !== written) {
        progress.add(onDisk - written, f.rel);
        written = onDisk;
      }
      // Every byte came before the connection failed: the caller's verification decides. A request for
      // the rest would ask for nothing past the end, which a server refuses (416), losing the whole file.
      if (started && written === f.size) return;
      if (attempt >= retry.attempts || !watch.transient(e)) {
        const cause = watch.cause(e);
        throw attempt > 1 ? new Error(`${netReason(cause)}, at try ${attempt} of ${retry.attempts}`) : cause;
      }
      await sleep(retry.firstDelayMs * 2 ** (attempt - 1));
      attempt++;
    }
  }
}

/** Streams the file at `commit` into `file` from byte `from` on (the bytes before it are already there), reporting each chunk. */
async function downloadTo(file: string, hub: Hub, rel: string, commit: string, from: number, onBytes: (n: number) => void): Promise<void> {
  // `xet: false`: a Xet-backed file is then read from its resolve URL like any other (the hub serves its
  // bytes there, Range included). The library's Xet reader would ask the CAS for a reconstruction plan
  // with a Range header and get JSON with 200, which a resumed try takes for a server ignoring Range.
  const remote = await downloadFile({ ...hub, path: rel, revision: commit, xet: false });
  if (!remote) throw new Error('file not found');
  const out = createWriteStream(file, from > 0 ? { flags: 'r+', start: from } : {});
  // A write error (a full disk) is kept and thrown once the file is closed; a wait for 'drain' sees it at once.
  let writeError: Error | undefined;
  out.on('error', (e) => (writeError = e));
  const closed = new Promise<void>((resolve) => out.once('close', () => resolve()));
  const reader = (from > 0 ? remote.slice(from) : remote).stream().getReader();
  try {
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      if (!out.write(value)) await Promise.race([once(out, 'drain'), closed]);
      if (writeError) throw writeError;
      onBytes(value.byteLength);
    }
  } finally {
    // Closed before the caller looks at the file's size or retries into it: one writer at a time.
    reader.cancel().catch(() => {});
    out.end();
    await closed;
  }
  if (writeError) throw writeError;
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
