import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_CLI, HAS_BUILT_CLI, runCli } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { slurmUnavailable, startSlurmCluster, type SlurmCluster } from './helpers/slurm-cluster.js';
import { suiteTempDir } from './helpers/temp.js';

// deploy/slurm run for real: a one-node Slurm cluster from Debian's packages (test/helpers/slurm-cluster.ts),
// the repository's submit.sh and its three job scripts as they are, over an SGD slice with the
// lexical stand-in on the CPU (the scripts' variables say cpu/fp32 and which todeval to run; their
// --gres=gpu:1 is met by the node's pretend GPUs). One array task is requeued mid-run and must
// resume from its --turns file; the merged report and per-turn file must be an unsharded run's.
const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
// 60 system turns span 5 dialogues: 19, 24, 15 and 2 turns in the 4 shards. Chunks of 4 turns.
const LIMIT = 60;
const SHARDS = 4;
const CHUNK = 4;
// The task held after its first chunk and requeued: shard 2/4, 24 turns.
const HELD_TASK = 1;
const SLURM = path.join(REPO_ROOT, 'deploy', 'slurm');
const GATE = path.join(REPO_ROOT, 'test', 'helpers', 'slurm-task-gate.mjs');

type Json = Record<string, unknown>;
const lines = (f: string) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '');
/**
 * The report as text, less what counts one process's work: pairs issued and batches (`nli`), turns
 * read back (`resumed`), references computed or reused and the references file's name. There are
 * no clock times in a report.
 */
const withoutWork = (file: string) => {
  const { nli: _n, resumed: _r, references, ...rest } = JSON.parse(readFileSync(file, 'utf8')) as Json;
  return JSON.stringify({ ...rest, references: { ...(references as Json), file: null, reused: 0, computed: 0 } }, null, 2);
};

// deploy/slurm/try-local.sh as a newcomer runs it: it brings its own one-node cluster up (in a folder
// of its own, here under this suite's temp folder), runs the bundled example through submit.sh
// --cpu, and takes the cluster down. Needs no data beyond the repository.
describe('deploy/slurm/try-local.sh: the bundled example on a one-node cluster it brings up and takes down', () => {
  const dir = suiteTempDir('slurm-try');
  const f = (...p: string[]) => path.join(dir, ...p);
  const MINI = path.join(REPO_ROOT, 'examples', 'sgd-mini');

  it('runs the example through submit.sh --cpu (references, 2 array tasks, merge): the one-process run byte for byte; no daemon or folder left', async (ctx) => {
    const why = slurmUnavailable();
    if (why) {
      console.warn(`[skip] try-local.sh test skipped: ${why}`);
      return ctx.skip();
    }
    const model = getLexicalStandinDir();
    // TMPDIR: the script's cluster folder goes under this suite's folder (removed whatever happens).
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: dir, TODEVAL_MODEL: model };
    for (const k of Object.keys(env)) if (/^(SBATCH|SLURM|SQUEUE|SINFO)_/.test(k)) delete env[k];
    const r = await promisify(execFile)('bash', [path.join(SLURM, 'try-local.sh'), '--out-dir', f('out')], { cwd: REPO_ROOT, env, timeout: 540_000 }).then(
      (x) => ({ code: 0, stdout: x.stdout, stderr: x.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/^cluster: one node, up in .*\nreferences: job \d+\nshards: job \d+ \(2 tasks\)\nmerge: job \d+\n/);
    expect(r.stdout).toMatch(/^merged: 9 turns, SGSAcc \d+\.\d\d \(unvalidated \d+\.\d\d\), SER 66\.67; model local:lexical-standin/m);
    // Taken down: its folder removed, none of its daemons or job processes left.
    const clusterDir = /up in (\S+) /.exec(r.stdout)![1];
    expect(existsSync(clusterDir)).toBe(false);
    expect(readdirSync(dir).filter((n) => n.startsWith('todeval-slurm-'))).toEqual([]);
    expect(readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
      try {
        return readFileSync(`/proc/${p}/environ`, 'utf8').split('\0').includes(`SLURM_CONF=${clusterDir}/slurm.conf`);
      } catch {
        return false;
      }
    })).toEqual([]);

    // The same example in one process, from nothing the cluster wrote.
    const one = await runCli(['score', '--dataset', 'sgd', '--dialogues', path.join(MINI, 'dialogues.json'), '--schema', path.join(MINI, 'schema.json'), '--model', model, '--threads', '1', '--progress', 'none',
      '-i', path.join(MINI, 'predictions.jsonl'), '--device', 'cpu', '--dtype', 'fp32', '--references', f('one.refs.jsonl'), '--turns', f('one.turns.jsonl'), '-o', f('one.json')]);
    expect(one.code, one.stderr).toBe(0);
    expect(withoutWork(f('out', 'run.json'))).toBe(withoutWork(f('one.json')));
    expect(readFileSync(f('out', 'run.turns.jsonl'), 'utf8')).toBe(readFileSync(f('one.turns.jsonl'), 'utf8'));
  }, 600_000);

  it('up/down: bad use is one line and exit 2', async () => {
    const bad = await promisify(execFile)('bash', [path.join(SLURM, 'try-local.sh'), 'up']).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect([bad.code, bad.stderr]).toEqual([2, 'try-local.sh: usage: try-local.sh [--out-dir DIR] [--shards N] | up DIR [--cpus N] [--gpus N] | down DIR\n']);
  });
});

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))('deploy/slurm on a one-node Slurm cluster', () => {
  const dir = suiteTempDir('slurm-run');
  const f = (...p: string[]) => path.join(dir, ...p);
  const runDir = () => f('run');
  let cluster: SlurmCluster | undefined;
  let model = '';
  const scoreArgs = () => ['--dataset', 'sgd', '--dialogues', DIALOGUES, '--data-dir', DATA_DIR, '--limit', String(LIMIT), '--chunk', String(CHUNK), '--model', model, '--threads', '1', '--progress', 'none'];

  // The built CLI when `npm test` built it (what users run), else the sources; both with the gate preloaded.
  const bin = HAS_BUILT_CLI ? `${process.execPath} --import ${GATE} ${BUILT_CLI}` : `${process.execPath} --import tsx --import ${GATE} ${path.join(REPO_ROOT, 'src', 'cli', 'main.ts')}`;

  /**
   * deploy/slurm/submit.sh COMMAND ARGS with `env`, from the repository root; its job ids, and
   * `until(what, seconds, done?)`, which waits for `done` (default: the merge job gone from the
   * queue with run.json written) and fails with the queue and every log when it does not come, or
   * as soon as the merge job leaves the queue without a report (cancelled: a job it waited on failed).
   */
  const submitRun = async (c: SlurmCluster, command: string, args: string[], env: Record<string, string>) => {
    const submitted = await c.client('bash', [path.join(SLURM, 'submit.sh'), command, ...args], { cwd: REPO_ROOT, env });
    const jobs = Object.fromEntries([...submitted.matchAll(/^(\w+): job (\d+)/gm)].map((m) => [m[1], m[2]]));
    expect(jobs.shards && jobs.merge, submitted).toBeTruthy();
    const report = path.join(env.TODEVAL_RUN_DIR, 'run.json');
    const logs = path.join(env.TODEVAL_RUN_DIR, 'logs');
    const queued = async (id: string) => (await c.client('squeue', ['-h', '-j', id, '-o', '%i %T %r']).catch(() => '')).trim();
    const mergeDone = async () => existsSync(report) && !(await queued(jobs.merge));
    const why = async (what: string) => {
      const text = existsSync(logs) ? readdirSync(logs).map((l) => `--- ${l}\n${readFileSync(path.join(logs, l), 'utf8').slice(-1500)}`).join('\n') : '';
      return `${what}\nsqueue: ${await c.client('squeue', ['-h', '-o', '%i %T %r']).catch((e: Error) => e.message)}\n${text}\n${c.logs()}`;
    };
    // `done` is looked at every 250 ms; the queue (a squeue process and a round trip to slurmctld
    // each time) every 2 s only, for the merge job leaving it without a report.
    const until = async (what: string, seconds: number, done: () => Promise<boolean> | boolean = mergeDone) => {
      for (let t = 0; t < seconds * 4; t++) {
        if (await done()) return;
        if (t % 8 === 7 && !(await queued(jobs.merge)) && !existsSync(report)) throw new Error(await why(`${what}: the merge job left the queue without a report`));
        await sleep(250);
      }
      throw new Error(await why(`${what}: not within ${seconds} s`));
    };
    return { jobs, until };
  };

  beforeAll(async () => {
    const started = await startSlurmCluster({ cpus: 8, gpus: 4 });
    if (typeof started === 'string') {
      console.warn(`[skip] Slurm test skipped: ${started}`);
      return;
    }
    cluster = started;
    model = getLexicalStandinDir();
    // A system: the gold utterance, cut to four words on every third turn (SGSAcc and BLEU then differ from the ceiling).
    const dialogues = JSON.parse(readFileSync(DIALOGUES, 'utf8')) as { dialogue_id: string; turns: { speaker: string; utterance: string }[] }[];
    const predictions = dialogues.flatMap((d) =>
      d.turns.flatMap((t, i) => (t.speaker === 'SYSTEM' ? [{ id: `${d.dialogue_id}/${i}`, utterance: i % 3 === 1 ? t.utterance.split(' ').slice(0, 4).join(' ') : t.utterance }] : [])),
    );
    writeFileSync(f('system.jsonl'), predictions.map((p) => JSON.stringify(p)).join('\n') + '\n');
  }, 240_000);

  it('submit.sh: references job, array of 4 shards (task 2 requeued mid-run resumes from its --turns), merge after all: the unsharded run byte for byte', async (ctx) => {
    if (!cluster) return ctx.skip();
    const c = cluster;
    const env = {
      TODEVAL_RUN_DIR: runDir(),
      TODEVAL_SHARDS: String(SHARDS),
      TODEVAL_INPUT: f('system.jsonl'),
      TODEVAL_DEVICE: 'cpu',
      TODEVAL_DTYPE: 'fp32',
      TODEVAL_BIN: bin,
      TODEVAL_TEST_GATE_TASK: String(HELD_TASK),
      TODEVAL_TEST_GATE_FILE: f('held.pid'),
    };
    const { jobs, until } = await submitRun(c, 'score', scoreArgs(), env);
    const [refsJob, arrayJob] = [jobs.references, jobs.shards];
    expect(refsJob).toBeTruthy();

    // Task HELD_TASK holds after saving its first chunk: it is mid-run, with the GPU its script asked for.
    await until('the held task saving its first chunk', 240, () => existsSync(f('held.pid')));
    const heldPart = f('run', `part-${HELD_TASK + 1}-of-${SHARDS}`);
    const saved = lines(`${heldPart}.turns.jsonl`).length - 1;
    expect(saved).toBe(CHUNK);
    expect(existsSync(`${heldPart}.json`)).toBe(false);
    const held = await c.client('scontrol', ['show', 'job', `${arrayJob}_${HELD_TASK}`]);
    expect(held).toMatch(/JobState=RUNNING/);
    expect(held).toMatch(/TresPerNode=gres[:/]gpu:1/);
    await c.client('scontrol', ['requeue', `${arrayJob}_${HELD_TASK}`]);

    await until('the merge job', 300);

    // The requeued task ran again and went on from the turns it had saved.
    const part = JSON.parse(readFileSync(`${heldPart}.json`, 'utf8')) as { resumed: number; shard: { index: number } };
    expect(part.shard.index).toBe(HELD_TASK + 1);
    expect(part.resumed).toBe(saved);
    const heldLog = readFileSync(f('run', 'logs', `todeval-shard-${arrayJob}_${HELD_TASK}.out`), 'utf8');
    expect(heldLog).toMatch(new RegExp(`todeval: resuming .*part-${HELD_TASK + 1}-of-${SHARDS}\\.turns\\.jsonl: ${saved} of 24 turns already scored`));
    // Every shard scored its part from the stored references of the first job, computing none.
    for (let k = 1; k <= SHARDS; k++) {
      const r = JSON.parse(readFileSync(f('run', `part-${k}-of-${SHARDS}.json`), 'utf8')) as { references: { computed: number; reused: number } };
      expect(r.references.computed, `shard ${k}`).toBe(0);
      expect(r.references.reused, `shard ${k}`).toBeGreaterThan(0);
    }
    expect(lines(f('run', 'refs.jsonl'))).toHaveLength(LIMIT + 1);

    // The same score in one process, from nothing the cluster wrote.
    const one = await runCli(['score', ...scoreArgs(), '-i', f('system.jsonl'), '--device', 'cpu', '--dtype', 'fp32', '--references', f('one.refs.jsonl'), '--turns', f('one.turns.jsonl'), '-o', f('one.json')]);
    expect(one.code, one.stderr).toBe(0);
    expect(withoutWork(f('run', 'run.json'))).toBe(withoutWork(f('one.json')));
    expect(readFileSync(f('run', 'run.turns.jsonl'), 'utf8')).toBe(readFileSync(f('one.turns.jsonl'), 'utf8'));
    // Not a report of nothing: every turn scored, and the cut turns show (BLEU against the gold is below 100).
    const report = JSON.parse(readFileSync(f('run', 'run.json'), 'utf8')) as { dataset: { turns: number }; sgsacc: { unvalidated: { all: number } }; bleu: { score: number } };
    expect(report.dataset.turns).toBe(LIMIT);
    expect(report.sgsacc.unvalidated.all).toBeGreaterThan(0);
    expect(report.bleu.score).toBeGreaterThan(50);
    expect(report.bleu.score).toBeLessThan(100);

    // The merge step refuses a split whose part is missing, naming it in one line.
    const missing = await c.client('bash', [path.join(SLURM, 'merge.sbatch'), 'score'], { cwd: REPO_ROOT, env: { ...env, TODEVAL_SHARDS: '5' } }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^todeval: .*part-1-of-5\.json: cannot read shard report: no such file or directory\n$/);
  }, 600_000);

  it.skipIf(!hasData('gcdf1', 'convlab_baselines', 'test', 'dialogues_001.json'))(
    'submit.sh gcdf1 without a GPU (--gres=none): 4 array tasks merged into the unsharded report and per-dialogue file, byte for byte',
    async (ctx) => {
      if (!cluster) return ctx.skip();
      const gcdf1Args = ['-d', path.join(DATA_DIR, 'gcdf1', 'convlab_baselines', 'test'), '--data-dir', DATA_DIR, '--limit', '9', '--no-canonical-map', '--progress', 'none'];
      const env = { TODEVAL_RUN_DIR: f('gcdf1-run'), TODEVAL_SHARDS: String(SHARDS), TODEVAL_BIN: bin, TODEVAL_SBATCH_ARGS: '--gres=none' };
      const { jobs, until } = await submitRun(cluster, 'gcdf1', gcdf1Args, env);
      // gcdf1 runs no model: no references job, and the tasks hold no GPU.
      expect(jobs.references).toBeUndefined();
      expect(await cluster.client('scontrol', ['show', 'job', `${jobs.shards}_0`])).not.toMatch(/TresPerNode=gres/);
      await until('the merge job', 300);
      const one = await runCli(['gcdf1', ...gcdf1Args, '-o', f('gcdf1-one.json'), '--per-dialogue', f('gcdf1-one.dialogues.json')]);
      expect(one.code, one.stderr).toBe(0);
      expect(readFileSync(f('gcdf1-run', 'run.json'), 'utf8')).toBe(readFileSync(f('gcdf1-one.json'), 'utf8'));
      expect(readFileSync(f('gcdf1-run', 'run.dialogues.json'), 'utf8')).toBe(readFileSync(f('gcdf1-one.dialogues.json'), 'utf8'));
      const shards = [1, 2, 3, 4].map((k) => JSON.parse(readFileSync(f('gcdf1-run', `part-${k}-of-${SHARDS}.json`), 'utf8')) as { metadata: { signature: { shard: string; dialogues: number } } });
      expect(shards.map((p) => p.metadata.signature.shard)).toEqual(['1/4', '2/4', '3/4', '4/4']);
      expect(shards.every((p) => p.metadata.signature.dialogues > 0)).toBe(true);
    },
    300_000,
  );
});
