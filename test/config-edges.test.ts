import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe } from '../scripts/lib/serve-process.js';
import { loadSgsaccData, type SgsaccConfig, type SgsaccSettings } from '../src/metrics/sgsacc/index.js';
import { createNliRunner } from '../src/nli/runner.js';
import { runEvaluatePipeline } from '../src/pipeline/evaluate.js';
import { runRerankPipeline } from '../src/pipeline/rerank.js';
import { runScorePipeline } from '../src/pipeline/score.js';
import { RANK_BY, rerank, rerankSignature, resolveRerankConfig, resolveRerankItem, type RankBy, type RerankSettings } from '../src/rerank/index.js';
import { resolveServeConfig } from '../src/serve/config.js';
import { serveFaithfulness, type ServingFaithfulness } from '../src/serve/embed.js';
import type { Signature } from '../src/util/signature.js';
import { BUILT_CLI, runCli, runProcess } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';
import { mulberry32 } from './helpers/mulberry32.js';

// One resolved config per product, built once at each edge. Property, over random option sets
// (flags x rankings x granularity x context x the control given, refused or left out): the same
// configuration gives the same signature and the same results through `todeval serve`'s flags, the
// library's serveFaithfulness, the Python client, `todeval score` / `todeval rerank` and their
// library pipelines, and rerank() itself; and for evaluate --sgsacc, the CLI, `todeval stdio`, the
// library and the Python Evaluator. Real servers on loopback, the lexical stand-in model.

const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 6;
const SETS = 5;

// The sets are independent (own files, own servers): two at a time, so one set's CPU-bound steps
// overlap another's waits (server start-up, child processes), bounded so that a loaded CI box is not
// asked for more than two sets' processes at once.
const sets = new PQueue({ concurrency: 2 });
const twoAtATime = <T>(body: () => Promise<T>): Promise<T> => sets.add(body);

/** Seeded draws: a failing set is named by its seed and can be run again. */
function random(seed: number): () => number {
  // Spread small seeds apart first: mulberry32's first draws of seeds 1, 2, 3 are alike.
  return mulberry32(Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1));
}

interface OptionSet extends SgsaccSettings {
  rankBy: RankBy;
}

function optionSet(seed: number): OptionSet {
  const r = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  return {
    validation: r() < 0.6,
    context: r() < 0.75,
    referenceSelection: pick(['entailed', 'paper'] as const),
    hallucination: pick([true, undefined]),
    granularity: pick(['turn', 'sentence', undefined] as const),
    contextControl: pick([true, false, undefined]),
    // Every ranking among the sets; the other options drawn.
    rankBy: RANK_BY[seed % RANK_BY.length],
  };
}

/** The flags of a set as a user types them: what is left out is not typed. */
function serveFlags(s: OptionSet): string[] {
  return [
    ...(s.validation === false ? ['--no-validation'] : []),
    ...(s.context === false ? ['--no-context'] : []),
    ...(s.referenceSelection ? ['--reference-selection', s.referenceSelection] : []),
    ...(s.hallucination ? ['--hallucination'] : []),
    ...(s.granularity ? ['--granularity', s.granularity] : []),
    ...(s.contextControl === true ? ['--context-control'] : s.contextControl === false ? ['--no-context-control'] : []),
    '--rank-by',
    s.rankBy,
  ];
}

/** `todeval score` flags spelling out a resolved config (every option explicit, so score's own defaults play no part). */
function scoreFlags(c: SgsaccConfig): string[] {
  return [
    c.validation ? '--validation' : '--no-validation',
    c.context ? '--context' : '--no-context',
    '--reference-selection',
    c.referenceSelection,
    ...(c.hallucination ? ['--hallucination'] : []),
    ...(c.granularity ? ['--granularity', c.granularity] : []),
    c.contextControl ? '--context-control' : '--no-context-control',
  ].filter((f) => f !== '--validation' && f !== '--context');
}

/** `todeval rerank` flags of the service's rerank settings. */
function rerankFlags(r: Omit<RerankSettings, 'systemOrder'>): string[] {
  return [
    ...(r.context === false ? ['--no-context'] : []),
    r.contextControl ? '--context-control' : '--no-context-control',
    ...(r.hallucination ? ['--hallucination'] : []),
    '--rank-by',
    r.rankBy ?? 'fidelity',
  ];
}

interface Answer {
  signature: Signature;
  items: Record<string, unknown>[];
}

async function post(url: string, body: unknown): Promise<Answer> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as Answer & { message?: string };
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}: ${json.message}`);
  return json;
}

/**
 * The Python client (python/todeval/client.py) against a server: what `Client(url).score(items)` and
 * `Client(url).rerank(items)` return. Both calls in one Python process (one interpreter start, not two).
 */
async function pythonClient(url: string, items: { score: unknown[]; rerank: unknown[] }): Promise<{ score: Answer; rerank: Answer }> {
  const code = [
    'import json, sys',
    'from todeval.client import Client',
    'items = json.load(sys.stdin)',
    'client = Client(sys.argv[1])',
    'out = {}',
    'for route in ("score", "rerank"):',
    '    r = getattr(client, route)(items[route])',
    '    out[route] = {"signature": r.signature, "items": list(r)}',
    'print(json.dumps(out))',
  ].join('\n');
  const run = await runProcess('python3', ['-c', code, url], { input: JSON.stringify(items), env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'python') } });
  if (run.code !== 0) throw new Error(`python client failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as { score: Answer; rerank: Answer };
}

const readJsonl = (f: string) => readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
const withoutWho = ({ system: _s, predictions: _p, ...rest }: Signature) => rest;
const hasPython = (await runProcess('python3', ['-c', 'import sys; assert sys.version_info >= (3, 9)'])).code === 0;

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))('one config at every edge: equal signatures and results over random option sets', () => {
  const dir = suiteTempDir('config-edges');
  const f = (name: string) => path.join(dir, name);
  const data = ['--data-dir', DATA_DIR, '--dialogues', DIALOGUES];
  const running: { stop(): Promise<unknown> }[] = [];
  let model = '';
  let turnIds: string[] = [];

  beforeAll(async () => {
    model = getLexicalStandinDir();
    const gold = await runCli(['score', '--dataset', 'sgd', ...data, '--limit', String(LIMIT), '--model', model, '--device', 'cpu', '--turns', f('ids.jsonl'), '--progress', 'none']);
    expect(gold.code).toBe(0);
    turnIds = readJsonl(f('ids.jsonl')).slice(1).map((t) => t.id as string);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(running.map((s) => s.stop()));
  });

  for (let seed = 1; seed <= SETS; seed++) {
    const s = optionSet(seed);
    it.concurrent(`set ${seed}: ${JSON.stringify(s)}`, ({ expect }) => twoAtATime(async () => {
      const routes = resolveServeConfig(s);
      const utterance = (i: number) => [`Sure, what city and time? Option ${i}.`, 'Okay. Your alarm is set for 7 am. Anything else?', 'The restaurant is in the city.'][i % 3];
      const scoreItems = [
        ...turnIds.map((id, i) => ({ id, dataset_id: id, utterance: utterance(i) })),
        { id: 'inline', service: 'Alarm_1', context: 'Wake me up at 7 am.', actions: [{ act: 'CONFIRM', slot: 'new_alarm_time', values: ['7 am'] }], utterance: 'An alarm at 7 am? Great music.', ground_truth: 'Please confirm: an alarm at 7 am.' },
      ];
      const rerankItems = [
        { id: 'inline', service: 'Alarm_1', context: 'Wake me up at 7 am.', actions: [{ act: 'CONFIRM', slot: 'new_alarm_time', values: ['7 am'] }], candidates: [{ system: 'a', text: 'An alarm for 7 am? It rains.', likelihood: -1 }, { system: 'b', text: 'Okay.', likelihood: -0.5 }] },
        ...turnIds.slice(0, 3).map((id, i) => ({ id: `t${i}`, dataset_id: id, candidates: [{ system: 'a', text: utterance(i) }, { system: 'b', text: `Option ${i} is at 5 pm. Have a nice day.` }] })),
      ];

      // Edge 1: `todeval serve` with the set's flags. Edge 2: serveFaithfulness with the set as options.
      const cli = await spawnServe(['--model', model, '--device', 'cpu', ...data, ...serveFlags(s)], { TODEVAL_TOKEN: undefined }, 120_000, { built: true });
      running.push(cli);
      const lib: ServingFaithfulness = await serveFaithfulness({ nli: { model, device: 'cpu' }, data: loadSgsaccData({ dataset: 'sgd', dataDir: DATA_DIR, input: DIALOGUES, skipInvalid: true }), dataset: 'sgd', port: 0, logLevel: 'silent', ...s });
      running.push({ stop: () => lib.close() });
      const served = { score: await post(`${cli.url}/v1/score`, { items: scoreItems }), rerank: await post(`${cli.url}/v1/rerank`, { items: rerankItems }) };
      expect(await post(`${lib.url}/v1/score`, { items: scoreItems })).toEqual(served.score);
      expect(await post(`${lib.url}/v1/rerank`, { items: rerankItems })).toEqual(served.rerank);
      // The service signs what it resolved: the set's implications and the serve product's defaults.
      expect(served.score.signature).toMatchObject({ validation: routes.sgsacc.validation, context: routes.sgsacc.context, referenceSelection: routes.sgsacc.referenceSelection });
      expect(served.score.signature.contextControl).toBe(routes.sgsacc.resultFields.contextControl);
      expect(served.score.signature.hallucination).toBe(routes.sgsacc.resultFields.hallucination);
      expect(served.rerank.signature.contextControl).toBe(routes.sgsacc.contextControl ? true : undefined);

      // Edge 3: the Python client against the same server.
      if (hasPython) {
        const client = await pythonClient(cli.url, { score: scoreItems, rerank: rerankItems });
        expect(client.score).toEqual({ signature: served.score.signature, items: served.score.items });
        expect(client.rerank).toEqual({ signature: served.rerank.signature, items: served.rerank.items });
      }
      await Promise.all([cli.stop(), lib.close()]);

      // Edge 4: `todeval score` with the resolved config spelled out: the per-turn lines of /v1/score
      // (less SER and BLEU, which only score computes) under the same signature.
      writeFileSync(f(`sys-${seed}.jsonl`), turnIds.map((id, i) => JSON.stringify({ id, utterance: utterance(i) })).join('\n') + '\n');
      const own = ['--dataset', 'sgd', ...data, '--limit', String(LIMIT), '--model', model, '--device', 'cpu', '--progress', 'none', '-i', f(`sys-${seed}.jsonl`)];
      const scored = await runCli(['score', ...own, ...scoreFlags(routes.sgsacc), '--turns', f(`cli-${seed}.jsonl`)]);
      expect(scored.code, scored.stderr).toBe(0);
      const [header, ...lines] = readJsonl(f(`cli-${seed}.jsonl`));
      expect(lines.map(({ slotError: _s, bleu: _b, ...rest }) => rest)).toEqual(served.score.items.slice(0, turnIds.length));
      expect(withoutWho(header.signature as Signature)).toEqual(served.score.signature);

      // Edge 5: the library's runScorePipeline with the same settings: the same file, byte for byte.
      const { validation, context, referenceSelection, hallucination, granularity, contextControl } = routes.sgsacc;
      await runScorePipeline({ dataset: 'sgd', dataDir: DATA_DIR, input: DIALOGUES, limit: LIMIT, predictions: f(`sys-${seed}.jsonl`), validation, context, referenceSelection, hallucination, granularity, contextControl, chunkTurns: 256, turnsFile: f(`lib-${seed}.jsonl`), nli: { model, device: 'cpu' } });
      expect(readFileSync(f(`lib-${seed}.jsonl`), 'utf8')).toBe(readFileSync(f(`cli-${seed}.jsonl`), 'utf8'));

      // Edges 6-8: `todeval rerank`, runRerankPipeline and rerank() with the service's rerank settings.
      writeFileSync(f(`rr-${seed}.jsonl`), rerankItems.map((i) => JSON.stringify(i)).join('\n') + '\n');
      const reranked = await runCli(['rerank', '-i', f(`rr-${seed}.jsonl`), '--dataset', 'sgd', ...data, '--model', model, '--device', 'cpu', ...rerankFlags(routes.rerank), '--progress', 'none', '-o', f(`rr-${seed}.json`)]);
      expect(reranked.code, reranked.stderr).toBe(0);
      const offline = JSON.parse(readFileSync(f(`rr-${seed}.json`), 'utf8')) as Answer;
      expect(offline.items).toEqual(served.rerank.items);
      expect(offline.signature).toEqual(served.rerank.signature);
      const pipeline = await runRerankPipeline({ input: f(`rr-${seed}.jsonl`), dataset: 'sgd', load: { dataDir: DATA_DIR, input: DIALOGUES }, ...routes.rerank, nli: { model, device: 'cpu' } });
      expect({ signature: pipeline.signature, items: pipeline.items }).toEqual({ signature: served.rerank.signature, items: served.rerank.items });
      const sgd = loadSgsaccData({ dataset: 'sgd', dataDir: DATA_DIR, input: DIALOGUES, skipInvalid: true });
      const resolver = { schema: sgd.schema, dataset: 'sgd' as const, expand: (t: Parameters<typeof sgd.expand>[0][number]) => sgd.expand([t])[0].actions, turnsById: new Map(sgd.loaded.turns.map((t) => [t.id, t])) };
      const runner = await createNliRunner({ model, device: 'cpu' });
      try {
        const items = rerankItems.map((raw, i) => resolveRerankItem(raw, resolver, '', `items/${i}`));
        expect(await rerank(items, { scorer: runner, ...routes.rerank })).toEqual(served.rerank.items);
        expect(rerankSignature(resolveRerankConfig(routes.rerank), { model: runner.modelSignature, rulesHash: sgd.rulesHash, dataset: 'sgd' })).toEqual(served.rerank.signature);
      } finally {
        await runner.close();
      }
    }), 600_000);
  }
});

/** `todeval stdio` (the Python package's warm process): one request, its answer. */
async function stdioRequest(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BUILT_CLI, 'stdio'], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin.end(JSON.stringify({ id: 1, args }) + '\n');
  await exited;
  return JSON.parse(out.trim()) as { code: number; stdout: string; stderr: string };
}

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('evaluate --sgsacc: one config through the CLI, stdio, the library and the Python Evaluator (random option sets)', () => {
  const dir = suiteTempDir('config-edges-evaluate');
  const input = path.join(dir, 'input.json');
  let model = '';

  beforeAll(() => {
    model = getLexicalStandinDir();
    const convlab = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'), 'utf8')) as Record<string, { log: { text: string }[] }>;
    const system = (id: string) => convlab[id].log.filter((_, i) => i % 2 === 1).map((t) => ({ response: '[value_name] ok', utterance: t.text }));
    writeFileSync(input, JSON.stringify({ sng0580: system('SNG0580'), pmul4648: system('PMUL4648') }));
  });

  for (let seed = 1; seed <= 3; seed++) {
    const r = random(1000 + seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
    const s = { referenceSelection: pick(['entailed', 'paper'] as const), granularity: pick(['turn', 'sentence', undefined] as const), contextControl: pick([true, false, undefined]) };
    it.concurrent(`set ${seed}: ${JSON.stringify(s)}`, ({ expect }) => twoAtATime(async () => {
      const flags = [
        ...(s.referenceSelection ? ['--reference-selection', s.referenceSelection] : []),
        ...(s.granularity ? ['--granularity', s.granularity] : []),
        ...(s.contextControl === true ? ['--context-control'] : s.contextControl === false ? ['--no-context-control'] : []),
      ];
      const args = ['evaluate', '-i', input, '--sgsacc', '--json', '--data-dir', DATA_DIR, '--model', model, '--device', 'cpu', '--progress', 'none', ...flags];
      const cli = await runCli(args);
      expect(cli.code, cli.stderr).toBe(0);
      const fromCli = JSON.parse(cli.stdout) as Record<string, unknown>;
      expect(fromCli.sgsacc).toBeTruthy();
      const warm = await stdioRequest(args);
      expect(warm.code, warm.stderr).toBe(0);
      expect(JSON.parse(warm.stdout)).toEqual(fromCli);
      const lib = await runEvaluatePipeline({ input, dataDir: DATA_DIR, sgsacc: { nli: { model, device: 'cpu' }, ...s } });
      expect(JSON.parse(JSON.stringify(lib))).toEqual(fromCli);
      if (hasPython) {
        const code = [
          'import json, sys',
          'from todeval import Evaluator',
          'e = Evaluator(sgsacc=True, model=sys.argv[2], device="cpu", data_dir=sys.argv[3], extra_args=sys.argv[6:], todeval=[sys.argv[4], sys.argv[5]])',
          'try:',
          '    print(json.dumps(e.evaluate(sys.argv[1]).report))',
          'finally:',
          '    e.close()',
        ].join('\n');
        const py = await runProcess('python3', ['-c', code, input, model, DATA_DIR, process.execPath, BUILT_CLI, ...flags], { cwd: REPO_ROOT, env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, 'python') } });
        expect(py.code, py.stderr).toBe(0);
        expect(JSON.parse(py.stdout)).toEqual(fromCli);
      }
    }), 600_000);
  }
});
