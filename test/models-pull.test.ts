import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCachedModels, repoCacheFolder, resolveModel } from '../src/nli/model-store.js';
import { pullModel } from '../src/nli/pull.js';
import { buildQ8 } from '../src/nli/q8-build.js';
import { createNliRunner } from '../src/nli/runner.js';
import { InputError, MissingResourceError } from '../src/util/errors.js';
import { CLI_ARGV } from './helpers/cli.js';
import { debertaV3TokenizerJson } from './helpers/nli-family-tokenizers.js';
import { REPO_ROOT } from './helpers/shared.js';
import { getSensitiveTinyModelDir } from './nli-fixtures.js';

const ID = 'Xenova/roberta-large-mnli';
const DEFAULT_ID = ID;
const COMMIT = 'a'.repeat(8) + '0123456789abcdef0123456789abcdef';
/** The Xet hash the fake hub reports for a Xet-backed file (the library only passes it on to the CAS). */
const XET_HASH = 'b'.repeat(64);

interface FakeFile {
  body: Buffer;
  lfs: boolean;
  /** What the fake hub claims, when it should lie. */
  reportedSize?: number;
  servedBody?: Buffer;
  /**
   * How many downloads of the file (not the `bytes=0-0` probes) the server cuts: it sends the head and
   * half the body, then resets the connection (TCP RST: the client sees ECONNRESET). `held`: the
   * reset waits for the test's `resetHeld()`, so it falls after the client has written bytes.
   */
  resets?: number;
  held?: boolean;
  /**
   * Stored with Xet, as the hub now stores large files: the probe that asks for Xet file info gets it
   * (the headers the hub library reads to choose its Xet reader, links to CAS endpoints under /xet/,
   * which this server does not serve); a plain GET of the resolve URL still gets the bytes, as on the hub.
   */
  xet?: boolean;
  /**
   * The first downloads of the file send their head and half the body, then wait until this many have
   * arrived, and all get the rest together: pulls started at once then overlap for certain. Later
   * downloads are served at once.
   */
  together?: number;
  /** The cuts (see `resets`) fall after the whole body, sent without a length, and are always held. */
  cutAtEnd?: boolean;
  /** The first `times` downloads of the file (probes left out) are answered with this status, no bytes. */
  failWith?: { status: number; times: number };
}

interface HubOptions {
  /** Answer `Range: bytes=a-b` with 206 and those bytes (default), or ignore it and send the whole file with 200. */
  ranges?: boolean;
  /** Answer a Range with 206, but with the whole file from its first byte (and a Content-Range that says so). */
  rangesFromZero?: boolean;
}

/**
 * A body's git blob sha1 and sha256, computed once per body: the fake hub reports them at every
 * paths-info request and sends the sha256 as the ETag of every resolve request (probes and retries
 * included), and the tests name the model's blob by it; the bodies are models of megabytes (about
 * 1.5 CPU-s of hashing the same bytes again).
 */
const bodyDigests = new WeakMap<Buffer, { gitOid: string; sha256: string }>();
function digestsOf(body: Buffer): { gitOid: string; sha256: string } {
  let d = bodyDigests.get(body);
  if (d === undefined) {
    d = { gitOid: createHash('sha1').update(`blob ${body.length}\0`).update(body).digest('hex'), sha256: createHash('sha256').update(body).digest('hex') };
    bodyDigests.set(body, d);
  }
  return d;
}

/**
 * A loopback stand-in for the three hub endpoints @huggingface/hub calls for a download:
 * model info (commit sha), paths-info (sizes, LFS sha256 / git oids) and resolve (bytes, with the
 * Range probe). It records requests so the test can see the real client code ran against it.
 */
function fakeHub(files: Record<string, FakeFile>, ID = DEFAULT_ID, { ranges = true, rangesFromZero = false }: HubOptions = {}) {
  const requests: string[] = [];
  // Each download of a file (probes left out): its path, the Range asked for ('' for none), the status sent.
  const downloads: { path: string; range: string; status: number }[] = [];
  // The files whose probe was answered with Xet file info.
  const xetProbes: string[] = [];
  const held: (() => void)[] = [];
  const cuts = new Map<string, number>();
  const fails = new Map<string, number>();
  // The downloads waiting at a file's gate (see FakeFile.together); `released` once the gate opened.
  const gated = new Map<string, { res: http.ServerResponse; rest: Buffer }[]>();
  const released: { res: http.ServerResponse; rest: Buffer }[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${req.method} ${url.pathname}`);
    const infoPrefix = `/api/models/${ID}/revision/`;
    if (req.method === 'GET' && url.pathname.startsWith(infoPrefix)) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ _id: 'x', id: ID, sha: COMMIT, private: false, downloads: 0, likes: 0, gated: false, lastModified: new Date().toISOString() }));
      return;
    }
    if (req.method === 'POST' && url.pathname === `/api/models/${ID}/paths-info/${COMMIT}`) {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const { paths } = JSON.parse(body) as { paths: string[] };
        const out = paths
          .filter((p) => files[p])
          .map((p) => {
            const f = files[p];
            const size = f.reportedSize ?? f.body.length;
            const { gitOid, sha256 } = digestsOf(f.body);
            return f.lfs
              ? { type: 'file', path: p, oid: gitOid, size, lfs: { oid: sha256, size, pointerSize: 134 } }
              : { type: 'file', path: p, oid: gitOid, size };
          });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(out));
      });
      return;
    }
    const resolvePrefix = `/${ID}/resolve/${COMMIT}/`;
    if (req.method === 'GET' && url.pathname.startsWith(resolvePrefix)) {
      const f = files[url.pathname.slice(resolvePrefix.length)];
      if (!f) {
        res.statusCode = 404;
        res.setHeader('X-Error-Code', 'EntryNotFound');
        res.end('not found');
        return;
      }
      const rel = url.pathname.slice(resolvePrefix.length);
      const body = f.servedBody ?? f.body;
      res.setHeader('ETag', `"${digestsOf(f.body).sha256}"`);
      const range = req.headers.range ?? '';
      if (range === 'bytes=0-0') {
        if (f.xet && (req.headers.accept ?? '').includes('application/vnd.xet-fileinfo+json')) {
          xetProbes.push(rel);
          const cas = `http://${req.headers.host}/xet`;
          res.setHeader('content-type', 'application/vnd.xet-fileinfo+json');
          res.setHeader('X-Linked-Size', String(body.length));
          res.setHeader('X-Xet-Hash', XET_HASH);
          res.setHeader('Link', `<${cas}/v1/reconstructions/${XET_HASH}>; rel="xet-reconstruction-info", <${cas}/token>; rel="xet-auth"`);
          res.end(JSON.stringify({ hash: XET_HASH, size: body.length }));
          return;
        }
        res.statusCode = 206;
        res.setHeader('content-range', `bytes 0-0/${body.length}`);
        res.end(body.subarray(0, 1));
        return;
      }
      const failed = fails.get(rel) ?? 0;
      if (f.failWith && failed < f.failWith.times) {
        fails.set(rel, failed + 1);
        res.statusCode = f.failWith.status;
        downloads.push({ path: rel, range, status: res.statusCode });
        res.end(`status ${res.statusCode}`);
        return;
      }
      const asked = ranges ? /^bytes=(\d+)-(\d*)$/.exec(range) : null;
      if (asked && Number(asked[1]) >= body.length) {
        // Nothing there to send: unsatisfiable, as any HTTP server answers.
        res.statusCode = 416;
        res.setHeader('content-range', `bytes */${body.length}`);
        downloads.push({ path: rel, range, status: 416 });
        res.end();
        return;
      }
      const [start, end] = !asked ? [0, body.length - 1] : rangesFromZero ? [0, body.length - 1] : [Number(asked[1]), asked[2] === '' ? body.length - 1 : Number(asked[2])];
      const part = body.subarray(start, end + 1);
      res.statusCode = asked ? 206 : 200;
      if (asked) res.setHeader('content-range', `bytes ${start}-${end}/${body.length}`);
      res.setHeader('content-length', String(part.length));
      downloads.push({ path: rel, range, status: res.statusCode });
      const cut = cuts.get(rel) ?? 0;
      if (cut < (f.resets ?? 0)) {
        cuts.set(rel, cut + 1);
        const reset = () => res.socket?.resetAndDestroy();
        if (f.cutAtEnd) {
          // Chunked, so the client cannot tell the body is complete; held at once: the test resets it
          // only once the client has every byte, so nothing sent can be lost to the reset.
          res.removeHeader('content-length');
          res.write(part);
          held.push(reset);
          return;
        }
        res.write(part.subarray(0, part.length >> 1), () => (f.held ? held.push(reset) : reset()));
        return;
      }
      const gate = gated.get(rel) ?? [];
      if ((f.together ?? 0) > 0 && gate !== released) {
        gated.set(rel, gate);
        res.write(part.subarray(0, part.length >> 1));
        gate.push({ res, rest: part.subarray(part.length >> 1) });
        if (gate.length >= f.together!) {
          gated.set(rel, released);
          for (const w of gate) w.res.end(w.rest);
        }
        return;
      }
      res.end(part);
      return;
    }
    res.statusCode = 404;
    res.end('no route');
  });
  return {
    requests,
    xetProbes,
    downloads,
    /** Resets the connections of the held cuts (see FakeFile.resets). */
    resetHeld(): void {
      for (const reset of held.splice(0)) reset();
    },
    async start(): Promise<string> {
      // Node closes an idle keep-alive socket after 5 s, and the client reuses one it believes open for
      // 4 s: on a loaded box the two timers race and a request meets a reset socket (ECONNRESET, seen
      // once in CI). The hub's CDN keeps connections far longer than any client does; so does this one.
      server.keepAliveTimeout = 60_000;
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () =>
      new Promise<void>((r) => {
        // A cut still held (a test that failed before releasing it) must not keep the server open.
        for (const reset of held.splice(0)) reset();
        for (const gate of gated.values()) for (const w of gate.splice(0)) w.res.destroy();
        server.close(() => r());
        server.closeIdleConnections();
      }),
  };
}

function modelFiles(dir: string): Record<string, FakeFile> {
  const read = (f: string) => readFileSync(path.join(dir, f));
  return {
    'onnx/model.onnx': { body: read('onnx/model.onnx'), lfs: true },
    'config.json': { body: read('config.json'), lfs: false },
    'tokenizer.json': { body: read('tokenizer.json'), lfs: true },
    'tokenizer_config.json': { body: read('tokenizer_config.json'), lfs: false },
  };
}

describe('todeval models pull against a loopback hub', () => {
  let files: Record<string, FakeFile>;
  const dirs: string[] = [];
  const tmpCache = () => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'hf-cache-'));
    dirs.push(d);
    return d;
  };
  beforeAll(() => {
    files = modelFiles(getSensitiveTinyModelDir());
  });
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('downloads into the HF cache layout, verifies, and the runner then finds the model', async () => {
    const hub = fakeHub(files);
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    const progress: number[] = [];
    try {
      const res = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir, onProgress: (d) => progress.push(d) });
      expect(res.commit).toBe(COMMIT);
      expect(res.files.map((f) => f.downloaded)).toEqual([true, true, true, true]);
      expect(hub.requests).toContain(`POST /api/models/${ID}/paths-info/${COMMIT}`);
      expect(hub.requests).toContain(`GET /${ID}/resolve/${COMMIT}/onnx/model.onnx`);
      const folder = repoCacheFolder(cacheDir, ID);
      expect(readFileSync(path.join(folder, 'refs', 'main'), 'utf8')).toBe(COMMIT);
      const pointer = path.join(folder, 'snapshots', COMMIT, 'onnx', 'model.onnx');
      expect(lstatSync(pointer).isSymbolicLink()).toBe(true);
      const sha = digestsOf(files['onnx/model.onnx'].body).sha256;
      expect(readdirSync(path.join(folder, 'blobs'))).toContain(sha);
      expect(readFileSync(pointer).equals(files['onnx/model.onnx'].body)).toBe(true);
      const total = Object.values(files).reduce((s, f) => s + f.body.length, 0);
      expect(progress[progress.length - 1]).toBe(total);

      expect(listCachedModels(cacheDir)).toMatchObject([{ id: ID, revision: COMMIT, dtypes: ['fp32'] }]);
      const resolved = resolveModel(undefined, 'fp32', { HF_HUB_CACHE: cacheDir });
      expect(resolved.signature).toEqual({ modelId: ID, revision: COMMIT, dtype: 'fp32' });
      expect(() => resolveModel(undefined, 'fp16', { HF_HUB_CACHE: cacheDir })).toThrow(/missing onnx\/model_fp16\.onnx.*todeval models pull --dtype fp16/);

      const saved = process.env.HF_HUB_CACHE;
      process.env.HF_HUB_CACHE = cacheDir;
      try {
        const runner = await createNliRunner({ device: 'cpu', threads: 1, notice: () => {} });
        const [p] = await runner.score([{ premise: 'Sure. What time?', hypothesis: 'The time is 5 pm.' }]);
        expect(p.entailment + p.neutral + p.contradiction).toBeCloseTo(1, 6);
        expect(runner.modelSignature.revision).toBe(COMMIT);
        await runner.close();
      } finally {
        if (saved === undefined) delete process.env.HF_HUB_CACHE;
        else process.env.HF_HUB_CACHE = saved;
      }

      // A second pull finds every blob in place and downloads nothing.
      hub.requests.length = 0;
      const again = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir });
      expect(again.files.every((f) => !f.downloaded)).toBe(true);
      expect(hub.requests.some((r) => r.includes('/resolve/'))).toBe(false);
    } finally {
      await hub.close();
    }
  });

  it('the CLI without a terminal says which file it is pulling (was: silent until the end), data on stdout', async () => {
    const hub = fakeHub(files);
    const hubUrl = await hub.start();
    try {
      const res = await promisify(execFile)(
        process.execPath,
        [...CLI_ARGV, 'models', 'pull', '--hub-url', hubUrl, '--cache-dir', tmpCache()],
        { cwd: REPO_ROOT },
      );
      const pulled = res.stderr.split('\n').filter((l) => l.startsWith('pulling '));
      expect(pulled.map((l) => l.split(' ')[1]).sort()).toEqual(Object.keys(files).sort());
      expect(res.stdout).toMatch(/^downloaded onnx\/model\.onnx /m);
      expect(res.stdout).not.toContain('pulling');
    } finally {
      await hub.close();
    }
  });

  it('rejects a file whose sha256 differs from the hub report, leaving nothing behind', async () => {
    const tampered = { ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], servedBody: Buffer.from(files['onnx/model.onnx'].body).fill(7, 100, 200) } };
    const hub = fakeHub(tampered);
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const err = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir }).catch((e) => e);
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).oneLine()).toMatch(/^download of Xenova\/roberta-large-mnli\/onnx\/model\.onnx is corrupt: sha256 [0-9a-f]{12}… differs from the hub's [0-9a-f]{12}…; run the pull again$/);
      const blobs = path.join(repoCacheFolder(cacheDir, ID), 'blobs');
      expect(readdirSync(blobs).filter((f) => f.length === 64)).toEqual([]);
      expect(readdirSync(blobs).some((f) => f.endsWith('.incomplete'))).toBe(false);
      expect(() => resolveModel(undefined, 'fp32', { HF_HUB_CACHE: cacheDir })).toThrow(MissingResourceError);
    } finally {
      await hub.close();
    }
  });

  it('rejects a file whose size differs from the hub report', async () => {
    const short = { ...files, 'config.json': { ...files['config.json'], servedBody: files['config.json'].body.subarray(0, 50) } };
    const hub = fakeHub(short);
    const hubUrl = await hub.start();
    try {
      const err = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir: tmpCache() }).catch((e) => e);
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toMatch(/config\.json is corrupt: 50 bytes, the hub reports \d+/);
    } finally {
      await hub.close();
    }
  });

  /** The blobs folder of a pull into `cacheDir`: no `.incomplete` file may be left there, whatever happened. */
  const blobsOf = (cacheDir: string) => readdirSync(path.join(repoCacheFolder(cacheDir, ID), 'blobs'));
  const onnxSha = () => digestsOf(files['onnx/model.onnx'].body).sha256;

  it('a connection reset mid-download is retried: the rest of the file is asked for (Range) and appended, and the blob verifies', async () => {
    const hub = fakeHub({ ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], resets: 1, held: true } });
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    const size = files['onnx/model.onnx'].body.length;
    let lastDone = 0;
    try {
      // Released once the client has written some of the file: the reset then falls mid-download.
      const res = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir, onProgress: (done, _total, file) => ((lastDone = done), file === 'onnx/model.onnx' && hub.resetHeld()) });
      expect(res.files.map((f) => f.downloaded)).toEqual([true, true, true, true]);
      const onnx = hub.downloads.filter((d) => d.path === 'onnx/model.onnx');
      expect(onnx).toHaveLength(2);
      expect(onnx[0]).toEqual({ path: 'onnx/model.onnx', range: '', status: 200 });
      // The second request starts where the written bytes end: after some, before the half that was sent.
      const from = Number(/^bytes=(\d+)-(\d+)$/.exec(onnx[1].range)?.[1]);
      expect(onnx[1]).toEqual({ path: 'onnx/model.onnx', range: `bytes=${from}-${size - 1}`, status: 206 });
      expect(from).toBeGreaterThan(0);
      expect(from).toBeLessThanOrEqual(size >> 1);
      const blob = path.join(repoCacheFolder(cacheDir, ID), 'blobs', onnxSha());
      expect(readFileSync(blob).equals(files['onnx/model.onnx'].body)).toBe(true);
      expect(blobsOf(cacheDir).some((f) => f.endsWith('.incomplete'))).toBe(false);
      // Progress counted each byte once.
      expect(lastDone).toBe(Object.values(files).reduce((s, f) => s + f.body.length, 0));
    } finally {
      await hub.close();
    }
  });

  it('a server that ignores Range on the retry: the file is downloaded again from its first byte, not appended to', async () => {
    const hub = fakeHub({ ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], resets: 1, held: true } }, ID, { ranges: false });
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const res = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir, onProgress: (_d, _t, file) => file === 'onnx/model.onnx' && hub.resetHeld() });
      expect(res.files[0]).toMatchObject({ path: 'onnx/model.onnx', downloaded: true });
      const onnx = hub.downloads.filter((d) => d.path === 'onnx/model.onnx');
      expect(onnx.map((d) => [d.range === '' ? 'whole' : 'rest', d.status])).toEqual([['whole', 200], ['rest', 200], ['whole', 200]]);
      expect(readFileSync(path.join(repoCacheFolder(cacheDir, ID), 'blobs', onnxSha())).equals(files['onnx/model.onnx'].body)).toBe(true);
      expect(blobsOf(cacheDir).some((f) => f.endsWith('.incomplete'))).toBe(false);
    } finally {
      await hub.close();
    }
  });

  it('a server that ignores Range, and two resets: the refused request uses up no try and Range is not asked again (was: failed "ignored Range" at try 4 of 4)', async () => {
    // Two resets of the tries that get bytes; the server also cuts the refused request for the rest of the
    // file (it counts every download), which the client has dropped by then: 3 cuts in all.
    const hub = fakeHub({ ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], resets: 3, held: true } }, ID, { ranges: false });
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    let lastDone = 0;
    try {
      const res = await pullModel({
        id: ID,
        dtype: 'fp32',
        hubUrl,
        cacheDir,
        retry: { attempts: 4, firstDelayMs: 10 },
        onProgress: (done, _t, file) => ((lastDone = done), file === 'onnx/model.onnx' && hub.resetHeld()),
      });
      expect(res.files[0]).toMatchObject({ path: 'onnx/model.onnx', downloaded: true });
      // Cut, refused (the one ask for the rest), cut again and started over without asking, then whole.
      const onnx = hub.downloads.filter((d) => d.path === 'onnx/model.onnx');
      expect(onnx.map((d) => [d.range === '' ? 'whole' : 'rest', d.status])).toEqual([['whole', 200], ['rest', 200], ['whole', 200], ['whole', 200]]);
      expect(readFileSync(path.join(repoCacheFolder(cacheDir, ID), 'blobs', onnxSha())).equals(files['onnx/model.onnx'].body)).toBe(true);
      expect(lastDone).toBe(Object.values(files).reduce((s, f) => s + f.body.length, 0));
    } finally {
      await hub.close();
    }
  });

  it('a 206 to a resumed request that starts elsewhere than the byte asked for is refused like an ignored Range: the file starts over (was: appended, the pull failed as corrupt)', async () => {
    const hub = fakeHub({ ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], resets: 1, held: true } }, ID, { rangesFromZero: true });
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const res = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir, retry: { attempts: 4, firstDelayMs: 10 }, onProgress: (_d, _t, file) => file === 'onnx/model.onnx' && hub.resetHeld() });
      expect(res.files[0]).toMatchObject({ path: 'onnx/model.onnx', downloaded: true });
      const onnx = hub.downloads.filter((d) => d.path === 'onnx/model.onnx');
      expect(onnx.map((d) => [d.range === '' ? 'whole' : 'rest', d.status])).toEqual([['whole', 200], ['rest', 206], ['whole', 200]]);
      expect(readFileSync(path.join(repoCacheFolder(cacheDir, ID), 'blobs', onnxSha())).equals(files['onnx/model.onnx'].body)).toBe(true);
    } finally {
      await hub.close();
    }
  });

  it('a connection that fails after the last byte: the file goes to verification, with no request for the nothing past its end (was: that request met 416 and the whole file was deleted)', async () => {
    const hub = fakeHub({ ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], resets: 1, cutAtEnd: true } });
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    const size = files['onnx/model.onnx'].body.length;
    try {
      // The ONNX file comes first: its last byte is written when the pull's progress reaches its size.
      const res = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir, retry: { attempts: 4, firstDelayMs: 10 }, onProgress: (done, _t, file) => file === 'onnx/model.onnx' && done === size && hub.resetHeld() });
      expect(res.files[0]).toMatchObject({ path: 'onnx/model.onnx', downloaded: true });
      expect(hub.downloads.filter((d) => d.path === 'onnx/model.onnx')).toEqual([{ path: 'onnx/model.onnx', range: '', status: 200 }]);
      expect(readFileSync(path.join(repoCacheFolder(cacheDir, ID), 'blobs', onnxSha())).equals(files['onnx/model.onnx'].body)).toBe(true);
    } finally {
      await hub.close();
    }
  });

  it('a Xet-backed file is read from its resolve URL, so a reset mid-way resumes with Range (was: the Xet reader asked the CAS, whose 200 a retry took for an ignored Range)', async () => {
    const hub = fakeHub({ ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], xet: true, resets: 1, held: true } });
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    const size = files['onnx/model.onnx'].body.length;
    try {
      const res = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir, retry: { attempts: 4, firstDelayMs: 10 }, onProgress: (_d, _t, file) => file === 'onnx/model.onnx' && hub.resetHeld() });
      expect(res.files[0]).toMatchObject({ path: 'onnx/model.onnx', downloaded: true });
      // Each try's probe was answered as for a Xet file: the library had the choice of its Xet reader.
      expect(hub.xetProbes).toEqual(['onnx/model.onnx', 'onnx/model.onnx']);
      expect(hub.requests.filter((r) => r.includes('/xet/'))).toEqual([]);
      const onnx = hub.downloads.filter((d) => d.path === 'onnx/model.onnx');
      expect(onnx).toHaveLength(2);
      expect(onnx[0]).toEqual({ path: 'onnx/model.onnx', range: '', status: 200 });
      const from = Number(/^bytes=(\d+)-(\d+)$/.exec(onnx[1].range)?.[1]);
      expect(onnx[1]).toEqual({ path: 'onnx/model.onnx', range: `bytes=${from}-${size - 1}`, status: 206 });
      expect(from).toBeGreaterThan(0);
      expect(readFileSync(path.join(repoCacheFolder(cacheDir, ID), 'blobs', onnxSha())).equals(files['onnx/model.onnx'].body)).toBe(true);
    } finally {
      await hub.close();
    }
  });

  it('two pulls of one model at once both succeed, each writing its own partial file (was: they shared blobs/<hash>.incomplete, truncated it and renamed it away under each other)', async () => {
    // Both downloads of the ONNX file are under way, half written, before either may finish.
    const hub = fakeHub({ ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], together: 2 } });
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const both = await Promise.allSettled([pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir }), pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir })]);
      expect(both.map((p) => (p.status === 'fulfilled' ? 'ok' : String(p.reason)))).toEqual(['ok', 'ok']);
      expect(hub.downloads.filter((d) => d.path === 'onnx/model.onnx')).toHaveLength(2);
      const blob = path.join(repoCacheFolder(cacheDir, ID), 'blobs', onnxSha());
      expect(readFileSync(blob).equals(files['onnx/model.onnx'].body)).toBe(true);
      expect(blobsOf(cacheDir).filter((f) => f.endsWith('.incomplete'))).toEqual([]);
      expect(resolveModel(undefined, 'fp32', { HF_HUB_CACHE: cacheDir }).signature.revision).toBe(COMMIT);
    } finally {
      await hub.close();
    }
  });

  it("a gateway's 503 on the download is tried again, and the next try gets the file", async () => {
    const hub = fakeHub({ ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], failWith: { status: 503, times: 1 } } });
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const res = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir, retry: { attempts: 4, firstDelayMs: 10 } });
      expect(res.files[0]).toMatchObject({ path: 'onnx/model.onnx', downloaded: true });
      expect(hub.downloads.filter((d) => d.path === 'onnx/model.onnx').map((d) => d.status)).toEqual([503, 200]);
      expect(readFileSync(path.join(repoCacheFolder(cacheDir, ID), 'blobs', onnxSha())).equals(files['onnx/model.onnx'].body)).toBe(true);
    } finally {
      await hub.close();
    }
  });

  it('a 403 on the download is not tried again: one request, one line without "at try", nothing left behind', async () => {
    const hub = fakeHub({ ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], failWith: { status: 403, times: Infinity } } });
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const err = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir, retry: { attempts: 4, firstDelayMs: 10 } }).catch((e) => e);
      expect(err).toBeInstanceOf(MissingResourceError);
      expect((err as Error).message).toMatch(/^download of Xenova\/roberta-large-mnli\/onnx\/model\.onnx failed: [^\n]*\b403\b/);
      expect((err as Error).message).not.toContain('at try');
      expect(hub.downloads.filter((d) => d.path === 'onnx/model.onnx').map((d) => d.status)).toEqual([403]);
      expect(blobsOf(cacheDir)).toEqual([]);
    } finally {
      await hub.close();
    }
  });

  it('a connection reset at every try: the pull gives up after the policy\'s tries with one line, leaving nothing behind', async () => {
    const hub = fakeHub({ ...files, 'onnx/model.onnx': { ...files['onnx/model.onnx'], resets: Infinity } });
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const err = await pullModel({ id: ID, dtype: 'fp32', hubUrl, cacheDir, retry: { attempts: 3, firstDelayMs: 10 } }).catch((e) => e);
      expect(err).toBeInstanceOf(MissingResourceError);
      expect((err as Error).message).toMatch(/^download of Xenova\/roberta-large-mnli\/onnx\/model\.onnx failed: [^\n]*\((ECONNRESET|UND_ERR_SOCKET)\), at try 3 of 3$/);
      expect(hub.downloads.filter((d) => d.path === 'onnx/model.onnx')).toHaveLength(3);
      expect(blobsOf(cacheDir)).toEqual([]);
      expect(() => resolveModel(undefined, 'fp32', { HF_HUB_CACHE: cacheDir })).toThrow(MissingResourceError);
    } finally {
      await hub.close();
    }
  });

  it('--dtype q8 downloads the fp32 export and builds the per-row int8 file beside it (it is not on the hub)', async () => {
    const hub = fakeHub(files);
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const res = await pullModel({ id: ID, dtype: 'q8', hubUrl, cacheDir });
      expect(res.files.map((f) => [f.path, Boolean(f.built)])).toEqual([
        ['onnx/model.onnx', false],
        ['config.json', false],
        ['tokenizer.json', false],
        ['tokenizer_config.json', false],
        ['onnx/model_q8_row.onnx', true],
      ]);
      expect(hub.requests.some((r) => r.includes('model_quantized') || r.includes('model_q8_row'))).toBe(false);
      const q8 = resolveModel(undefined, 'q8', { HF_HUB_CACHE: cacheDir });
      expect(q8.onnxPath).toBe(path.join(res.dir, 'onnx', 'model_q8_row.onnx'));
      expect(q8.signature.dtype).toBe('q8-row2');
      expect(listCachedModels(cacheDir)[0].dtypes).toEqual(['fp32', 'q8']);
    } finally {
      await hub.close();
    }
  });

  it("pulls another family's hub id in the same ONNX layout; the cache listing and the runner name its family", async () => {
    // BART's files as the hub export lays them out: RoBERTa's byte-level tokenizer (BART's pair
    // encoding is RoBERTa's), a config naming the family; the graph is the tiny random one.
    const bartId = 'Xenova/bart-large-mnli';
    const config = JSON.parse(files['config.json'].body.toString('utf8')) as Record<string, unknown>;
    const bart = { ...files, 'config.json': { body: Buffer.from(JSON.stringify({ ...config, model_type: 'bart', architectures: ['BartForSequenceClassification'] })), lfs: false } };
    const hub = fakeHub(bart, bartId);
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const res = await pullModel({ id: bartId, dtype: 'fp32', hubUrl, cacheDir });
      expect(res.files).toHaveLength(4);
      expect(listCachedModels(cacheDir)).toMatchObject([{ id: bartId, dtypes: ['fp32'], family: 'bart', pairEncoding: '<s>:0 $A:0 </s>:0 </s>:0 $B:0 </s>:0' }]);
      const saved = process.env.HF_HUB_CACHE;
      process.env.HF_HUB_CACHE = cacheDir;
      try {
        const r = await createNliRunner({ model: bartId, device: 'cpu', threads: 1, notice: () => {} });
        expect(r.modelSignature).toEqual({ modelId: bartId, revision: COMMIT, dtype: 'fp32', family: 'bart' });
        await r.close();
      } finally {
        if (saved === undefined) delete process.env.HF_HUB_CACHE;
        else process.env.HF_HUB_CACHE = saved;
      }
    } finally {
      await hub.close();
    }
  });

  /**
   * DeBERTa-v3 as optimum exports it: model.onnx at the root, config.json and tokenizer.json, no
   * tokenizer_config.json (the graph is the tiny random one; the family's own graphs are checked
   * against PyTorch in nli-families-deberta-bart.test.ts).
   */
  function rootLayoutDeberta(): Record<string, FakeFile> {
    const config = JSON.parse(files['config.json'].body.toString('utf8')) as Record<string, unknown>;
    const deberta = { ...config, model_type: 'deberta-v2', architectures: ['DebertaV2ForSequenceClassification'], pad_token_id: 0, type_vocab_size: 0, max_position_embeddings: 512 };
    return {
      'model.onnx': files['onnx/model.onnx'],
      'config.json': { body: Buffer.from(JSON.stringify(deberta)), lfs: false },
      'tokenizer.json': { body: Buffer.from(JSON.stringify(debertaV3TokenizerJson())), lfs: true },
    };
  }

  it("takes a hub export with model.onnx at the root and no tokenizer_config.json (DeBERTa-v3, through the CLI); q8 is built from it into onnx/ and `models quantize` finds it by hub id", async () => {
    const debertaId = 'MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli';
    const hub = fakeHub(rootLayoutDeberta(), debertaId);
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const run = promisify(execFile);
      const res = await run(process.execPath, [...CLI_ARGV, 'models', 'pull', '--model', debertaId, '--hub-url', hubUrl, '--cache-dir', cacheDir], { cwd: REPO_ROOT });
      expect(res.stdout).toMatch(/^downloaded model\.onnx /m);
      expect(res.stdout).not.toContain('tokenizer_config');
      // Asked for, in one paths-info call, and fetched only where it is.
      expect([...new Set(hub.requests.filter((r) => r.includes('/resolve/')))].sort()).toEqual(['config.json', 'model.onnx', 'tokenizer.json'].map((f) => `GET /${debertaId}/resolve/${COMMIT}/${f}`));
      expect(listCachedModels(cacheDir)).toMatchObject([{ id: debertaId, dtypes: ['fp32'], family: 'deberta-v2', pairEncoding: '[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1' }]);
      const env = { HF_HUB_CACHE: cacheDir };
      const resolved = resolveModel(debertaId, 'fp32', env);
      expect(path.relative(resolved.dir, resolved.onnxPath)).toBe('model.onnx');
      expect(resolved.tokenizerConfigPath).toBeUndefined();

      const q8 = buildQ8(debertaId, undefined, env);
      expect(path.relative(resolved.dir, q8.out)).toBe(path.join('onnx', 'model_q8_row.onnx'));
      expect(resolveModel(debertaId, 'q8', env).signature.dtype).toBe('q8-row2');
      expect(listCachedModels(cacheDir)[0].dtypes).toEqual(['fp32', 'q8']);

      const saved = process.env.HF_HUB_CACHE;
      process.env.HF_HUB_CACHE = cacheDir;
      try {
        const r = await createNliRunner({ model: debertaId, dtype: 'q8', device: 'cpu', threads: 1, notice: () => {} });
        const [p] = await r.score([{ premise: 'There are no free rooms.', hypothesis: 'The hotel is cheap.' }]);
        expect(p.entailment + p.neutral + p.contradiction).toBeCloseTo(1, 6);
        expect(r.modelSignature).toMatchObject({ modelId: debertaId, revision: COMMIT, dtype: 'q8-row2', family: 'deberta-v2' });
        await r.close();
      } finally {
        if (saved === undefined) delete process.env.HF_HUB_CACHE;
        else process.env.HF_HUB_CACHE = saved;
      }
    } finally {
      await hub.close();
    }
  });

  it("--dtype q8 from a root-layout export builds the row file from the root model.onnx; --dtype q8-tensor takes the root model_quantized.onnx", async () => {
    const id = 'cross-encoder/nli-deberta-v3-small';
    // The hub's per-tensor file beside it (its bytes are the fp32 graph's here: only where it is found matters).
    const hub = fakeHub({ ...rootLayoutDeberta(), 'model_quantized.onnx': files['onnx/model.onnx'] }, id);
    const hubUrl = await hub.start();
    const cacheDir = tmpCache();
    try {
      const res = await pullModel({ id, dtype: 'q8', hubUrl, cacheDir });
      expect(res.files.map((f) => [f.path, Boolean(f.built)])).toEqual([
        ['model.onnx', false],
        ['config.json', false],
        ['tokenizer.json', false],
        ['onnx/model_q8_row.onnx', true],
      ]);
      const tensor = await pullModel({ id, dtype: 'q8-tensor', hubUrl, cacheDir });
      expect(tensor.files.map((f) => [f.path, f.downloaded])).toEqual([
        ['model_quantized.onnx', false], // the same bytes as model.onnx: its blob was there already
        ['config.json', false],
        ['tokenizer.json', false],
      ]);
      const env = { HF_HUB_CACHE: cacheDir };
      expect(path.relative(res.dir, resolveModel(id, 'q8-tensor', env).onnxPath)).toBe('model_quantized.onnx');
      expect(path.relative(res.dir, resolveModel(id, 'q8', env).onnxPath)).toBe(path.join('onnx', 'model_q8_row.onnx'));
      expect(listCachedModels(cacheDir)[0].dtypes).toEqual(['fp32', 'q8', 'q8-tensor']);
      expect(() => resolveModel(id, 'fp16', env)).toThrow(/missing onnx\/model_fp16\.onnx or model_fp16\.onnx in .*todeval models pull --model cross-encoder\/nli-deberta-v3-small --dtype fp16/);
    } finally {
      await hub.close();
    }
  });

  it('refuses in one line a repository with no ONNX file in either layout, or without tokenizer.json', async () => {
    const { 'model.onnx': _onnx, ...noOnnx } = rootLayoutDeberta();
    const { 'tokenizer.json': _tok, ...noTokenizer } = rootLayoutDeberta();
    for (const [repo, expected] of [
      [noOnnx, /^facebook\/bart-large-mnli@a{8}[0-9a-f]{32} has no onnx\/model\.onnx or model\.onnx on http:\/\/127\.0\.0\.1:\d+$/],
      [noTokenizer, /^facebook\/bart-large-mnli@a{8}[0-9a-f]{32} has no tokenizer\.json on http/],
    ] as const) {
      const hub = fakeHub(repo, 'facebook/bart-large-mnli');
      const hubUrl = await hub.start();
      try {
        const err = await pullModel({ id: 'facebook/bart-large-mnli', dtype: 'fp32', hubUrl, cacheDir: tmpCache() }).catch((e) => e);
        expect(err).toBeInstanceOf(MissingResourceError);
        expect((err as Error).message).toMatch(expected);
        expect(hub.requests.some((r) => r.includes('/resolve/'))).toBe(false);
      } finally {
        await hub.close();
      }
    }
  });

  it('fails with one clear line when the hub is unreachable (CLI exit 2)', async () => {
    const err = await pullModel({ id: ID, dtype: 'q8', hubUrl: 'http://127.0.0.1:9', cacheDir: tmpCache() }).catch((e) => e);
    expect(err).toBeInstanceOf(MissingResourceError);
    expect((err as Error).message).toMatch(/^cannot reach the model hub at http:\/\/127\.0\.0\.1:9 for Xenova\/roberta-large-mnli: .*pass --model <dir>$/);
    const run = promisify(execFile);
    const res = await run(process.execPath, [...CLI_ARGV, 'models', 'pull', '--hub-url', 'http://127.0.0.1:9', '--cache-dir', tmpCache()], { cwd: REPO_ROOT }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/^todeval: cannot reach the model hub/);
    expect(existsSync(path.join(REPO_ROOT, 'src', 'cli', 'main.ts'))).toBe(true);
  });
});
