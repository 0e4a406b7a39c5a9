import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DownloadError, loadManifest, pull, readZipMember, sourceUrl, type Manifest } from '../src/data/pull.js';
import { InputError } from '../src/util/errors.js';
import { tempDir } from './helpers/temp.js';

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** A minimal single-member zip (deflated), written by hand so the reader is tested on real bytes. */
function makeZip(name: string, content: Buffer): Buffer {
  const data = deflateRawSync(content);
  const nameBuf = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(content.length, 22);
  local.writeUInt16LE(nameBuf.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(content.length, 24);
  central.writeUInt16LE(nameBuf.length, 28);
  central.writeUInt32LE(0, 42);
  const cdOffset = local.length + nameBuf.length + data.length;
  const cdSize = central.length + nameBuf.length;
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(1, 8);
  eocd.writeUInt16LE(1, 10);
  eocd.writeUInt32LE(cdSize, 12);
  eocd.writeUInt32LE(cdOffset, 16);
  return Buffer.concat([local, nameBuf, data, central, nameBuf, eocd]);
}

// Small files served over loopback HTTP, at the same paths as their manifest URLs.
const schemaBody = Buffer.from(JSON.stringify([{ service_name: 'Fake_1', slots: [] }]));
const dialoguesBody = Buffer.from('x'.repeat(50_000));
const testJson = Buffer.from(JSON.stringify({ SNG01: { log: [] } }));
const zipBody = makeZip('test.json', testJson);

const served = new Map<string, Buffer>([
  ['/org/sgd/abc123/train/schema.json', schemaBody],
  ['/org/sgd/abc123/test/dialogues_001.json', dialoguesBody],
  ['/org/convlab/def456/data/multiwoz/test.json.zip', zipBody],
  ['/org/sgd/abc123/corrupt.json', Buffer.from('not what the manifest says')],
]);
const requests: { url: string; range?: string }[] = [];
let server: http.Server;
let base: string;
/** When set, the next response for this path is cut off after this many bytes. */
let truncateOnce: { path: string; bytes: number } | undefined;

function manifestWith(files: Manifest['datasets'][string]['files'], extra: Manifest['datasets'] = {}): string {
  const m: Manifest = { datasets: { sgd: { files }, ...extra } };
  const f = path.join(tempDir('manifest'), 'datasets.json');
  writeFileSync(f, JSON.stringify(m));
  return f;
}

const fileEntry = (p: string, url: string, body: Buffer) => ({ path: p, url, size: body.length, sha256: sha(body) });
const schemaEntry = fileEntry('sgd/train/schema.json', 'https://raw.example.org/org/sgd/abc123/train/schema.json', schemaBody);
const dialoguesEntry = fileEntry(
  'sgd/test/dialogues_001.json',
  'https://raw.example.org/org/sgd/abc123/test/dialogues_001.json',
  dialoguesBody,
);
const zipEntry = {
  ...fileEntry('multiwoz/convlab_mwz21_test.json', 'https://raw.example.org/org/convlab/def456/data/multiwoz/test.json.zip', zipBody),
  extract: { member: 'test.json', size: testJson.length, sha256: sha(testJson) },
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = req.url ?? '';
    requests.push({ url, range: req.headers.range });
    const body = served.get(url);
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (truncateOnce && truncateOnce.path === url) {
      const cut = truncateOnce.bytes;
      truncateOnce = undefined;
      res.writeHead(200, { 'content-length': body.length });
      // Give the client time to consume the bytes before the cut (an errored web stream drops
      // chunks still queued), then close mid-body.
      res.write(body.subarray(0, cut), () => setTimeout(() => res.socket?.end(), 300));
      return;
    }
    if (m) {
      const from = Number(m[1]);
      res.writeHead(206, { 'content-length': body.length - from, 'content-range': `bytes ${from}-${body.length - 1}/${body.length}` });
      res.end(body.subarray(from));
      return;
    }
    res.writeHead(200, { 'content-length': body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const freshDir = (): string => tempDir('pull');

describe('todeval data pull against a loopback server', () => {
  it('downloads, verifies and places files, extracting the zip member', async () => {
    const dataDir = freshDir();
    const manifestFile = manifestWith([schemaEntry, dialoguesEntry], { multiwoz: { files: [zipEntry] } });
    const events: string[] = [];
    const r = await pull({ dataDir, mirror: base, manifestFile, onEvent: (e) => events.push(e.kind) });
    expect(r.fetched.sort()).toEqual(['multiwoz/convlab_mwz21_test.json', 'sgd/test/dialogues_001.json', 'sgd/train/schema.json']);
    expect(readFileSync(path.join(dataDir, 'sgd/train/schema.json'))).toEqual(schemaBody);
    expect(readFileSync(path.join(dataDir, 'multiwoz/convlab_mwz21_test.json'))).toEqual(testJson);
    // Neither temp files nor the downloaded zip are left behind.
    expect(existsSync(path.join(dataDir, 'multiwoz/convlab_mwz21_test.json.zip.part'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'sgd/train/schema.json.part'))).toBe(false);
    expect(events.filter((k) => k === 'done')).toHaveLength(3);
  });

  it('selects datasets with only, and rejects unknown names', async () => {
    const dataDir = freshDir();
    const manifestFile = manifestWith([schemaEntry], { multiwoz: { files: [zipEntry] } });
    const r = await pull({ dataDir, mirror: base, manifestFile, only: ['multiwoz'] });
    expect(r.fetched).toEqual(['multiwoz/convlab_mwz21_test.json']);
    expect(existsSync(path.join(dataDir, 'sgd'))).toBe(false);
    await expect(pull({ dataDir, mirror: base, manifestFile, only: ['woz'] })).rejects.toThrow(/unknown dataset woz/);
  });

  it('skips files already present with a matching checksum, refetches a damaged one', async () => {
    const dataDir = freshDir();
    const manifestFile = manifestWith([schemaEntry, dialoguesEntry]);
    await pull({ dataDir, mirror: base, manifestFile });
    writeFileSync(path.join(dataDir, 'sgd/test/dialogues_001.json'), 'damaged');
    const before = requests.length;
    const r = await pull({ dataDir, mirror: base, manifestFile });
    expect(r.skipped).toEqual(['sgd/train/schema.json']);
    expect(r.fetched).toEqual(['sgd/test/dialogues_001.json']);
    expect(requests.slice(before).map((q) => q.url)).toEqual(['/org/sgd/abc123/test/dialogues_001.json']);
    expect(readFileSync(path.join(dataDir, 'sgd/test/dialogues_001.json'))).toEqual(dialoguesBody);
  });

  it('resumes an interrupted download with a Range request', async () => {
    const dataDir = freshDir();
    const manifestFile = manifestWith([dialoguesEntry]);
    truncateOnce = { path: '/org/sgd/abc123/test/dialogues_001.json', bytes: 20_000 };
    await expect(pull({ dataDir, mirror: base, manifestFile })).rejects.toThrow(/interrupted|checksum/);
    const part = path.join(dataDir, 'sgd/test/dialogues_001.json.part');
    const partial = existsSync(part) ? readFileSync(part).length : 0;
    expect(partial).toBeGreaterThan(0);
    const before = requests.length;
    const r = await pull({ dataDir, mirror: base, manifestFile });
    expect(readFileSync(path.join(dataDir, 'sgd/test/dialogues_001.json'))).toEqual(dialoguesBody);
    expect(requests[before].range).toBe(`bytes=${partial}-`);
    expect(r.resumed).toEqual(['sgd/test/dialogues_001.json']);
  });

  it('fails with one line naming the file on a checksum mismatch, and leaves nothing behind', async () => {
    const dataDir = freshDir();
    const entry = { ...schemaEntry, path: 'sgd/corrupt.json', url: 'https://raw.example.org/org/sgd/abc123/corrupt.json' };
    const err = await pull({ dataDir, mirror: base, manifestFile: manifestWith([entry]) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DownloadError);
    const line = (err as InputError).oneLine();
    expect(line).toMatch(/^sgd\/corrupt\.json: checksum mismatch/);
    expect(line).not.toContain('\n');
    expect(existsSync(path.join(dataDir, 'sgd/corrupt.json'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'sgd/corrupt.json.part'))).toBe(false);
  });

  it('reports an HTTP error status with the URL', async () => {
    const entry = { ...schemaEntry, url: 'https://raw.example.org/nowhere/schema.json' };
    await expect(pull({ dataDir: freshDir(), mirror: base, manifestFile: manifestWith([entry]) })).rejects.toThrow(
      /HTTP 404 for http:\/\/127\.0\.0\.1:\d+\/nowhere\/schema\.json/,
    );
  });

  it('says "cannot reach" in one line when the server is down', async () => {
    const down = http.createServer();
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const port = (down.address() as AddressInfo).port;
    await new Promise<void>((resolve) => down.close(() => resolve()));
    const err = await pull({ dataDir: freshDir(), mirror: `http://127.0.0.1:${port}`, manifestFile: manifestWith([schemaEntry]) }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DownloadError);
    expect((err as InputError).oneLine()).toMatch(new RegExp(`^cannot reach 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`));
  });
});

describe('manifest and zip reading', () => {
  it('maps a source URL onto a mirror by path', () => {
    expect(sourceUrl('https://raw.githubusercontent.com/a/b/c/x.json', 'http://m.local/base/')).toBe('http://m.local/base/a/b/c/x.json');
    expect(sourceUrl('https://raw.githubusercontent.com/a/b/c/x.json')).toBe('https://raw.githubusercontent.com/a/b/c/x.json');
  });

  it('refuses manifest paths that escape the data dir', () => {
    const f = manifestWith([{ ...schemaEntry, path: '../evil.json' }]);
    expect(() => loadManifest(f)).toThrow(/unsafe path/);
  });

  it('reads a deflated member and names a missing one', () => {
    expect(readZipMember(zipBody, 'test.json')).toEqual(testJson);
    expect(() => readZipMember(zipBody, 'train.json')).toThrow(/no member train.json/);
    expect(() => readZipMember(Buffer.from('plain text, no zip here at all'), 'x')).toThrow(/not a zip/);
  });

  it('bundled manifest pins every DATA.md file to a commit with size and sha256', () => {
    const { manifest } = loadManifest();
    expect(Object.keys(manifest.datasets).sort()).toEqual(['gcdf1', 'multiwoz', 'sgd']);
    for (const ds of Object.values(manifest.datasets)) {
      for (const f of ds.files) {
        expect(f.url).toMatch(/^https:\/\/raw\.githubusercontent\.com\/[^/]+\/[^/]+\/[0-9a-f]{40}\//);
        expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
        expect(f.size).toBeGreaterThan(0);
      }
    }
  });
});
