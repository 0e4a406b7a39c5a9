import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fuzzRequests, runFuzz } from '../scripts/lib/serve-fuzz.js';
import { spawnServe as spawnServeProcess, type ServeProcess } from '../scripts/lib/serve-process.js';
import { runCli } from './helpers/cli.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';
import { createNliRunner } from '../src/nli/runner.js';
import { argmaxLabel } from '../src/nli/types.js';
import { getSensitiveTinyModelDir } from './nli-fixtures.js';

// Real servers on 127.0.0.1 (no mocked HTTP), the tiny random model, one small SGD dialogues file.

// Every server a test starts is tracked, and one still running after the file's tests (a failed
// assertion before its stop(), a test timeout) is killed here: none outlives the file.
const servers: ServeProcess[] = [];
async function spawnServe(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs?: number): Promise<ServeProcess> {
  // The built CLI (`node bin/todeval.js serve`, as users start it), not tsx compiling src/ at each start.
  const server = await spawnServeProcess(args, env, timeoutMs, { built: true });
  servers.push(server);
  return server;
}
afterAll(async () => {
  for (const server of servers) {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  }
  await Promise.all(servers.map((server) => server.exited));
});
const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 12;
const TOKEN = 'test-token-0123456789abcdef';

const readJsonl = (f: string) => readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

interface Answer {
  status: number;
  headers: Headers;
  json: Record<string, unknown> & { message?: string; items?: Record<string, unknown>[] };
}

async function post(url: string, body: unknown, opts: { token?: string; raw?: string; contentType?: string } = {}): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': opts.contentType ?? 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
    body: opts.raw ?? JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? (JSON.parse(text) as Answer['json']) : {} };
}

/** A raw TCP connection to a server: what it received so far, and all of it once the server closes (or resets) it. */
interface RawConnection {
  socket: Socket;
  received(): string;
  closed: Promise<string>;
}

async function openRaw(serverUrl: string): Promise<RawConnection> {
  const { hostname, port } = new URL(serverUrl);
  const socket = connect({ host: hostname, port: Number(port) });
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (text += d));
  socket.on('error', () => undefined); // a reset by the server is one of the outcomes the tests look for
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(text)));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return { socket, received: () => text, closed };
}

/** Resolves with what `c` received once a whole answer (headers and Content-Length bytes of body) is in; rejects if it closes before. */
function wholeAnswer(c: RawConnection): Promise<string> {
  const whole = () => {
    const text = c.received();
    const end = text.indexOf('\r\n\r\n');
    const length = /\r\ncontent-length: *(\d+)/i.exec(text)?.[1];
    return end >= 0 && length !== undefined && Buffer.byteLength(text.slice(end + 4)) >= Number(length);
  };
  return new Promise<string>((resolve, reject) => {
    const check = () => {
      if (!whole()) return;
      c.socket.off('data', check);
      resolve(c.received());
    };
    c.socket.on('data', check);
    void c.closed.then(() => (whole() ? resolve(c.received()) : reject(new Error(`closed before a whole answer: ${JSON.stringify(c.received())}`))));
    check();
  });
}

/** `p`, or `fallback` once `ms` have passed: a deadline only a hung server reaches, not a speed target. */
async function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))('todeval serve (live on loopback, tiny random model)', () => {
  const dir = suiteTempDir('serve');
  const f = (name: string) => path.join(dir, name);
  let model = '';
  let server: ServeProcess;
  let turnIds: string[] = [];
  const data = () => ['--data-dir', DATA_DIR, '--dialogues', DIALOGUES];
  const url = (route: string) => server.url + route;

  beforeAll(async () => {
    model = getSensitiveTinyModelDir();
    // The CLI's own results first: stored references and per-turn scores of a system.
    const gold = await runCli(['score', '--dataset', 'sgd', ...data(), '--limit', String(LIMIT), '--model', model, '--device', 'cpu', '--references', f('refs.jsonl'), '--turns', f('gold.jsonl')]);
    expect(gold.code).toBe(0);
    turnIds = readJsonl(f('gold.jsonl')).slice(1).map((t) => t.id as string);
    server = await spawnServe(['--model', model, '--device', 'cpu', ...data(), '--references', f('refs.jsonl'), '--max-items', '8', '--max-candidates', '4'], { TODEVAL_TOKEN: TOKEN });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('GET /healthz answers without the token: model, device, dataset, limits', async () => {
    const res = await fetch(url('/healthz'));
    expect(res.status).toBe(200);
    const h = (await res.json()) as Record<string, unknown>;
    expect(h).toMatchObject({ status: 'ok', device: 'cpu', dtype: 'fp32', dataset: 'sgd', pendingPairs: 0 });
    // The limits it was started with, for clients to split their batches to (python/todeval/client.py).
    expect(h.limits).toEqual({ maxBodyBytes: 1 << 20, maxItems: 8, maxCandidates: 4, maxActions: 32, maxPairs: 512, maxPendingPairs: 8192, timeoutMs: 60_000, maxCacheBytes: 64 * 2 ** 20, degradedAfter: 3, maxConnections: 256, receiveTimeoutMs: 30_000 });
    expect(String(h.model)).toContain('random');
    // Readiness, open as liveness is (probes carry no token): ready while the model answers.
    const ready = await fetch(url('/readyz'));
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
  });

  it('401 without the token or with a wrong one, on every route but /healthz', async () => {
    const body = { pairs: [{ premise: 'a', hypothesis: 'b' }] };
    for (const token of [undefined, 'wrong', TOKEN.slice(0, -1), `${TOKEN}x`]) {
      const r = await post(url('/v1/nli'), body, { token });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
    expect((await fetch(url('/metrics'))).status).toBe(401);
    expect((await post(url('/v1/rerank'), {})).status).toBe(401); // auth before validation
    expect((await post(url('/v1/nli'), body, { token: TOKEN })).status).toBe(200);
  });

  it('POST /v1/rerank gives what `todeval rerank` gives for the same items, batched or one at a time', async () => {
    const items = [
      { id: 'inline', service: 'Alarm_1', context: 'Wake me up at 7.', actions: [{ act: 'CONFIRM', slot: 'new_alarm_time', values: ['7 am'] }], candidates: [{ system: 'a', text: 'Setting an alarm for 7 am?', likelihood: -1 }, { system: 'b', text: 'Okay.', likelihood: -0.5 }] },
      ...turnIds.slice(0, 4).map((id, i) => ({ id: `t${i}`, dataset_id: id, candidates: [{ system: 'a', text: 'What city are you in?' }, { system: 'b', text: `Option ${i} is available at 5 pm.` }, { system: 'c', text: 'Sure.' }] })),
    ];
    writeFileSync(f('rr.jsonl'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
    const cli = await runCli(['rerank', '-i', f('rr.jsonl'), '--dataset', 'sgd', ...data(), '--model', model, '--device', 'cpu', '-o', f('rr.json')]);
    expect(cli.code).toBe(0);
    const offline = JSON.parse(readFileSync(f('rr.json'), 'utf8')) as { signature: unknown; items: unknown[] };

    const batched = await post(url('/v1/rerank'), { items }, { token: TOKEN });
    expect(batched.status).toBe(200);
    expect(batched.json.items).toEqual(offline.items);
    expect(batched.json.signature).toEqual(offline.signature);
    const single = await post(url('/v1/rerank'), items[0], { token: TOKEN });
    expect(single.json.items).toEqual([offline.items[0]]);
    const ordered = await post(url('/v1/rerank'), { items: [items[0]], systems: ['b', 'a'] }, { token: TOKEN });
    expect(ordered.json.signature).toMatchObject({ systems: 'b,a' });
  }, 180_000);

  it('POST /v1/score gives the per-turn lines of `todeval score --out`, from the stored references', async () => {
    const utterance = (i: number) => `Sure, what city and time? Option ${i}.`;
    writeFileSync(f('sys.jsonl'), turnIds.map((id, i) => JSON.stringify({ id, utterance: utterance(i) })).join('\n') + '\n');
    const cli = await runCli(['score', '--dataset', 'sgd', ...data(), '--limit', String(LIMIT), '--model', model, '--device', 'cpu', '-i', f('sys.jsonl'), '--references', f('refs.jsonl'), '--turns', f('sys.out.jsonl')]);
    expect(cli.code).toBe(0);
    // score's lines also carry each turn's SER verdict and BLEU statistics (for paired tests over the
    // file, docs/significance.md); the service judges faithfulness only, and the rest must be equal.
    const offline = readJsonl(f('sys.out.jsonl'))
      .slice(1)
      .map((line) => {
        const { slotError: _s, bleu: _b, ...sgsacc } = line as Record<string, unknown>;
        return sgsacc;
      });
    const refsBefore = readFileSync(f('refs.jsonl'), 'utf8');

    const served = await post(url('/v1/score'), { items: turnIds.slice(0, 8).map((id, i) => ({ id, dataset_id: id, utterance: utterance(i) })) }, { token: TOKEN });
    expect(served.status).toBe(200);
    expect(served.json.items).toEqual(offline.slice(0, 8));
    expect(served.json.signature).toMatchObject({ metric: 'sgsacc-turns', validation: true, context: true });
    expect(readFileSync(f('refs.jsonl'), 'utf8')).toBe(refsBefore); // all stored: nothing recomputed

    // Inline actions with a ground truth: scored per action with probabilities.
    const inline = await post(url('/v1/score'), { items: [{ id: 'x', service: 'Alarm_1', actions: [{ act: 'CONFIRM', slot: 'new_alarm_time', values: ['7 am'] }], utterance: 'Alarm at 7 am?', ground_truth: 'Confirm the alarm at 7 am.' }] }, { token: TOKEN });
    expect(inline.status).toBe(200);
    const [turn] = inline.json.items as { id: string; actions: { entailment: number; reference: string }[] }[];
    expect(turn.id).toBe('x');
    expect(turn.actions[0].entailment).toBeGreaterThanOrEqual(0);
    expect(turn.actions[0].entailment).toBeLessThanOrEqual(1);
  }, 180_000);

  it('POST /v1/nli: probabilities per pair, identical pairs answered once', async () => {
    const pairs = [
      { premise: 'The flight leaves at 7 am.', hypothesis: 'The time is 7 am.' },
      { premise: 'ok', hypothesis: 'The destination is Seattle.' },
      { premise: 'The flight leaves at 7 am.', hypothesis: 'The time is 7 am.' },
    ];
    const r = await post(url('/v1/nli'), { pairs }, { token: TOKEN });
    expect(r.status).toBe(200);
    const results = r.json.results as { entailment: number; neutral: number; contradiction: number; label: string }[];
    expect(results).toHaveLength(3);
    for (const p of results) expect(p.entailment + p.neutral + p.contradiction).toBeCloseTo(1, 5);
    expect(results[2]).toEqual(results[0]);
    expect(results[1]).not.toEqual(results[0]);
    // The library runner, as `todeval nli` runs it, gives the same probabilities.
    const runner = await createNliRunner({ model, device: 'cpu' });
    try {
      const [p] = await runner.score([pairs[1]]);
      expect({ ...p, label: argmaxLabel(p) }).toEqual(results[1]);
    } finally {
      await runner.close();
    }
  }, 180_000);

  // Each malformed body and the field its 400 message must name.
  const MALFORMED: [route: string, body: string, names: string][] = [
    ['/v1/rerank', '{"items": []}', 'body/items'],
    ['/v1/rerank', '{}', "required property 'items'"],
    ['/v1/rerank', '{"items": [{"id": "a", "candidates": [{"system": "s", "text": "t"}]}]}', 'body/items/0'],
    ['/v1/rerank', '{"items": [{"id": "a", "dataset_id": "x/1", "candidates": []}]}', 'body/items/0/candidates'],
    ['/v1/rerank', '{"items": [{"id": "a", "dataset_id": "x/1", "candidates": [{"system": "s"}]}]}', 'body/items/0/candidates/0'],
    ['/v1/rerank', '{"items": [{"id": "a", "dataset_id": "x/1", "candidates": [{"system": "s", "text": 5}]}]}', 'body/items/0/candidates/0/text'],
    ['/v1/rerank', '{"items": [{"id": "a", "dataset_id": "x/1", "candidates": [{"system": "s", "text": "t", "likelihood": "high"}]}]}', 'body/items/0/candidates/0/likelihood'],
    ['/v1/rerank', '{"items": [{"id": "a", "dataset_id": "x/1", "candidates": [{"system": "s", "text": "t", "score": 1}]}]}', 'body/items/0/candidates/0'],
    ['/v1/rerank', '{"items": [{"id": "a", "dataset_id": "nope", "candidates": [{"system": "s", "text": "t"}]}]}', 'body/items/0/dataset_id'],
    ['/v1/rerank', '{"items": [{"id": "a", "dataset_id": "nope/1", "candidates": [{"system": "s", "text": "t"}]}]}', 'body/items/0 (item a): dataset_id "nope/1"'],
    ['/v1/rerank', '{"items": [{"id": "a", "service": "Alarm_1", "actions": [{"act": "INFROM", "slot": "new_alarm_time", "values": []}], "candidates": [{"system": "s", "text": "t"}]}]}', 'body/items/0 (item a): no sgd rule covers act "INFROM"'],
    ['/v1/rerank', '{"items": [{"id": "a", "actions": [{"act": "INFORM", "slot": "new_alarm_time", "values": ["7"]}], "candidates": [{"system": "s", "text": "t"}]}]}', 'body/items/0 (item a): action INFORM(new_alarm_time) names no service'],
    ['/v1/rerank', '{"items": [{"id": "a", "service": "Alarm_1", "actions": [{"act": "INFORM", "slot": "new_alarm_time", "values": "7"}], "candidates": [{"system": "s", "text": "t"}]}]}', 'body/items/0/actions/0/values'],
    ['/v1/rerank', '{"items": [{"id": "a", "service": "Alarm_1", "actions": [{"act": "INFORM", "slot": "new_alarm_time", "values": [" "]}], "candidates": [{"system": "s", "text": "t"}]}]}', 'body/items/0 (item a): action INFORM(new_alarm_time) has only blank values'],
    ['/v1/rerank', `{"items": [${Array(9).fill('{"id": "a", "dataset_id": "x/1", "candidates": [{"system": "s", "text": "t"}]}').join(',')}]}`, 'body/items must NOT have more than 8 items'],
    ['/v1/rerank', `{"items": [{"id": "a", "dataset_id": "x/1", "candidates": [${Array(5).fill('{"system": "s", "text": "t"}').join(',')}]}]}`, 'body/items/0/candidates must NOT have more than 4 items'],
    ['/v1/rerank', '{"items": [{"id": "a", "dataset_id": "DS/1", "candidates": [{"system": "s", "text": "t"}]}, {"id": "a", "dataset_id": "DS/1", "candidates": [{"system": "s", "text": "u"}]}]}', 'body/items/1/id: duplicate item id "a"'],
    ['/v1/rerank', '{"items": [{"id": "a", "dataset_id": "DS/1", "candidates": [{"system": "s", "text": "t"}]}], "systems": ["zzz"]}', 'body/systems names "zzz"'],
    ['/v1/rerank', '{"items": [{"id": "", "dataset_id": "DS/1", "candidates": [{"system": "s", "text": "t"}]}]}', 'body/items/0/id'],
    ['/v1/score', '{"items": [{"id": "a", "dataset_id": "DS/1"}]}', "body/items/0 must have required property 'utterance'"],
    ['/v1/score', '{"items": [{"id": "a", "utterance": "hi"}]}', 'body/items/0'],
    ['/v1/score', '{"items": [{"id": "a", "dataset_id": "DS/1", "utterance": ["hi"]}]}', 'body/items/0/utterance'],
    ['/v1/nli', '{"pairs": [{"premise": "a"}]}', "body/pairs/0 must have required property 'hypothesis'"],
    ['/v1/nli', '{"pairs": [{"premise": null, "hypothesis": "b"}]}', 'body/pairs/0/premise'],
    ['/v1/nli', '{"pairs": {"premise": "a", "hypothesis": "b"}}', 'body/pairs must be array'],
    ['/v1/nli', '[]', 'body must be object'],
    ['/v1/nli', '{"pairs": [', 'JSON'],
    ['/v1/nli', '', 'empty'],
  ];

  it(`answers ${MALFORMED.length} malformed bodies with 400 and a message naming the field`, async () => {
    expect(MALFORMED.length).toBeGreaterThanOrEqual(15);
    for (const [route, raw, names] of MALFORMED) {
      const r = await post(url(route), undefined, { token: TOKEN, raw: raw.replaceAll('DS/1', turnIds[0]) });
      expect({ route, raw, status: r.status }).toEqual({ route, raw, status: 400 });
      expect(r.json.message, raw).toContain(names);
    }
    // Not JSON at all: 415, and a body past --max-body-bytes: 413.
    expect((await post(url('/v1/nli'), undefined, { token: TOKEN, raw: 'pairs=1', contentType: 'application/x-www-form-urlencoded' })).status).toBe(415);
    // text/plain too, as docs/serve.md promises (was: parsed as a string, then 400 "body must be object").
    const plain = await post(url('/v1/nli'), undefined, { token: TOKEN, raw: '{"pairs": []}', contentType: 'text/plain' });
    expect(plain.status).toBe(415);
    expect(plain.json.message).toContain('application/json');
    // Two candidates of one system in an item: 400 naming the item (was: accepted, and chosen or counted twice).
    const twice = await post(
      url('/v1/rerank'),
      { items: [{ id: 'dup', dataset_id: turnIds[0], candidates: [{ system: 'a', text: 'x' }, { system: 'b', text: 'y' }, { system: 'a', text: 'z' }] }] },
      { token: TOKEN },
    );
    expect(twice.status).toBe(400);
    expect(twice.json.message).toBe('body/items/0 (item dup): item "dup" has two candidates of system "a"; give each system one candidate per item');
  });

  it('a few hundred fuzzed bodies: no 5xx, the server stays up', async () => {
    const tally = await runFuzz(server.url, fuzzRequests(300, { seed: 7, datasetId: turnIds[0], maxItems: 8 }), { token: TOKEN, concurrency: 4 });
    expect(tally.failures).toEqual([]);
    // Each body's status follows from the body alone (no 503 at this load): docs/serve.md prints this tally.
    // One body of seed 7 gives an inline action only a blank value: 400 since blank values fill no template.
    expect(tally.byStatus).toEqual({ 200: 29, 400: 259, 415: 12 });
    const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'serve.md'), 'utf8').replace(/\s+/g, ' ');
    expect(doc).toContain(`300 bodies of seed 7 (8 items at most) -> ${tally.byStatus[200]} x 200, ${tally.byStatus[400]} x 400, ${tally.byStatus[415]} x 415`);
    expect((await fetch(url('/healthz'))).status).toBe(200);
  }, 180_000);

  it('GET /metrics: Prometheus text with requests, latencies, batch sizes, queue depth, cache hits, pairs/s', async () => {
    const res = await fetch(url('/metrics'), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toMatch(/todeval_http_requests_total\{route="\/v1\/rerank",status="200"\} [1-9]/);
    expect(text).toMatch(/todeval_http_requests_total\{route="\/v1\/nli",status="401"\} [1-9]/);
    expect(text).toMatch(/todeval_http_request_duration_seconds_count\{route="\/v1\/score"\} [1-9]/);
    expect(text).toMatch(/todeval_nli_batch_size_count [1-9]/);
    expect(text).toMatch(/todeval_nli_cache_hits_total [1-9]/);
    expect(text).toMatch(/todeval_nli_queue_pairs \d+/);
    expect(text).toMatch(/todeval_nli_pairs_per_second \d/);
    // One JSON log line per request.
    const logged = server.stdout().trim().split('\n').map((l) => JSON.parse(l) as { msg: string; status?: number; url?: string });
    expect(logged.filter((l) => l.msg === 'request' && l.url === '/healthz').length).toBeGreaterThanOrEqual(1);
  });

  it('--hallucination --rank-by omission-hallucination: /v1/rerank equals `todeval rerank` with the same flags, /v1/score labels each turn four ways', async () => {
    const items = turnIds.slice(0, 3).map((id, i) => ({ id: `h${i}`, dataset_id: id, candidates: [{ system: 'a', text: 'What city are you in?' }, { system: 'b', text: `Option ${i} is available at 5 pm, and breakfast is free.` }] }));
    writeFileSync(f('rrh.jsonl'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
    const flags = ['--hallucination', '--rank-by', 'omission-hallucination'];
    const cli = await runCli(['rerank', '-i', f('rrh.jsonl'), '--dataset', 'sgd', ...data(), '--model', model, '--device', 'cpu', ...flags, '-o', f('rrh.json')]);
    expect(cli.code).toBe(0);
    const offline = JSON.parse(readFileSync(f('rrh.json'), 'utf8')) as { signature: unknown; items: unknown[] };
    const h = await spawnServe(['--model', model, '--device', 'cpu', ...data(), ...flags], { TODEVAL_TOKEN: TOKEN });
    try {
      const served = await post(h.url + '/v1/rerank', { items }, { token: TOKEN });
      expect(served.status).toBe(200);
      expect(served.json.items).toEqual(offline.items);
      expect(served.json.signature).toEqual(offline.signature);
      expect(served.json.signature).toMatchObject({ hallucination: true, rankBy: 'omission-hallucination' });
      const scored = await post(h.url + '/v1/score', { items: [{ id: turnIds[0], dataset_id: turnIds[0], utterance: 'Sure, what city and time?' }] }, { token: TOKEN });
      expect(scored.status).toBe(200);
      expect(scored.json.signature).toMatchObject({ hallucination: true });
      const [turn] = scored.json.items as { hallucination?: { check: string } }[];
      expect(turn.hallucination).toBeDefined();
    } finally {
      await h.stop();
    }
  }, 240_000);

  it('--granularity sentence: /v1/score gives each sentence its verdict, as `todeval score --granularity sentence` does', async () => {
    const gold = readJsonl(f('gold.jsonl')).slice(1) as { id: string; utterance: string }[];
    const replies = gold.map((t, i) => ({ id: t.id, utterance: `${t.utterance} Breakfast is free at ${i + 5} pm. Is there anything else I can help you with?` }));
    writeFileSync(f('sent.jsonl'), replies.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const cli = await runCli(['score', '--dataset', 'sgd', ...data(), '--limit', String(LIMIT), '--model', model, '--device', 'cpu', '-i', f('sent.jsonl'), '--granularity', 'sentence', '--context-control', '--turns', f('sent.out.jsonl'), '--progress', 'none']);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    const offline = new Map(readJsonl(f('sent.out.jsonl')).slice(1).map((t) => [t.id as string, t.sentences]));
    const h = await spawnServe(['--model', model, '--device', 'cpu', ...data(), '--granularity', 'sentence', '--log-level', 'warn']);
    try {
      const items = replies.slice(0, 4).map((r) => ({ id: r.id, dataset_id: r.id, utterance: r.utterance }));
      const scored = await post(h.url + '/v1/score', { items });
      expect(scored.status).toBe(200);
      expect(scored.json.signature).toMatchObject({ hallucination: true, granularity: 'sentence' });
      for (const item of scored.json.items as { id: string; utterance: string; sentences: { sentences: { text: string; start: number; end: number; verdict: string }[] } }[]) {
        expect(item.sentences).toEqual(offline.get(item.id));
        const courtesy = item.sentences.sentences.find((v) => v.text === 'Is there anything else I can help you with?');
        expect(courtesy?.verdict).toBe('courtesy');
        for (const v of item.sentences.sentences) expect(item.utterance.slice(v.start, v.end)).toBe(v.text);
      }
    } finally {
      await h.stop();
    }
  }, 240_000);

  it('refuses to listen off loopback without a token, before loading anything', async () => {
    const r = await runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--model', '/nonexistent'], { TODEVAL_TOKEN: '' });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('todeval: --host 0.0.0.0 is reachable from other machines: give --token (or set TODEVAL_TOKEN) so requests must carry it');
  });

  it('503 with Retry-After when the pending pairs would pass --max-pending-pairs; 503 past --timeout-ms, then the retry is served from the cache', async () => {
    const small = await spawnServe(['--model', model, '--device', 'cpu', ...data(), '--max-pending-pairs', '40', '--timeout-ms', '1', '--log-level', 'warn']);
    try {
      const pairs = (k: number) => Array.from({ length: 30 }, (_, i) => ({ premise: `Request ${k}: the train to city number ${i} leaves at ${i} pm from platform ${k}.`, hypothesis: `The time is ${i} pm.` }));
      expect((await post(`${small.url}/v1/nli`, { pairs: [...pairs(0), ...pairs(1)] })).status).toBe(413);
      const answers = await Promise.all(Array.from({ length: 8 }, (_, k) => post(`${small.url}/v1/nli`, { pairs: pairs(k) })));
      const overloaded = answers.filter((a) => a.status === 503 && /pending/.test(a.json.message ?? ''));
      const timedOut = answers.filter((a) => a.status === 503 && /timeout-ms/.test(a.json.message ?? ''));
      expect(overloaded.length).toBeGreaterThan(0);
      expect(timedOut.length).toBeGreaterThan(0);
      expect(overloaded.length + timedOut.length).toBe(8);
      for (const a of [...overloaded, ...timedOut]) expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Once the admitted work is done, its pairs are cached: the same request is answered at once.
      const k = answers.findIndex((a) => timedOut.includes(a));
      let again: Answer | undefined;
      for (let i = 0; i < 100 && again?.status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        again = await post(`${small.url}/v1/nli`, { pairs: pairs(k) });
      }
      expect(again?.status).toBe(200);
      expect((await fetch(`${small.url}/healthz`).then((r) => r.json()) as { pendingPairs: number }).pendingPairs).toBe(0);
    } finally {
      expect(await small.stop()).toBe(0);
    }
  }, 180_000);

  it('SIGTERM with requests in flight: all answered, the pair cache flushed, exit 0', async () => {
    const cache = f('nli-cache.jsonl');
    const busy = await spawnServe(['--model', model, '--device', 'cpu', ...data(), '--cache', cache, '--threads', '1', '--batch-size', '1', '--log-level', 'warn']);
    const n = 6;
    const per = 60;
    const long = 'The restaurant downtown serves Italian food and has outdoor seating with a view of the river. '.repeat(12);
    const answers = Array.from({ length: n }, (_, k) =>
      post(`${busy.url}/v1/nli`, { pairs: Array.from({ length: per }, (_, i) => ({ premise: `${k}/${i}: ${long}`, hypothesis: `The price is ${i} dollars.` })) }),
    );
    try {
      // Wait until every request is admitted (its pairs reserved), then stop the server under them.
      // A deadline rather than a count of polls: on a loaded box admitting six bodies can take seconds.
      let reserved = 0;
      for (const deadline = Date.now() + 60_000; reserved < n * per && Date.now() < deadline; ) {
        const health = (await fetch(`${busy.url}/healthz`).then((r) => r.json())) as { pendingPairs: number };
        reserved = health.pendingPairs;
        if (reserved < n * per) await new Promise((r) => setTimeout(r, 5));
      }
      expect(reserved).toBe(n * per);
      const code = await busy.stop();
      const results = await Promise.all(answers);
      expect(results.map((r) => r.status)).toEqual(Array(n).fill(200));
      expect(code).toBe(0);
      expect(busy.stderr()).toContain('stopped, NLI cache flushed');
      expect(readFileSync(cache, 'utf8').trim().split('\n')).toHaveLength(n * per);
    } finally {
      // Failed before stop(): kill it now, not at the file's end (it holds a core meanwhile).
      if (busy.child.exitCode === null && busy.child.signalCode === null) busy.child.kill('SIGKILL');
      await Promise.allSettled(answers);
    }
  }, 180_000);

  it('SIGTERM while a client is still sending its body: that connection is cut after --timeout-ms, exit 0 (was: waited for it forever)', async () => {
    const s = await spawnServe(['--model', model, '--device', 'cpu', ...data(), '--timeout-ms', '1000', '--log-level', 'warn']);
    const { hostname, port } = new URL(s.url);
    const socket = connect({ host: hostname, port: Number(port) });
    socket.on('error', () => undefined); // the server resets it: expected
    const cut = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('error', reject);
      });
      // The headers and the start of a 100-byte body; the rest never comes.
      socket.write(`POST /v1/nli HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"pairs": [`);
      // Stop it once the server has that request: in flight beside the scrape that reads the gauge.
      let inFlight = 0;
      for (const deadline = Date.now() + 30_000; inFlight < 2 && Date.now() < deadline; ) {
        const text = await fetch(`${s.url}/metrics`).then((r) => r.text());
        inFlight = Number(/^todeval_http_requests_in_flight (\d+)$/m.exec(text)?.[1] ?? 0);
        if (inFlight < 2) await new Promise((r) => setTimeout(r, 20));
      }
      expect(inFlight).toBeGreaterThanOrEqual(2);
      // A deadline far past --timeout-ms and its margin (2 s), not a speed target: before, close()
      // waited on the half-sent request for as long as the client kept its socket open.
      const hung = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve('still running 60 s after SIGTERM'), 60_000);
      });
      expect(await Promise.race([s.stop(), hung])).toBe(0);
      await cut;
      expect(s.stderr()).toContain('stopped, NLI cache flushed');
    } finally {
      clearTimeout(timer);
      socket.destroy();
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    }
  }, 180_000);

  it('/v1/score: a dataset item with a context of its own neither reads nor extends --references (was: references selected under that context stored as the turn\'s)', async () => {
    const refs = f('refs-own-context.jsonl');
    const s = await spawnServe(['--model', model, '--device', 'cpu', ...data(), '--references', refs, '--log-level', 'warn']);
    try {
      const turn = turnIds[0];
      const before = readFileSync(refs, 'utf8');
      const own = await post(`${s.url}/v1/score`, { items: [{ id: 'x', dataset_id: turn, utterance: 'Sure.', context: 'I need a table for two in Paris tonight.' }] });
      expect(own.status).toBe(200);
      expect(readFileSync(refs, 'utf8')).toBe(before);
      // The same turn under its own context: its references are stored, as `score --references` stores them.
      const plain = await post(`${s.url}/v1/score`, { items: [{ id: 'x', dataset_id: turn, utterance: 'Sure.' }] });
      expect(plain.status).toBe(200);
      expect(readJsonl(refs).slice(1).map((r) => r.id)).toEqual([turn]);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  }, 180_000);

  describe('--max-connections and --receive-timeout-ms (was: any number of sockets, each holding a half-sent body for ever)', () => {
    let s: ServeProcess | undefined;
    const opened: RawConnection[] = [];
    const open = async () => {
      const c = await openRaw(s!.url);
      opened.push(c);
      return c;
    };
    const healthz = () => `GET /healthz HTTP/1.1\r\nHost: ${new URL(s!.url).host}\r\n\r\n`;
    /**
     * A new connection that /healthz was answered on, kept open (keep-alive): one the server accepted.
     * New connections are tried until one is answered, within a deadline (not a speed target): the
     * server counts a closed connection out only once it sees the close.
     */
    const answeredConnection = async (): Promise<{ c: RawConnection; answer: string }> => {
      let last = '';
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
        const c = await open();
        c.socket.write(healthz());
        last = await within(wholeAnswer(c).catch((e: Error) => e.message), 30_000, 'no answer within 30 s');
        if (last.startsWith('HTTP/1.1 200 ')) return { c, answer: last };
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no new connection answered within 30 s; last: ${last}`);
    };

    beforeAll(async () => {
      s = await spawnServe(['--model', model, '--device', 'cpu', ...data(), '--max-connections', '2', '--receive-timeout-ms', '2000', '--log-level', 'warn']);
    }, 180_000);
    afterEach(() => {
      for (const c of opened.splice(0)) c.socket.destroy();
    });
    afterAll(async () => {
      for (const c of opened.splice(0)) c.socket.destroy();
      if (s) expect(await s.stop()).toBe(0);
    }, 60_000);

    it('two keep-alive connections held open: a third is closed unanswered; once one of the two goes, a new one is answered', async () => {
      // Each held connection has had its answer and stays open (keep-alive), idle: not a request
      // being received, so --receive-timeout-ms does not cut it, and still counted.
      const held = [(await answeredConnection()).c, (await answeredConnection()).c];
      const third = await open();
      third.socket.write(healthz());
      // Before, it was answered 200 like the others.
      expect(await within(third.closed, 30_000, 'still open 30 s later')).toBe('');
      expect(held.map((c) => c.socket.destroyed)).toEqual([false, false]);

      held[0].socket.destroy();
      expect((await answeredConnection()).answer).toMatch(/^HTTP\/1\.1 200 /);
    }, 120_000);

    it('a client that sent half a body gets 408 and its connection closed after --receive-timeout-ms', async () => {
      // A connection the server accepted (one answer in), then the headers and the start of a
      // 100-byte body; the rest never comes.
      const { c: slow, answer } = await answeredConnection();
      slow.socket.write(`POST /v1/nli HTTP/1.1\r\nHost: ${new URL(s!.url).host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"pairs": [`);
      // A deadline 15 times the timeout, not a speed target: before, the socket stayed open for as
      // long as the client kept it. Fastify writes 408 and closes; a reset may beat the 408 to the client.
      const received = await within(slow.closed, 30_000, `${answer}still open 30 s later`);
      expect(received.startsWith(answer)).toBe(true);
      expect(received.slice(answer.length)).toMatch(/^(?:HTTP\/1\.1 408 |$)/);
      // The server goes on answering.
      expect((await answeredConnection()).answer).toMatch(/^HTTP\/1\.1 200 /);
    }, 120_000);
  });
});
