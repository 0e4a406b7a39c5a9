import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { inflateRawSync } from 'node:zlib';
import { InputError, MissingResourceError } from '../util/errors.js';
import { readJsonFile } from '../util/json-file.js';
import { findPackageFile } from '../util/package-file.js';
import { requireHttpUrl } from '../util/url.js';

/**
 * `todeval data pull`: fetch the public datasets into a data dir with the ../shared/DATA.md layout.
 * data/datasets.json pins every file to a commit with its size and sha256, so a pulled dir holds
 * exactly the bytes the scores in our docs were computed on (or the pull fails loudly).
 */

export interface ZipMember {
  member: string;
  size: number;
  sha256: string;
}

export interface ManifestFile {
  /** Destination, relative to the data dir. */
  path: string;
  url: string;
  size: number;
  sha256: string;
  /** The URL is a zip; `path` is this member of it. */
  extract?: ZipMember;
}

export interface Manifest {
  datasets: Record<string, { license?: string; source?: string; files: ManifestFile[] }>;
}

/** A failed download: one line for the user, exit 2 like any missing resource. */
export class DownloadError extends MissingResourceError {
  constructor(message: string, opts: { file?: string } = {}) {
    super(message, opts);
    this.name = 'DownloadError';
  }
}

export function loadManifest(file?: string): { manifest: Manifest; file: string } {
  const f = file ? path.resolve(file) : findPackageFile('data', 'datasets.json');
  if (!f || !existsSync(f)) {
    throw new InputError(file ? 'manifest not found' : 'data/datasets.json is missing from the installed package', {
      file,
    });
  }
  const json = readJsonFile(f);
  validateManifest(json, f);
  return { manifest: json as Manifest, file: f };
}

function validateManifest(json: unknown, file: string): void {
  const datasets = (json as Manifest | null)?.datasets;
  if (typeof datasets !== 'object' || datasets === null) throw new InputError('manifest has no "datasets" object', { file });
  for (const [name, ds] of Object.entries(datasets)) {
    if (!Array.isArray(ds?.files)) throw new InputError('dataset has no "files" array', { file, where: name });
    ds.files.forEach((f, i) => {
      const where = `${name} file ${i}`;
      if (typeof f.path !== 'string' || typeof f.url !== 'string' || typeof f.sha256 !== 'string' || typeof f.size !== 'number') {
        throw new InputError('each file needs path, url, size and sha256', { file, where });
      }
      // The manifest decides where files land; never let it write outside the data dir.
      if (path.isAbsolute(f.path) || f.path.split(/[\\/]/).includes('..')) {
        throw new InputError(`unsafe path "${f.path}"`, { file, where });
      }
    });
  }
}

/** Where a file is fetched from: the manifest URL, or the same path below a mirror's base URL. */
export function sourceUrl(url: string, mirror?: string): string {
  if (!mirror) return url;
  const u = new URL(url);
  return mirror.replace(/\/+$/, '') + u.pathname;
}

export type PullEvent =
  | { kind: 'start'; totalBytes: number; files: number }
  | { kind: 'skip'; file: ManifestFile }
  | { kind: 'progress'; file: ManifestFile; bytes: number }
  | { kind: 'done'; file: ManifestFile; resumed: boolean };

export interface PullOptions {
  dataDir: string;
  /** Dataset names to pull (keys of the manifest); all when absent. */
  only?: string[];
  mirror?: string;
  manifestFile?: string;
  onEvent?: (e: PullEvent) => void;
}

export interface PullResult {
  dataDir: string;
  fetched: string[];
  skipped: string[];
  resumed: string[];
  bytes: number;
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

export function selectFiles(manifest: Manifest, only?: string[]): ManifestFile[] {
  const names = only && only.length > 0 ? only : Object.keys(manifest.datasets);
  const unknown = names.filter((n) => !(n in manifest.datasets));
  if (unknown.length > 0) {
    throw new InputError(`unknown dataset ${unknown.join(', ')} (known: ${Object.keys(manifest.datasets).join(', ')})`);
  }
  return names.flatMap((n) => manifest.datasets[n].files);
}

/** The checksum a finished file at `path` must have. */
function finalChecksum(f: ManifestFile): string {
  return f.extract ? f.extract.sha256 : f.sha256;
}

export async function pull(opts: PullOptions): Promise<PullResult> {
  if (opts.mirror) requireHttpUrl(opts.mirror, 'mirror (--mirror or $TODEVAL_DATA_MIRROR)');
  const { manifest } = loadManifest(opts.manifestFile);
  const files = selectFiles(manifest, opts.only);
  const emit = opts.onEvent ?? (() => {});
  const result: PullResult = { dataDir: opts.dataDir, fetched: [], skipped: [], resumed: [], bytes: 0 };

  const todo: ManifestFile[] = [];
  for (const f of files) {
    const dest = path.join(opts.dataDir, f.path);
    if (existsSync(dest) && (await sha256File(dest)) === finalChecksum(f)) {
      result.skipped.push(f.path);
      emit({ kind: 'skip', file: f });
    } else {
      todo.push(f);
    }
  }
  emit({ kind: 'start', totalBytes: todo.reduce((s, f) => s + f.size, 0), files: todo.length });

  for (const f of todo) {
    const resumed = await fetchOne(f, opts, (bytes) => emit({ kind: 'progress', file: f, bytes }));
    result.fetched.push(f.path);
    if (resumed) result.resumed.push(f.path);
    result.bytes += f.size;
    emit({ kind: 'done', file: f, resumed });
  }
  return result;
}

function describeNetworkError(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message ?? String(e);
}

/**
 * Download one file to `<dest>.part` (resuming a partial one with a Range request), verify size
 * and sha256, then rename into place, so an interrupted pull never leaves a wrong file under the
 * real name. Returns whether a partial download was resumed.
 */
async function fetchOne(f: ManifestFile, opts: PullOptions, onBytes: (n: number) => void): Promise<boolean> {
  const dest = path.join(opts.dataDir, f.path);
  const download = f.extract ? `${dest}.zip.part` : `${dest}.part`;
  const url = sourceUrl(f.url, opts.mirror);

  let have = existsSync(download) ? statSync(download).size : 0;
  if (have >= f.size) {
    // A complete or oversized leftover: either it verifies below as is, or it is junk to refetch.
    if (have === f.size && (await sha256File(download)) === f.sha256) return finish(f, dest, download, true);
    rmSync(download, { force: true });
    have = 0;
  }

  let res: Response;
  try {
    res = await fetch(url, { headers: have > 0 ? { range: `bytes=${have}-` } : {} });
  } catch (e) {
    throw new DownloadError(
      `cannot reach ${new URL(url).host} (${describeNetworkError(e)}); check the network, or pass --mirror URL / set TODEVAL_DATA_MIRROR`,
    );
  }
  if (res.status !== 200 && res.status !== 206) {
    throw new DownloadError(`download failed: HTTP ${res.status} for ${url}`, { file: f.path });
  }
  if (!res.body) throw new DownloadError(`download failed: empty response for ${url}`, { file: f.path });
  const resumed = res.status === 206 && have > 0;
  if (!resumed) have = 0; // the server ignored the range: start over

  // Only now create the folder: a failed first request must not leave an empty ./data/<dataset>,
  // which data-dir resolution would take for a pulled dataset.
  mkdirSync(path.dirname(dest), { recursive: true });
  onBytes(have);
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      onBytes(chunk.length);
      cb(null, chunk);
    },
  });
  try {
    await pipeline(
      Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>),
      counter,
      createWriteStream(download, { flags: resumed ? 'a' : 'w' }),
    );
  } catch (e) {
    // The .part file stays: the next pull resumes it.
    throw new DownloadError(`download interrupted (${describeNetworkError(e)}); run the pull again to resume`, {
      file: f.path,
    });
  }
  // A connection closed early can end the stream without an error: a short file is resumable,
  // not corrupt, so keep it for the next run instead of failing the checksum and deleting it.
  const got = statSync(download).size;
  const announced = Number(res.headers.get('content-length') ?? NaN);
  const expected = Number.isFinite(announced) ? have + announced : f.size;
  if (got < expected) {
    throw new DownloadError(`download interrupted (${got} of ${expected} bytes); run the pull again to resume`, { file: f.path });
  }
  return finish(f, dest, download, resumed);
}

async function finish(f: ManifestFile, dest: string, download: string, resumed: boolean): Promise<boolean> {
  const size = statSync(download).size;
  const got = await sha256File(download);
  if (size !== f.size || got !== f.sha256) {
    rmSync(download, { force: true });
    throw new DownloadError(
      `checksum mismatch: expected ${f.size} bytes sha256 ${f.sha256.slice(0, 12)}…, got ${size} bytes sha256 ${got.slice(0, 12)}… from ${f.url}`,
      { file: f.path },
    );
  }
  if (!f.extract) {
    renameSync(download, dest);
    return resumed;
  }
  const member = readZipMember(readFileSync(download), f.extract.member, f.path);
  const memberSha = createHash('sha256').update(member).digest('hex');
  if (member.length !== f.extract.size || memberSha !== f.extract.sha256) {
    rmSync(download, { force: true });
    throw new DownloadError(`checksum mismatch in zip member ${f.extract.member}`, { file: f.path });
  }
  const tmp = `${dest}.part`;
  writeFileSync(tmp, member);
  renameSync(tmp, dest);
  rmSync(download, { force: true });
  return resumed;
}

/**
 * One member of a zip archive (stored or deflated), read through the central directory. Enough
 * for the dataset zips we pull; zip64 and encryption are refused with a clear error.
 */
export function readZipMember(zip: Buffer, name: string, label = 'zip'): Buffer {
  const EOCD = 0x06054b50;
  let eocd = -1;
  // The end record sits in the last 22 + up to 65535 (comment) bytes.
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new DownloadError('not a zip archive (no end of central directory)', { file: label });
  const entries = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  if (p === 0xffffffff) throw new DownloadError('zip64 archives are not supported', { file: label });
  for (let i = 0; i < entries; i++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new DownloadError('corrupt zip central directory', { file: label });
    const flags = zip.readUInt16LE(p + 8);
    const method = zip.readUInt16LE(p + 10);
    const compSize = zip.readUInt32LE(p + 20);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const localOffset = zip.readUInt32LE(p + 42);
    const entryName = zip.toString('utf8', p + 46, p + 46 + nameLen);
    p += 46 + nameLen + extraLen + commentLen;
    if (entryName !== name) continue;
    if (flags & 1) throw new DownloadError(`zip member ${name} is encrypted`, { file: label });
    if (zip.readUInt32LE(localOffset) !== 0x04034b50) throw new DownloadError('corrupt zip local header', { file: label });
    const dataStart = localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
    const data = zip.subarray(dataStart, dataStart + compSize);
    if (method === 0) return Buffer.from(data);
    if (method === 8) return inflateRawSync(data);
    throw new DownloadError(`zip member ${name} uses unsupported compression method ${method}`, { file: label });
  }
  throw new DownloadError(`zip has no member ${name}`, { file: label });
}
