import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGV, BUILT_CLI, HAS_BUILT_CLI, type CliResult } from './helpers/cli.js';
import { runInProcess } from './helpers/in-process-cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';

// `score --granularity sentence` split across processes: two shards joined by `todeval merge`, and
// `--workers 2`, must give the report and per-turn file one process gives, sentence section and its
// bootstrap intervals included (those are drawn again over all the turns, so the shards' own
// intervals could not stand in for them). The lexical stand-in's figures are NOT SGSAcc.
// 40 system turns of dialogues_017 span 4 dialogues: both shards get turns.
const FILE = 'dialogues_017.json';
const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', FILE);
const LIMIT = 40;

// The built CLI when `npm test` has built it (its workers start as plain JS), else the sources.
const CLI = HAS_BUILT_CLI ? [BUILT_CLI] : [...CLI_ARGV];
const runCli = (args: string[]): Promise<CliResult> =>
  promisify(execFile)(process.execPath, [...CLI, ...args], { cwd: REPO_ROOT, maxBuffer: 1 << 26 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: CliResult) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

type Json = Record<string, unknown>;
const readText = (f: string) => readFileSync(f, 'utf8');

/**
 * The report as text, less what counts work rather than results: pairs issued (batching differs by
 * shard), turns resumed, references reused or computed, and the references file's own path. The
 * rest, key order included, must be the single run's byte for byte.
 */
function resultText(file: string): string {
  const { nli: _n, resumed: _r, ...rest } = JSON.parse(readText(file)) as Json;
  return JSON.stringify({ ...rest, references: { ...(rest.references as Json), file: null, reused: 0, computed: 0 } }, null, 2);
}

describe.skipIf(!hasData('sgd', 'test', FILE))('score --granularity sentence with --shard + merge and --workers (lexical stand-in)', () => {
  const dir = suiteTempDir('sentence-shards');
  const f = (name: string) => path.join(dir, name);
  let model = '';
  let singleStdout = '';
  const base = () => [
    'score',
    '--dataset',
    'sgd',
    '--dialogues',
    DIALOGUES,
    '--data-dir',
    DATA_DIR,
    '--limit',
    String(LIMIT),
    '--model',
    model,
    '--device',
    'cpu',
    '--hallucination',
    '--granularity',
    'sentence',
    '--progress',
    'none',
    '--chunk',
    '8',
  ];

  beforeAll(async () => {
    model = getLexicalStandinDir();
    singleStdout = await runInProcess([...base(), '-o', f('one.json'), '--turns', f('one.turns.jsonl'), '--references', f('one.refs.jsonl')]);
  }, 240_000);

  it('the single run has a non-trivial sentence section to compare', () => {
    const one = JSON.parse(readText(f('one.json'))) as { signature: Json; sentences: { counts: Json; confidence: { overall: { metrics: Json }; perService: Json } } };
    expect(one.signature.granularity).toBe('sentence');
    expect(one.sentences.counts.checked).toBeGreaterThan(0);
    expect(one.sentences.counts.unsupported).toBeGreaterThan(0);
    expect(Object.keys(one.sentences.confidence.overall.metrics)).toEqual(['hallucination-sentences', 'hallucination-sentences-all']);
    expect(Object.keys(one.sentences.confidence.perService).length).toBeGreaterThan(1);
  });

  it('--shard 1/2 + 2/2 merged give the single run: report, per-turn file, references, printed report', async () => {
    const shards: string[] = [];
    for (const k of [1, 2]) {
      const p = (ext: string) => f(`s${k}.${ext}`);
      await runInProcess([...base(), '--shard', `${k}/2`, '-o', p('json'), '--turns', p('turns.jsonl'), '--references', p('refs.jsonl')]);
      shards.push(p('json'));
    }
    // Both shards scored turns, and each drew its own intervals over its own turns only.
    const parts = shards.map((s) => JSON.parse(readText(s)) as { dataset: { turns: number }; sentences: { confidence: { overall: { metrics: Record<string, { units: number }> } } } });
    expect(parts.map((p) => p.dataset.turns).every((n) => n > 0)).toBe(true);
    const printed = await runInProcess(['merge', ...shards.reverse(), '-o', f('merged.json'), '--turns', f('merged.turns.jsonl'), '--references', f('merged.refs.jsonl')]);
    expect(resultText(f('merged.json'))).toBe(resultText(f('one.json')));
    const one = JSON.parse(readText(f('one.json'))) as { sentences: { confidence: { overall: { metrics: Record<string, { units: number }> } } } };
    const units = (r: typeof one) => r.sentences.confidence.overall.metrics['hallucination-sentences-all'].units;
    expect(units(parts[0]) + units(parts[1])).toBe(units(one));
    expect(printed).toBe(singleStdout);
    expect(readText(f('merged.turns.jsonl'))).toBe(readText(f('one.turns.jsonl')));
    expect(readText(f('merged.refs.jsonl'))).toBe(readText(f('one.refs.jsonl')));
  }, 240_000);

  it('--workers 2 gives the single run: report, per-turn file, printed report; no shard file left', async () => {
    const res = await runCli([...base(), '--workers', '2', '-o', f('w.json'), '--turns', f('w.turns.jsonl')]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(resultText(f('w.json'))).toBe(resultText(f('one.json')));
    expect(res.stdout).toBe(singleStdout);
    expect(readText(f('w.turns.jsonl'))).toBe(readText(f('one.turns.jsonl')));
    expect(readdirSync(dir).filter((n) => n.startsWith('w.') && n.includes('.shard-'))).toEqual([]);
  }, 300_000);

  it('a shard report without its sentence tallies is refused in one line (exit 2)', async () => {
    const shards = [1, 2].map((k) => f(`s${k}.json`));
    const broken = f('s2-old.json');
    const report = JSON.parse(readText(shards[1])) as { shard: { tallies: Json; files: Json } };
    delete report.shard.tallies.sentences;
    writeFileSync(broken, JSON.stringify(report));
    const res = await runCli(['merge', shards[0], broken, '-o', f('refused.json')]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/s2-old\.json: this shard of a --granularity sentence run has no sentence tallies to merge/);
  }, 60_000);
});
