/**
 * `todeval serve` under a day's worth of new pairs: RSS as unique pairs go through it, request
 * latency, 5xx answers, and /healthz while the worst body runs. Loopback only, bounded load (a few
 * clients, each waiting for its answer before it sends the next request), the lexical stand-in
 * model (real tokenizer, a cheap graph), so the host side is what is measured.
 *
 *   npm run bench:serve-memory -- [--pairs 1000000] [--clients 4] [--batch 512] [--max-cache-bytes N]
 *                                 [--tokenizer-threads N] [--max-seconds 3600] [--json FILE]
 *
 * --pairs 0 measures the worst body alone.
 *
 * Pairs: every pair is new (a premise shared by 16 pairs, as a turn's candidates share it, and a
 * hypothesis of its own), so nothing is answered from the cache and every text is new to the
 * tokenizer memos: the worst case for memory. RSS is read from /proc/<pid>/status of the server
 * every 100k pairs. Then the worst body: /v1/nli with 8 pairs of 60,000-character words, sent while
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
  .option('--tokenizer-threads <n>', 'the server\'s --tokenizer-threads (default: its own, 0)')
  .option('--max-seconds <n>', 'stop sending after this long (the figures say how far it got)', (v) => Number(v), 3600)
  .option('--json <file>', 'also write the figures as JSON');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ pairs: number; clients: number; batch: number; maxCacheBytes?: string; tokenizerThreads?: string; maxSeconds: number; json?: string }>();

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
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

const model = getLexicalStandinDir();
const cacheFlag = [...(o.maxCacheBytes ? ['--max-cache-bytes', o.maxCacheBytes] : []), ...(o.tokenizerThreads ? ['--tokenizer-threads', o.tokenizerThreads] : [])];
const load = loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`bench-serve-memory: ${o.pairs} unique pairs, ${o.clients} clients x ${o.batch} pairs a request, lexical stand-in (${path.basename(model)}), ${cacheFlag.join(' ') || 'default --max-cache-bytes'}; load average ${load}`);

const dataDir = resolveDataDir().dir;
const dialogues = path.join(dataDir, 'sgd', 'test', 'dialogues_017.json');
const server = await spawnServe(['--model', model, '--data-dir', dataDir, '--dialogues', dialogues, '--device', 'cpu', '--log-level', 'warn', '--timeout-ms', '600000', ...cacheFlag], {}, 180_000);
const pid = server.child.pid!;
const samples: { pairs: number; rssMiB: number; seconds: number }[] = [];
const latencies: number[] = [];
let fiveXx = 0;
let sent = 0;
let done = 0;
let nextSample = 100_000;
const started = performance.now();
const deadline = started + o.maxSeconds * 1000;
try {
  samples.push({ pairs: 0, rssMiB: rssMiB(pid), seconds: 0 });
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
        const s = { pairs: done, rssMiB: rssMiB(pid), seconds: (performance.now() - started) / 1000 };
        samples.push(s);
        console.log(`  ${String(s.pairs).padStart(8)} pairs  RSS ${s.rssMiB.toFixed(0).padStart(5)} MiB  ${s.seconds.toFixed(0).padStart(5)} s`);
        nextSample += 100_000;
      }
    }
  };
  await Promise.all(Array.from({ length: o.clients }, client));
  const seconds = Math.max(1e-9, (performance.now() - started) / 1000);
  const evictions = await metric(server.url, 'todeval_nli_cache_evictions_total');
  const final = { pairs: done, rssMiB: rssMiB(pid), seconds };
  if (samples[samples.length - 1].pairs !== done) samples.push(final);
  const at = (n: number) => samples.find((s) => s.pairs >= n);
  const r100k = at(100_000);
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
  const t0 = performance.now();
  const worstRes = await fetch(`${server.url}/v1/nli`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(worst) });
  await worstRes.text();
  const worstMs = performance.now() - t0;
  running = false;
  await poll;

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
    rssAt100kMiB: r100k?.rssMiB,
    rssAtEndMiB: rEnd.rssMiB,
    growthFrom100k: r100k ? rEnd.rssMiB / r100k.rssMiB - 1 : undefined,
    worstBody: { status: worstRes.status, ms: worstMs, healthzMaxMs: Math.max(...health), healthzP99Ms: percentile(health, 99), healthzAnswers: health.length },
    loadAverage: load,
  };
  console.log(
    `${done} pairs in ${seconds.toFixed(0)} s (${figures.pairsPerSecond.toFixed(0)} pairs/s), ${latencies.length} requests: p50 ${figures.p50ms.toFixed(0)} ms, p99 ${figures.p99ms.toFixed(0)} ms, 5xx ${fiveXx}, cache evictions ${evictions}`,
  );
  if (r100k) console.log(`RSS ${r100k.rssMiB.toFixed(0)} MiB at ${r100k.pairs} pairs, ${rEnd.rssMiB.toFixed(0)} MiB at ${rEnd.pairs}: ${(100 * (figures.growthFrom100k ?? 0)).toFixed(1)}%`);
  console.log(`worst body (8 pairs x 60,000-character words): ${worstRes.status} in ${worstMs.toFixed(0)} ms; /healthz meanwhile: ${health.length} answers, slowest ${figures.worstBody.healthzMaxMs.toFixed(0)} ms`);
  if (o.json) writeFileSync(o.json, `${JSON.stringify(figures, null, 2)}\n`);
} finally {
  const code = await server.stop();
  if (code !== 0) console.log(`server exited with ${code}`);
}
