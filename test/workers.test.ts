import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { runRerankPipeline, runRerankWorkers, runScoreWorkers } from '../src/index.js';
import { earlierShardFiles, planWorkers, resumeWorkerCount, runWorkers, shardFileName } from '../src/shard/workers.js';
import { CLI_ARGV, BUILT_CLI, HAS_BUILT_CLI, type CliResult } from './helpers/cli.js';
import { runInProcess } from './helpers/in-process-cli.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { getSensitiveTinyModelDir } from './nli-fixtures.js';
import { refusal } from './helpers/refusal.js';
import { tempDir } from './helpers/temp.js';

// The built CLI when `npm test` has built it: its workers then start as plain JS (dist/), not
// through tsx, which keeps these multi-process runs quick. Else the sources.
const CLI = HAS_BUILT_CLI ? [BUILT_CLI] : [...CLI_ARGV];
const runCli = (args: string[]): Promise<CliResult> =>
  promisify(execFile)(process.execPath, [...CLI, ...args], { cwd: REPO_ROOT, maxBuffer: 1 << 26 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: CliResult) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
type Json = Record<string, unknown>;
const readJson = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as Json;
const lines = (f: string) => readFileSync(f, 'utf8').trim().split('\n');
// What counts work rather than results: pairs issued, turns resumed, references reused or computed.
const withoutWork = ({ nli: _n, resumed: _r, ...r }: Json) => ({ ...r, references: { ...(r.references as Json), file: null, reused: 0, computed: 0 } });

describe('--workers planning (no processes)', () => {
  it('pins one worker per GPU with CUDA_VISIBLE_DEVICES, splits the cores on CPU', () => {
    expect(planWorkers({ workers: true, device: 'cuda' }, ['0', '3'])).toEqual({ count: 2, env: [{ CUDA_VISIBLE_DEVICES: '0' }, { CUDA_VISIBLE_DEVICES: '3' }], threads: [undefined, undefined] });
    expect(planWorkers({ workers: 3, device: 'cuda' }, ['5', '6']).env).toEqual([{ CUDA_VISIBLE_DEVICES: '5' }, { CUDA_VISIBLE_DEVICES: '6' }, { CUDA_VISIBLE_DEVICES: '5' }]);
    expect(planWorkers({ workers: 2, device: 'cpu' }, [], 16)).toEqual({ count: 2, env: [{}, {}], threads: [8, 8] });
    expect(planWorkers({ workers: true, device: 'cpu' }, [], 4).count).toBe(4);
    expect(planWorkers({ workers: 4, device: 'cpu', threads: 2 }, [], 4).threads).toEqual([2, 2, 2, 2]);
    expect(() => planWorkers({ workers: true, device: 'cuda' }, [])).toThrow(/give --workers N/);
    expect(shardFileName('out/run.json', 2, 4)).toBe('out/run.shard-2-of-4.json');
  });
});

describe('--workers resumed: the count of the shard files an earlier run left (no model)', () => {
  const dir = tempDir('workers-resume');
  const folder = (name: string, ...files: string[]): string => {
    const d = path.join(dir, name);
    mkdirSync(d);
    for (const file of files) writeFileSync(path.join(d, file), '');
    return d;
  };

  it("finds the shard files of the run's files (-o, --turns, --references) by count, and no other file", () => {
    const d = folder(
      'listing',
      ...['run.json', 'run.shard-1-of-4.json', 'run.shard-3-of-4.turns.jsonl', 'run.turns.shard-2-of-4.jsonl', 'run.turns.shard-2-of-4.references.jsonl', 'refs.shard-1-of-4.jsonl'],
      // Another run's, or not a shard file of ours.
      ...['run2.shard-1-of-3.json', 'other.shard-1-of-3.json', 'run.shard-5-of-4.json', 'run.shard-1-of-4x.json', 'run.shardy-1-of-2.json'],
    );
    const found = earlierShardFiles([path.join(d, 'run.json'), path.join(d, 'run.turns.jsonl'), path.join(d, 'refs.jsonl'), undefined]);
    expect([...found.keys()]).toEqual([4]);
    const expected = ['run.shard-1-of-4.json', 'run.shard-3-of-4.turns.jsonl', 'run.turns.shard-2-of-4.jsonl', 'run.turns.shard-2-of-4.references.jsonl', 'refs.shard-1-of-4.jsonl'];
    expect([...found.get(4)!].sort()).toEqual(expected.map((n) => path.join(d, n)).sort());
    // A folder not made yet: nothing was run there.
    expect(earlierShardFiles([path.join(dir, 'absent', 'run.json')]).size).toBe(0);
  });

  it('reuses the one earlier count when none is given, keeps an explicit count that agrees, and refuses the others in one line naming the files', () => {
    const d = path.join(dir, 'counts');
    const four = new Map([[4, [path.join(d, 'run.shard-1-of-4.json'), path.join(d, 'run.shard-2-of-4.json'), path.join(d, 'run.turns.shard-1-of-4.jsonl')]]]);
    const fourFiles = `${path.join(d, 'run.shard-*-of-4.json')}, ${path.join(d, 'run.turns.shard-*-of-4.jsonl')} (3 files)`;
    expect(resumeWorkerCount(true, new Map())).toEqual({ workers: true });
    expect(resumeWorkerCount(3, new Map())).toEqual({ workers: 3 });
    expect(resumeWorkerCount(4, four)).toEqual({ workers: 4 });
    expect(resumeWorkerCount(true, four)).toEqual({
      workers: 4,
      notice: `resuming the earlier run of --workers 4 from its shard files (${fourFiles}): 4 workers, not this machine's default`,
    });
    expect(refusal(() => resumeWorkerCount(2, four))).toBe(
      `--workers 2, but an earlier run left shard files of another count (4 shards: ${fourFiles}): give --workers 4 to resume that run, or delete them to start over with 2`,
    );
    const two = path.join(d, 'run.shard-1-of-2.json');
    const both = new Map([[4, four.get(4)!], [2, [two]]]);
    // Named by pattern even for one file, as every count's files are.
    const twoFiles = `${path.join(d, 'run.shard-*-of-2.json')} (1 file)`;
    expect(refusal(() => resumeWorkerCount(true, both))).toBe(
      `shard files of 2 earlier --workers runs with different counts (2 shards: ${twoFiles}; 4 shards: ${fourFiles}): give --workers M for the run to resume and delete the other runs' files`,
    );
    // A count that agrees with one of them still leaves the other run's files: refused, naming those.
    expect(refusal(() => resumeWorkerCount(4, both))).toBe(
      `--workers 4, but an earlier run left shard files of another count (2 shards: ${twoFiles}): give --workers 2 to resume that run, or delete them to start over with 4`,
    );
  });

  it("runWorkers cuts the run into the earlier run's count when none is given (and says so), and refuses another count before any shard starts", async () => {
    const d = folder('run', 'run.shard-1-of-7.json', 'run.turns.shard-7-of-7.jsonl');
    const counts: number[] = [];
    const notices: string[] = [];
    const base = {
      device: 'cpu' as const,
      output: path.join(d, 'run.json'),
      turns: path.join(d, 'run.turns.jsonl'),
      // A fake entry, never spawned: the job stops the run at its first shard, before any process.
      entry: { script: path.join(d, 'no-such-worker.js'), execArgv: [] },
      job: (shard: { count: number }): never => {
        counts.push(shard.count);
        throw new Error('stopped before spawning');
      },
      hooks: { notice: (message: string) => void notices.push(message) },
    };
    await expect(runWorkers({ ...base, workers: true })).rejects.toThrow('stopped before spawning');
    expect(counts).toEqual([7]);
    expect(notices).toEqual([expect.stringMatching(/^resuming the earlier run of --workers 7 from its shard files /)]);
    await expect(runWorkers({ ...base, workers: 2 })).rejects.toThrow(/^--workers 2, but an earlier run left shard files of another count \(7 shards: /);
    expect(counts).toEqual([7]);
  });
});

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))(
  'score --workers 2 --device cpu (child processes, tiny random model)',
  () => {
    const dir = tempDir('workers');
    const f = (name: string) => path.join(dir, name);
    let model = '';
    const args = (limit = 40) => ['score', '--dataset', 'sgd', '--dialogues', DIALOGUES, '--data-dir', DATA_DIR, '--limit', String(limit), '--model', model, '--device', 'cpu'];

    beforeAll(async () => {
      model = getSensitiveTinyModelDir();
      await runInProcess([...args(), '-o', f('one.json'), '--turns', f('one.turns.jsonl')]);
    });

    it('gives the report and per-turn file of one process, and cleans up its shard files', async () => {
      const res = await runCli([...args(), '--workers', '2', '-o', f('two.json'), '--turns', f('two.turns.jsonl')]);
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      expect(withoutWork(readJson(f('two.json')))).toEqual(withoutWork(readJson(f('one.json'))));
      expect(res.stdout).toContain(`signature: ${String(readJson(f('one.json')).signatureText)}`);
      const a = lines(f('two.turns.jsonl'));
      const b = lines(f('one.turns.jsonl'));
      expect(a[0]).toBe(b[0]);
      expect(new Set(a.slice(1))).toEqual(new Set(b.slice(1)));
      expect(readdirSync(dir).filter((n) => n.includes('.shard-'))).toEqual([]);
      // The references are kept beside --turns, as one process keeps them (issue 21: one rule).
      expect(lines(f('two.turns.references.jsonl'))).toHaveLength(1 + 40);
      expect((readJson(f('two.json')).references as Json).file).toBe(f('two.turns.references.jsonl'));
    });

    it('runScoreWorkers (the library call the CLI makes) gives the one-process report, and no shard process outlives it', async () => {
      const said: string[] = [];
      const report = await runScoreWorkers(
        {
          dataset: 'sgd', input: DIALOGUES, dataDir: DATA_DIR, limit: 40, chunkTurns: 256, nli: { model, device: 'cpu' },
          reportFile: f('lib.json'), turnsFile: f('lib.turns.jsonl'), referencesFile: f('lib.turns.references.jsonl'), referencesKept: true,
        },
        { workers: 2, hooks: { shardLine: (shard, count, line) => said.push(`[shard ${shard}/${count}] ${line}`) } },
      );
      expect(said).toEqual([]);
      // What it returns is what it wrote, and that is one process's report (the CLI run above).
      expect(report).toEqual(readJson(f('lib.json')));
      expect(withoutWork(report as unknown as Json)).toEqual(withoutWork(readJson(f('one.json'))));
      expect(lines(f('lib.turns.references.jsonl'))).toHaveLength(1 + 40);
      const alive = readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(f('lib.shard-'));
          } catch {
            return false;
          }
        });
      expect(alive).toEqual([]);
      expect(readdirSync(dir).filter((n) => n.startsWith('lib.') && n.includes('.shard-'))).toEqual([]);
    });

    it('runScoreWorkers in a program without signal handlers: SIGTERM reaches every shard, the program ends by the signal only after they have, their work kept', async () => {
      // A program of the library's user: no SIGINT/SIGTERM handler of its own. It imports the package as
      // a user's program does (its "import" export, dist/src/index.js, built by the tests' globalSetup):
      // plain JavaScript, nothing compiled at its start.
      const script = f('lib-program.mjs');
      writeFileSync(
        script,
        `import { runScoreWorkers } from ${JSON.stringify(path.join(REPO_ROOT, 'dist', 'src', 'index.js'))};\n` +
          `const shardLine = (k, n, line) => process.stderr.write(\`[shard \${k}/\${n}] \${line}\\n\`);\n` +
          `await runScoreWorkers(${JSON.stringify({ dataset: 'sgd', input: DIALOGUES, dataDir: DATA_DIR, limit: 400, chunkTurns: 1, nli: { model, device: 'cpu' }, reportFile: f('sig.json'), turnsFile: f('sig.turns.jsonl') })}, { workers: 2, hooks: { shardLine } });\n`,
      );
      const child = spawn(process.execPath, [script], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
      const shardPids = () =>
        readdirSync('/proc')
          .filter((p) => /^\d+$/.test(p))
          .filter((p) => {
            try {
              return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(f('sig.shard-'));
            } catch {
              return false;
            }
          });
      let shards: string[] = [];
      try {
        const shardFile = f('sig.turns.shard-1-of-2.jsonl');
        const started = (file: string) => existsSync(file) && lines(file).length >= 3;
        const deadline = Date.now() + 90_000;
        while (Date.now() < deadline && child.exitCode === null && !(started(shardFile) && started(f('sig.turns.shard-2-of-2.jsonl')))) await new Promise((r) => setTimeout(r, 20));
        shards = shardPids();
        expect(shards).toHaveLength(2);
        child.kill('SIGTERM');
        // Ended by the signal it got (raised again once the shards were gone), not by an error.
        expect(await exited).toEqual({ code: null, signal: 'SIGTERM' });
        expect(shardPids()).toEqual([]);
        // Each shard got the signal while the program still listened: their lines reached it before it ended.
        expect(stderr).toMatch(/^\[shard 1\/2\] todeval: interrupted: \d+ of \d+ turns saved in .*sig\.turns\.shard-1-of-2\.jsonl/m);
        expect(stderr).toMatch(/^\[shard 2\/2\] todeval: interrupted: \d+ of \d+ turns saved in .*sig\.turns\.shard-2-of-2\.jsonl/m);
        expect(stderr).not.toMatch(/Error|failed/);
        expect(existsSync(f('sig.json'))).toBe(false);
        // Each shard saved what it finished (the header and at least one turn).
        expect(lines(shardFile).length).toBeGreaterThanOrEqual(3);
      } finally {
        for (const pid of [child.pid!, ...shards.map(Number)]) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    });

    it('runScoreWorkers refuses what a --workers run cannot do before any process starts', async () => {
      const base = { dataset: 'sgd' as const, input: DIALOGUES, dataDir: DATA_DIR, chunkTurns: 256, nli: { model, device: 'cpu' as const } };
      await expect(runScoreWorkers(base, { workers: 2 })).rejects.toThrow(/--workers needs -o\/--output/);
      await expect(runScoreWorkers({ ...base, reportFile: f('x.json'), shard: { index: 1, count: 2 } }, { workers: 2 })).rejects.toThrow(/give --workers or --shard, not both/);
      await expect(runScoreWorkers({ ...base, reportFile: f('x.json'), confidence: {} }, { workers: 2 })).rejects.toThrow(/--confidence needs the whole run in one process: drop --workers/);
      expect(existsSync(f('x.json'))).toBe(false);
    });

    it('stops every shard when one fails (its error shown, exit 2) and resumes on the next run', async () => {
      // Shard 2's per-turn file already holds another run's records: that shard refuses to start.
      writeFileSync(f('bad.turns.shard-2-of-2.jsonl'), '{"kind":"todeval-rerank","digest":"0","signature":{"tool":"todeval"}}\n');
      const res = await runCli([...args(), '--workers', '2', '-o', f('bad.json'), '--turns', f('bad.turns.jsonl')]);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/^\[shard 2\/2\] todeval: .*bad\.turns\.shard-2-of-2\.jsonl: expected a todeval-sgsacc-turns file, found todeval-rerank$/m);
      expect(res.stderr).toMatch(/^todeval: shard 2\/2 failed: .*expected a todeval-sgsacc-turns file.*run the same command again to resume$/m);
      expect(existsSync(f('bad.json'))).toBe(false);
      // Shard 1 was stopped (or had finished): whatever it saved is resumed below, as the Ctrl-C test shows.
      writeFileSync(f('bad.turns.shard-2-of-2.jsonl'), '');
      const again = await runCli([...args(), '--workers', '2', '-o', f('bad.json'), '--turns', f('bad.turns.jsonl')]);
      expect(again.code).toBe(0);
      expect(withoutWork(readJson(f('bad.json')))).toEqual(withoutWork(readJson(f('one.json'))));
    });

    it('refuses --workers N beside the shard files of an unfinished run of another count: one line, exit 2, before any shard starts', async () => {
      // Its own folder: the other tests check that this one holds no shard file after their runs.
      const sub = f('other-count');
      mkdirSync(sub);
      writeFileSync(path.join(sub, 'res.shard-1-of-3.json'), '');
      const res = await runCli([...args(), '--workers', '2', '-o', path.join(sub, 'res.json')]);
      expect(res.code).toBe(2);
      expect(res.stderr).toBe(
        `todeval: --workers 2, but an earlier run left shard files of another count (3 shards: ${path.join(sub, 'res.shard-*-of-3.json')} (1 file)): give --workers 3 to resume that run, or delete them to start over with 2\n`,
      );
      expect(readdirSync(sub)).toEqual(['res.shard-1-of-3.json']);
    });

    it('Ctrl-C stops the parent and every shard; the same command then resumes', async () => {
      const argv = [...args(80), '--chunk', '1', '--workers', '2', '-o', f('int.json'), '--turns', f('int.turns.jsonl')];
      const child = spawn(process.execPath, [...CLI, ...argv], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))));
      const shardFile = f('int.turns.shard-1-of-2.jsonl');
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline && !(existsSync(shardFile) && lines(shardFile).length >= 3)) await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      // One line says what was kept and how to resume.
      expect(stderr).toMatch(/^todeval: interrupted: every shard stopped; their work is saved in .*; resume with: todeval score .*--workers 2/m);
      await new Promise((r) => setTimeout(r, 1500));
      // No shard of this run is left running.
      const alive = readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(f('int.json').replace('.json', '.shard-'));
          } catch {
            return false;
          }
        });
      expect(alive).toEqual([]);
      expect(existsSync(f('int.json'))).toBe(false);
      const again = await runCli(argv);
      expect(again.code).toBe(0);
      expect(again.stderr).toMatch(/\[shard 1\/2\] todeval: resuming/);
      expect(readJson(f('int.json')).counts).toMatchObject({ turns: 80 });
      // Each worker kept references beside -o, so resumed turns keep their ground-truth scores.
      expect((readJson(f('int.json')).groundTruth as Json).coverage).toEqual({ turns: 80, of: 80, complete: true });
    });
  },
);

describe('rerank: runRerankWorkers from the library (committed example items, tiny random model)', () => {
  const dir = tempDir('workers-rerank');
  const f = (name: string) => path.join(dir, name);
  const options = () => ({
    input: path.join(REPO_ROOT, 'examples', 'sgd-mini', 'rerank.jsonl'),
    dataset: 'sgd' as const,
    load: { input: path.join(REPO_ROOT, 'examples', 'sgd-mini', 'dialogues.json'), schemaFile: path.join(REPO_ROOT, 'examples', 'sgd-mini', 'schema.json') },
    hallucination: true,
    nli: { model: getSensitiveTinyModelDir(), device: 'cpu' as const },
  });

  it('merges to the report of one process (items in input order), and leaves no shard file', async () => {
    const one = await runRerankPipeline({ ...options(), reportFile: f('one.json') });
    const two = await runRerankWorkers({ ...options(), reportFile: f('two.json'), itemsFile: f('two.items.jsonl') }, { workers: 2 });
    const { nli: _a, ...a } = one;
    const { nli: _b, ...b } = two;
    expect(b).toEqual(a);
    expect(two.items.length).toBeGreaterThan(1);
    expect(readJson(f('two.json'))).toEqual(two as unknown as Json);
    expect(readdirSync(dir).filter((n) => n.includes('.shard-'))).toEqual([]);
  });

  it('refuses a loadData function (it cannot reach another process) before any process starts', async () => {
    await expect(runRerankWorkers({ ...options(), reportFile: f('x.json'), loadData: () => { throw new Error('not called'); } }, { workers: 2 })).rejects.toThrow(/give the data as `load`/);
    expect(existsSync(f('x.json'))).toBe(false);
  });
});
