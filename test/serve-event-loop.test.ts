import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServe, type ServeProcess } from '../scripts/lib/serve-process.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData } from './helpers/shared.js';

// The worst body /v1/nli accepts (8 pairs of 60,000-character words, cut to 16,384 characters each
// before tokenizing) against real servers on loopback, started from the built CLI as users run it,
// with the lexical stand-in (the real RoBERTa tokenizer, a cheap graph). What held /healthz was
// tokenizing on the event loop; whether a text was tokenized there is counted by the tokenizer
// itself and shown in /metrics, so the test asserts where the work ran, not how long it took (no
// timed test).

const servers: ServeProcess[] = [];
afterAll(async () => {
  for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  await Promise.all(servers.map((s) => s.exited));
});

const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');

/** A word of 60,000 letters, different for each seed (no text of the body is another's). */
const word = (seed: number) => Array.from({ length: 60_000 }, (_, i) => String.fromCharCode(97 + ((i * 7919 + seed * 31 + (i >> 7) * seed) % 26))).join('');
const worstBody = (round: number) => ({ pairs: Array.from({ length: 8 }, (_, i) => ({ premise: word(100 * round + 2 * i + 1), hypothesis: word(100 * round + 2 * i + 2) })) });

async function metric(url: string, name: string): Promise<number> {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await fetch(`${url}/metrics`)).text());
  if (!m) throw new Error(`no ${name} in /metrics`);
  return Number(m[1]);
}

/** The worst body, with /healthz asked back to back while it is in flight. */
async function worstWithHealthz(url: string, round: number) {
  let inFlight = true;
  const healthz: number[] = [];
  const poll = (async () => {
    while (inFlight) {
      const res = await fetch(`${url}/healthz`);
      await res.text();
      if (inFlight) healthz.push(res.status);
    }
  })();
  const res = await fetch(`${url}/v1/nli`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(worstBody(round)) });
  const body = (await res.json()) as { results?: unknown[] };
  inFlight = false;
  await poll;
  return { status: res.status, results: body.results?.length, healthz };
}

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))('serve: the worst body does not block the event loop', () => {
  const start = async (extra: string[]) => {
    const s = await spawnServe(['--model', getLexicalStandinDir(), '--data-dir', DATA_DIR, '--dialogues', DIALOGUES, '--device', 'cpu', '--threads', '1', '--log-level', 'warn', ...extra], {}, 120_000, { built: true });
    servers.push(s);
    return s;
  };

  it('by default a tokenizer thread encodes its 16 texts (none on the event loop) while /healthz is answered', async () => {
    const server = await start([]);
    try {
      const before = await metric(server.url, 'todeval_tokenizer_texts_event_loop_total');
      const r = await worstWithHealthz(server.url, 1);
      expect(r.status).toBe(200);
      expect(r.results).toBe(8);
      expect(await metric(server.url, 'todeval_tokenizer_texts_event_loop_total')).toBe(before);
      expect(r.healthz.length).toBeGreaterThan(0);
      expect(r.healthz.every((s) => s === 200)).toBe(true);
      // The event loop's delay is measured (monitorEventLoopDelay) and exposed for operators.
      expect(await metric(server.url, 'todeval_nodejs_eventloop_lag_max_seconds')).toBeGreaterThanOrEqual(0);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 120_000);

  it('--tokenizer-threads 0 tokenizes on the event loop, and /metrics counts each of the 16 texts', async () => {
    const server = await start(['--tokenizer-threads', '0']);
    try {
      const before = await metric(server.url, 'todeval_tokenizer_texts_event_loop_total');
      const r = await worstWithHealthz(server.url, 2);
      expect(r.status).toBe(200);
      expect(await metric(server.url, 'todeval_tokenizer_texts_event_loop_total')).toBe(before + 16);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 120_000);
});
