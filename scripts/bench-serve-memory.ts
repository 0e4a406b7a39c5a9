/**
 * `todeval serve` under a day's worth of new pairs: RSS as unique pairs go through it, request
 * latency, 5xx answers, and /healthz while the worst body runs. Loopback only, bounded load (a few
 * clients, each waiting for its answer before it sends the next request), the lexical stand-in
 * model (real tokenizer, a cheap graph), so the host side is what is measured.
 *
 *   npm run bench:serve-memory -- [--pairs 1000000] [--clients 4] [--batch 512] [--max-cache-bytes N]
 *                                 [--tokenizer-threads N] [--every 100000] [--node-option FLAG]...
 *                                 [--env NAME=VALUE]... [--max-seconds 3600] [--json FILE]
 *
 * --pairs 0 measures the worst body alone.
 *
 * Pairs: every pair is new (a premise shared by 16 pairs, as a turn's candidates share it, and a
 * hypothesis of its own), so nothing is answered from the cache and every text is new to the
 * tokenizer memos: the worst case for memory. The server's RSS is read from /proc/<pid>/status
 * every 100 ms; each checkpoint (every 100k pairs) reports the median and the maximum of the
 * samples since the one before (one reading at an instant lands on a peak or a trough of the
 * garbage collector's cycle, which is what made single readings swing), and the V8 heap, external
 * memory and the rest (native: malloc arenas, onnxruntime) from the server's /metrics. Then the worst body: /v1/nli with 8 pairs of 60,000-character words, sent while
 * /healthz is asked every 10 ms; the slowest /healthz answer is printed beside the body's time.
 * The machine may be shared: say its load (printed) beside the figures.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { resolveDataDir } from '../src/data/data-dir.js';
import { getLexicalStandinDir } from '../test/helpers/lexical-standin.js';
import { spawnServe } from './lib/serve-process.js';

const program = new Command('bench-serve-memory')
  .option('--pairs <n>', 'unique pairs to send', (v) => Number(v), 1_000_000)
  .option('--clients <n>', 'concurrent clients', (v) => Number(v), 4)
  .option('--batch <n>', 'pairs per /v1/nli request (at most the server\'s --max-pairs, 512)', (v) => Number(v), 512)
  .option('--max-cache-bytes <n>', 'the server\'s --max-cache-bytes (default: its own default)')
  .option('--tokenizer-threads <n>', 'the server\'s --tokenizer-threads (default: its own, 1)')
  .option('--every <n>', 'pairs between RSS checkpoints', (v) => Number(v), 100_000)
  .option('--node-option <flag>', 'a Node flag for the server (repeatable), e.g. --max-semi-space-size=4', (v: string, acc: string[]) => [...acc, v], [] as string[])
  .option('--env <name=value>', 'an environment variable for the server (repeatable), e.g. MALLOC_ARENA_MAX=2', (v: string, acc: string[]) => [...acc, v], [] as string[])
  .option('--max-seconds <n>', 'stop sending after this long (the figures say how far it got)', (v) => Number(v), 3600)
  .option('--json <file>', 'also write the figures as JSON');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ pairs: number; clients: number; batch: number; maxCacheBytes?: string; tokenizerThreads?: string; every: number; nodeOption: string[]; env: string[]; maxSeconds: number; json?: string }>();

const SENTENCES = [
  'I found 3 restaurants in the city centre that serve cheap Italian food.',
  'Your table for 4 is booked at 7 pm; the reference number is',
  'There is a train leaving at 10:15 and arriving at 11:02, costing 23.60 pounds.',
  'The hotel has free parking and wifi, and it is rated 4 stars.',
  'Shall I set an alarm for 7 am called wake up?',
];
const HYPOTHESES = ['The price range is cheap.', 'The time is 7 pm.', 'The number of people is 4.', 'The hotel has parking.', 'The alarm time is 7 am.', 'The departure is 10:15.'];

/** Pair i: premise shared by 16 consecutive pairs, hypothesis its own; both new to the server. */
function pair(i: number): { premise: string; hypothesis: string } {
  const turn = i >> 4;
  return { premise: `${SENTENCES[turn % SENTENCES.length]} Turn ${turn}.`, hypothesis: `${HYPOTHESES[i % HYPOTHESES.length]} Case ${i}.` };
}

function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

async function metric(url: string, name: string): Promise<number> {
  return metricIn(await (await fetch(`${url}/metrics`)).text(), name);
}

function metricIn(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

const median = (xs: number[]) => percentile(xs, 50);

const model = getLexicalStandinDir();
const cacheFlag = [...(o.maxCacheBytes ? ['--max-cache-bytes', o.maxCacheBytes] : []), ...(o.tokenizerThreads ? ['--tokenizer-threads', o.tokenizerThreads] : [])];
const load = loadavg().map((x) => x.toFixed(2)).join(' ');
const serverEnv = Object.fromEntries(o.env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
console.log(
  `bench-serve-memory: ${o.pairs} unique pairs, ${o.clients} clients x ${o.batch} pairs a request, lexical stand-in (${path.basename(model)}), ${[...cacheFlag, ...o.nodeOption, ...o.env].join(' ') || 'server defaults'}; load average ${load}`,
);

const dataDir = resolveDataDir().dir;
const dialogues = path.join(dataDir, 'sgd', 'test', 'dialogues_017.json');
const server = await spawnServe(['--model', model, '--data-dir', dataDir, '--dialogues', dialogues, '--device', 'cpu', '--log-level', 'warn', '--timeout-ms', '600000', ...cacheFlag], serverEnv, 180_000, { nodeArgs: o.nodeOption });
const pid = server.child.pid!;
interface Checkpoint {
  pairs: number;
  seconds: number;
  /** Median and maximum of the RSS samples since the checkpoint before. */
  rssMiB: number;
  rssMaxMiB: number;
  /** From the server's /metrics at the checkpoint: V8 heap in use and reserved, external memory. */
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
}
const samples: Checkpoint[] = [];
// RSS every 100 ms; each checkpoint takes the samples since the one before.
let window: number[] = [];
const sampler = setInterval(() => window.push(rssMiB(pid)), 100);
const MiB = 1024 * 1024;
async function checkpoint(pairs: number, seconds: number): Promise<Checkpoint> {
  const taken = window.length > 0 ? window : [rssMiB(pid)];
  window = [];
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return {
    pairs,
    seconds,
    rssMiB: median(taken),
    rssMaxMiB: Math.max(...taken),
    heapUsedMiB: metricIn(text, 'todeval_nodejs_heap_size_used_bytes') / MiB,
    heapTotalMiB: metricIn(text, 'todeval_nodejs_heap_size_total_bytes') / MiB,
    externalMiB: metricIn(text, 'todeval_nodejs_external_memory_bytes') / MiB,
  };
}
const show = (s: Checkpoint) =>
  console.log(
    `  ${String(s.pairs).padStart(8)} pairs  RSS median ${s.rssMiB.toFixed(0).padStart(4)} MiB, max ${s.rssMaxMiB.toFixed(0).padStart(4)}  (V8 heap ${s.heapUsedMiB.toFixed(0)}/${s.heapTotalMiB.toFixed(0)}, external ${s.externalMiB.toFixed(0)}, rest ${(s.rssMiB - s.heapTotalMiB - s.externalMiB).toFixed(0)})  ${s.seconds.toFixed(0).padStart(5)} s`,
  );
const latencies: number[] = [];
let fiveXx = 0;
let sent = 0;
let done = 0;
let nextSample = o.every;
const started = performance.now();
const deadline = started + o.maxSeconds * 1000;
try {
  await new Promise((r) => setTimeout(r, 1000));
  samples.push(await checkpoint(0, 0));
  show(samples[0]);
  const client = async () => {
    while (sent < o.pairs && performance.now() < deadline) {
      const from = sent;
      const n = Math.min(o.batch, o.pairs - from);
      sent += n;
      const pairs = Array.from({ length: n }, (_, k) => pair(from + k));
      const t0 = performance.now();
      const res = await fetch(`${server.url}/v1/nli`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pairs }) });
      await res.text();
      latencies.push(performance.now() - t0);
      if (res.status >= 500) fiveXx++;
      done += n;
      if (done >= nextSample) {
        nextSample += o.every;
        const s = await checkpoint(done, (performance.now() - started) / 1000);
        samples.push(s);
        show(s);
      }
    }
  };
  await Promise.all(Array.from({ length: o.clients }, client));
  const seconds = Math.max(1e-9, (performance.now() - started) / 1000);
  const evictions = await metric(server.url, 'todeval_nli_cache_evictions_total');
  if (samples[samples.length - 1].pairs !== done) samples.push(await checkpoint(done, seconds));
  const at = (n: number) => samples.find((s) => s.pairs >= n);
  const r100k = at(o.every);
  const rEnd = samples[samples.length - 1];

  // The worst body, with /healthz asked every 10 ms meanwhile.
  const word = (seed: number) => Array.from({ length: 60_000 }, (_, i) => String.fromCharCode(97 + ((i * 7919 + seed) % 26))).join('');
  const worst = { pairs: Array.from({ length: 8 }, (_, i) => ({ premise: word(2 * i), hypothesis: word(2 * i + 1) })) };
  const health: number[] = [];
  let running = true;
  const poll = (async () => {
    while (running) {
      const t0 = performance.now();
      await (await fetch(`${server.url}/healthz`)).text();
      health.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  await metric(server.url, 'todeval_nodejs_eventloop_lag_max_seconds'); // reads and resets it
  const t0 = performance.now();
  const worstRes = await fetch(`${server.url}/v1/nli`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(worst) });
  await worstRes.text();
  const worstMs = performance.now() - t0;
  running = false;
  await poll;
  const loopLagMaxMs = 1000 * (await metric(server.url, 'todeval_nodejs_eventloop_lag_max_seconds'));
  const onLoop = await metric(server.url, 'todeval_tokenizer_texts_event_loop_total');

  const figures = {
    pairs: done,
    seconds,
    pairsPerSecond: done / seconds,
    requests: latencies.length,
    p50ms: percentile(latencies, 50),
    p99ms: percentile(latencies, 99),
    fiveXx,
    evictions,
    rss: samples,
    rssAtFirstCheckpointMiB: r100k?.rssMiB,
    rssAtEndMiB: rEnd.rssMiB,
    ratioEndToFirst: r100k ? rEnd.rssMiB / r100k.rssMiB : undefined,
    rssRangeFromFirstMiB: r100k ? [Math.min(...samples.filter((s) => s.pairs >= r100k.pairs).map((s) => s.rssMiB)), Math.max(...samples.filter((s) => s.pairs >= r100k.pairs).map((s) => s.rssMiB))] : undefined,
    worstBody: { status: worstRes.status, ms: worstMs, healthzMaxMs: Math.max(...health), healthzP99Ms: percentile(health, 99), healthzAnswers: health.length, eventLoopLagMaxMs: loopLagMaxMs, textsTokenizedOnEventLoop: onLoop },
    loadAverage: load,
  };
  console.log(
    `${done} pairs in ${seconds.toFixed(0)} s (${figures.pairsPerSecond.toFixed(0)} pairs/s), ${latencies.length} requests: p50 ${figures.p50ms.toFixed(0)} ms, p99 ${figures.p99ms.toFixed(0)} ms, 5xx ${fiveXx}, cache evictions ${evictions}`,
  );
  if (r100k) {
    const [lo, hi] = figures.rssRangeFromFirstMiB!;
    console.log(
      `RSS (median) ${r100k.rssMiB.toFixed(0)} MiB at ${r100k.pairs} pairs, ${rEnd.rssMiB.toFixed(0)} MiB at ${rEnd.pairs}: ratio ${figures.ratioEndToFirst!.toFixed(3)}; checkpoints from ${r100k.pairs} on within ${lo.toFixed(0)}-${hi.toFixed(0)} MiB (${(100 * (hi / lo - 1)).toFixed(1)}% apart)`,
    );
  }
  console.log(
    `worst body (8 pairs x 60,000-character words): ${worstRes.status} in ${worstMs.toFixed(0)} ms; /healthz meanwhile: ${health.length} answers, slowest ${figures.worstBody.healthzMaxMs.toFixed(0)} ms; server event-loop delay max ${loopLagMaxMs.toFixed(0)} ms; texts tokenized on the event loop so far ${onLoop}`,
  );
  if (o.json) writeFileSync(o.json, `${JSON.stringify(figures, null, 2)}\n`);
} finally {
  clearInterval(sampler);
  const code = await server.stop();
  if (code !== 0) console.log(`server exited with ${code}`);
}
