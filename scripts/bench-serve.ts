/**
 * Throughput of `todeval serve` against offline reranking, with the full-size random roberta-large
 * on this CPU, loopback only, bounded in requests and time.
 *
 *   npm run bench:serve -- [--model DIR] [--items 32] [--max-seconds 240] [--threads N] [--json FILE]
 *
 * Items: rerank items of 4 candidates each, for the first system turns of sgd/test/dialogues_017.json
 * that have one or two actions (by dataset_id, so actions and context come from the data). Each
 * client sends one item per request and waits for the answer before sending its next. Phases, each
 * on its own item set (candidate texts carry the set's tag, so no pair is shared through the
 * server's pair cache):
 *   - 32 sequential single-item requests (1 client)
 *   - 8 concurrent clients
 *   - 32 concurrent clients, on set A
 *   - offline: the library's rerank over set A in this process with a fresh runner, as
 *     `todeval rerank -i` runs it (64 items per scorer call), after the server has stopped.
 * Pairs/s counts the pairs the model actually computed (the server's todeval_nli_pairs_computed_total,
 * the offline runner's stats), so both sides count the same pairs for the same items.
 * The machine is shared: absolute figures are noisy, the ratios are measured side by side in one run.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import type { Turn } from '../src/adapters/types.js';
import { resolveDataDir } from '../src/data/data-dir.js';
import { loadSgsaccData } from '../src/metrics/sgsacc/dataset.js';
import { createNliRunner } from '../src/nli/runner.js';
import { rerank, resolveRerankItem, type RawRerankItem } from '../src/rerank/index.js';
import { spawnServe } from './lib/serve-process.js';
import { ensureLargeRandomModel } from './lib/large-model.js';

const program = new Command('bench-serve')
  .option('--model <dir>', 'model directory', '.cache/models/large-random-roberta')
  .option('--items <n>', 'items (requests) per phase; the 8-client phase sends half', (v) => Number(v), 32)
  .option('--max-seconds <n>', 'stop issuing requests in a phase after this long', (v) => Number(v), 240)
  .option('--threads <n>', 'intra-op threads (default: all cores)', (v) => Number(v))
  .option('--data-dir <dir>', 'data directory (default: resolveDataDir)')
  .option('--json <file>', 'also write the figures as JSON');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ model: string; items: number; maxSeconds: number; threads?: number; dataDir?: string; json?: string }>();

const modelDir = ensureLargeRandomModel(o.model);
const dataDir = resolveDataDir(o.dataDir).dir;
const dialogues = path.join(dataDir, 'sgd', 'test', 'dialogues_017.json');
const data = loadSgsaccData({ dataset: 'sgd', dataDir, input: dialogues });
const turns: Turn[] = data.loaded.turns.filter((t) => t.actions.length >= 1 && t.actions.length <= 2 && t.utterance.trim() !== '');

/** `n` items of 4 candidates for distinct turns; `tag` makes every candidate text its set's own. */
function itemSet(tag: string, n: number, offset: number): RawRerankItem[] {
  return Array.from({ length: n }, (_, i) => {
    const t = turns[(offset + i) % turns.length];
    const first = t.utterance.split(/(?<=[.?!])\s/)[0];
    return {
      id: `${tag}-${i}`,
      dataset_id: t.id,
      candidates: [
        { system: 'gold', text: `${t.utterance} [${tag}${i}]`, likelihood: -1 },
        { system: 'short', text: `${first} [${tag}${i}]`, likelihood: -2 },
        { system: 'more', text: `${t.utterance} Anything else? [${tag}${i}]`, likelihood: -3 },
        { system: 'generic', text: `Sure, one moment. [${tag}${i}]`, likelihood: -0.5 },
      ],
    };
  });
}

const threads = o.threads ? ['--threads', String(o.threads)] : [];
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

interface Phase {
  name: string;
  clients: number;
  requests: number;
  seconds: number;
  pairs: number;
  pairsPerSecond: number;
  p50ms: number;
  p99ms: number;
  errors: number;
}

async function computedPairs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^todeval_nli_pairs_computed_total (\d+)/m.exec(text);
  return m ? Number(m[1]) : NaN;
}

async function phase(url: string, name: string, clients: number, items: RawRerankItem[]): Promise<Phase> {
  const before = await computedPairs(url);
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + o.maxSeconds * 1000;
  const client = async () => {
    while (next < items.length && performance.now() < deadline) {
      const item = items[next++];
      const t0 = performance.now();
      const res = await fetch(`${url}/v1/rerank`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(item) });
      await res.text();
      if (res.status !== 200) errors++;
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  const seconds = (performance.now() - started) / 1000;
  const pairs = (await computedPairs(url)) - before;
  const r: Phase = { name, clients, requests: latencies.length, seconds, pairs, pairsPerSecond: pairs / seconds, p50ms: percentile(latencies, 50), p99ms: percentile(latencies, 99), errors };
  console.log(
    `${name.padEnd(34)} ${String(r.requests).padStart(4)} req  ${r.seconds.toFixed(1).padStart(6)} s  ${String(r.pairs).padStart(5)} pairs  ${r.pairsPerSecond.toFixed(2).padStart(6)} pairs/s  p50 ${(r.p50ms / 1000).toFixed(2)} s  p99 ${(r.p99ms / 1000).toFixed(2)} s${errors ? `  ${errors} errors` : ''}`,
  );
  return r;
}

const n = o.items;
const setSeq = itemSet('S', n, 0);
const set8 = itemSet('E', Math.max(1, Math.floor(n / 2)), n);
const setA = itemSet('A', n, 2 * n);
console.log(`bench-serve: model ${modelDir}, CPU, ${turns.length} candidate turns, ${n} items per phase (8 clients: ${set8.length}), 4 candidates each`);

const server = await spawnServe(['--model', modelDir, '--device', 'cpu', '--data-dir', dataDir, '--dialogues', dialogues, '--log-level', 'warn', '--max-items', '64', '--timeout-ms', String(o.maxSeconds * 4000), ...threads]);
const phases: Phase[] = [];
try {
  // Warm-up on pairs no phase asks: the first forward passes allocate.
  await fetch(`${server.url}/v1/nli`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pairs: [{ premise: 'warm up the model please', hypothesis: 'warm' }, { premise: 'a second warm up pair for batching', hypothesis: 'second' }] }) });
  phases.push(await phase(server.url, `${setSeq.length} sequential single-item requests`, 1, setSeq));
  phases.push(await phase(server.url, `8 concurrent clients`, 8, set8));
  phases.push(await phase(server.url, '32 concurrent clients (set A)', 32, setA));
} finally {
  const code = await server.stop();
  if (code !== 0) console.log(`server exited with ${code}`);
}

// Offline, as `todeval rerank -i` does it: resolve the items, then rerank() with a fresh runner.
const resolver = { schema: data.schema, dataset: 'sgd' as const, expand: (t: Turn) => data.expand([t])[0].actions, turnsById: new Map(data.loaded.turns.map((t) => [t.id, t])) };
const offlineItems = setA.slice(0, phases[2].requests).map((raw, i) => resolveRerankItem(raw, resolver, 'bench', i + 1));
const runner = await createNliRunner({ model: modelDir, device: 'cpu', threads: o.threads });
let offline: { seconds: number; pairs: number; pairsPerSecond: number };
try {
  await runner.score([{ premise: 'warm up the model please', hypothesis: 'warm' }, { premise: 'a second warm up pair for batching', hypothesis: 'second' }]);
  const before = runner.stats().issued;
  const t0 = performance.now();
  await rerank(offlineItems, { scorer: runner, context: true });
  const seconds = (performance.now() - t0) / 1000;
  const pairs = runner.stats().issued - before;
  offline = { seconds, pairs, pairsPerSecond: pairs / seconds };
  console.log(`${'offline rerank (set A, one process)'.padEnd(34)} ${String(offlineItems.length).padStart(4)} items ${seconds.toFixed(1).padStart(6)} s  ${String(pairs).padStart(5)} pairs  ${offline.pairsPerSecond.toFixed(2).padStart(6)} pairs/s`);
} finally {
  await runner.close();
}

const [seq, , c32] = phases;
const ratioOffline = c32.pairsPerSecond / offline.pairsPerSecond;
const ratioSeq = c32.pairsPerSecond / seq.pairsPerSecond;
console.log(`ratio served pairs/s at 32 clients / offline rerank: ${ratioOffline.toFixed(2)} (target >= 0.9${ratioOffline >= 0.9 ? ', met' : ', MISSED'})`);
console.log(`ratio served pairs/s at 32 clients / ${seq.requests} sequential single-item requests: ${ratioSeq.toFixed(2)}`);
if (c32.pairs !== offline.pairs) console.log(`note: the server computed ${c32.pairs} pairs for set A, offline ${offline.pairs}`);
console.log('(shared machine: absolute figures are noisy; the ratios are measured side by side in this run)');
if (o.json) writeFileSync(o.json, JSON.stringify({ phases, offline, ratioOffline, ratioSequential: ratioSeq }, null, 2) + '\n');
