import { Xoshiro128 } from '../../src/nli/onnx-builder/rng.js';

/** One generated request: where it goes, its content type and its raw body text. */
export interface FuzzRequest {
  route: '/v1/rerank' | '/v1/score' | '/v1/nli';
  contentType: string;
  body: string;
  /** What was done to a valid body, for reporting. */
  how: string;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Valid bodies the mutations start from; `datasetId` is a system turn the server has loaded. */
function seeds(datasetId: string): { route: FuzzRequest['route']; body: Json }[] {
  const inline: Json = {
    id: 'inline',
    service: 'Alarm_1',
    context: 'Wake me up at 7.',
    actions: [{ act: 'CONFIRM', slot: 'new_alarm_time', values: ['7 am'] }],
    candidates: [
      { system: 'a', text: 'Setting an alarm for 7 am?', likelihood: -1 },
      { system: 'b', text: 'Okay.' },
    ],
  };
  return [
    { route: '/v1/rerank', body: { items: [inline, { id: 'turn', dataset_id: datasetId, candidates: [{ system: 'a', text: 'Sure.' }] }] } },
    { route: '/v1/rerank', body: inline },
    { route: '/v1/rerank', body: { items: [inline], systems: ['b', 'a'] } },
    { route: '/v1/score', body: { items: [{ id: 's', dataset_id: datasetId, utterance: 'Sure, what city?' }, { id: 'i', service: 'Alarm_1', actions: [{ act: 'CONFIRM', slot: 'new_alarm_time', values: ['7 am'] }], utterance: 'At 7 am?', ground_truth: 'Confirming 7 am.' }] } },
    { route: '/v1/nli', body: { pairs: [{ premise: 'The flight leaves at 7.', hypothesis: 'The time is 7.' }] } },
  ];
}

const WEIRD: Json[] = [
  null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, '', ' ', 'x'.repeat(3000), '\u0000', '\ud800', '🙂🙂', '<script>', '../../etc/passwd',
  '__proto__', 'constructor', '1_00000/1', 'nope/999999', [], [null], [[[]]], {}, { __proto__: 1 } as Json, { constructor: { prototype: {} } }, { toString: 1 },
];

class Gen {
  constructor(private readonly rng: Xoshiro128) {}
  int(n: number): number {
    return this.rng.nextUint32() % n;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  weird(): Json {
    const w = this.pick(WEIRD);
    return structuredClone(w);
  }
  /** A random path to a value inside `v` (possibly the root). */
  paths(v: Json, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
    out.push(at);
    if (Array.isArray(v)) v.forEach((x, i) => this.paths(x, [...at, i], out));
    else if (v && typeof v === 'object') for (const k of Object.keys(v)) this.paths(v[k], [...at, k], out);
    return out;
  }
}

function getAt(v: Json, p: (string | number)[]): Json {
  return p.reduce<Json>((x, k) => (x as Record<string | number, Json>)[k], v);
}

/**
 * `count` requests from a seeded generator: valid bodies with one to three mutations (a field
 * removed, replaced by an odd value, a list blown past the limits, a key renamed), plus broken JSON,
 * other content types, empty and huge bodies. The same seed gives the same requests.
 */
export function fuzzRequests(count: number, opts: { seed?: number; datasetId: string; maxItems: number }): FuzzRequest[] {
  const g = new Gen(new Xoshiro128(opts.seed ?? 1, 'serve-fuzz'));
  const base = seeds(opts.datasetId);
  const out: FuzzRequest[] = [];
  for (let n = 0; n < count; n++) {
    const seed = g.pick(base);
    const body = structuredClone(seed.body);
    let root: Json = body;
    const hows: string[] = [];
    const kind = g.int(20);
    if (kind === 0) {
      const text = JSON.stringify(body);
      out.push({ route: seed.route, contentType: 'application/json', body: text.slice(0, g.int(text.length)), how: 'truncated JSON' });
      continue;
    }
    if (kind === 1) {
      out.push({ route: seed.route, contentType: g.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'multipart/form-data; boundary=x']), body: JSON.stringify(body), how: 'other content type' });
      continue;
    }
    if (kind === 2) {
      out.push({ route: seed.route, contentType: 'application/json', body: g.pick(['', 'null', '[]', '"items"', '1', '{', '{"items":', '\u0000', '{"items":[]}', `{"__proto__":{"polluted":1},"items":[]}`, JSON.stringify({ constructor: { prototype: { polluted: 1 } } })]), how: 'degenerate body' });
      continue;
    }
    const rounds = 1 + g.int(3);
    for (let r = 0; r < rounds; r++) {
      const paths = g.paths(root);
      const p = g.pick(paths);
      const op = g.int(5);
      if (p.length === 0) {
        root = op < 2 ? g.weird() : root;
        hows.push(op < 2 ? 'root replaced' : 'root kept');
        continue;
      }
      const parent = getAt(root, p.slice(0, -1)) as Record<string | number, Json>;
      const key = p[p.length - 1];
      if (op === 0) {
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete parent[key];
        hows.push(`removed ${p.join('/')}`);
      } else if (op === 1 || op === 2) {
        parent[key] = g.weird();
        hows.push(`odd value at ${p.join('/')}`);
      } else if (op === 3) {
        const v = parent[key];
        if (Array.isArray(v) && v.length > 0) {
          const times = g.pick([2, opts.maxItems + 1, 200]);
          parent[key] = Array.from({ length: times }, () => structuredClone(v[0]));
          hows.push(`list ${p.join('/')} x${times}`);
        } else {
          parent[key] = [v, v];
          hows.push(`wrapped ${p.join('/')} in a list`);
        }
      } else if (!Array.isArray(parent)) {
        parent[`${String(key)}_`] = parent[key];
        delete parent[key];
        hows.push(`renamed ${p.join('/')}`);
      }
    }
    out.push({ route: seed.route, contentType: 'application/json', body: JSON.stringify(root) ?? 'null', how: hows.join('; ') });
  }
  return out;
}

export interface FuzzTally {
  byStatus: Record<number, number>;
  /** Requests answered 5xx, or not answered at all. */
  failures: { request: FuzzRequest; status: number | string; body: string }[];
}

/** Sends the requests, `concurrency` at a time, and tallies the statuses. */
export async function runFuzz(url: string, requests: FuzzRequest[], opts: { token?: string; concurrency?: number } = {}): Promise<FuzzTally> {
  const tally: FuzzTally = { byStatus: {}, failures: [] };
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const req = requests[next++];
      try {
        const res = await fetch(url + req.route, {
          method: 'POST',
          headers: { 'content-type': req.contentType, ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
          body: req.body,
        });
        const text = await res.text();
        tally.byStatus[res.status] = (tally.byStatus[res.status] ?? 0) + 1;
        if (res.status >= 500) tally.failures.push({ request: req, status: res.status, body: text.slice(0, 300) });
      } catch (e) {
        tally.failures.push({ request: req, status: 'no answer', body: String((e as Error).message) });
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker));
  return tally;
}
