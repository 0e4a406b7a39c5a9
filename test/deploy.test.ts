import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { Job } from 'kubernetes-models/batch/v1';
import { PersistentVolumeClaim } from 'kubernetes-models/v1';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_CLI, HAS_BUILT_CLI } from './helpers/cli.js';
import { runInProcess } from './helpers/in-process-cli.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { getSensitiveTinyModelDir } from './nli-fixtures.js';
import { suiteTempDir, tempDir } from './helpers/temp.js';

// deploy/ cannot be run here (no Docker engine, no cluster): the manifests are validated against
// the Kubernetes API schemas, the Dockerfile's inputs checked, and the entrypoint every pod runs
// is run for real, container-free, with the tiny random model.
const DEPLOY = path.join(REPO_ROOT, 'deploy');
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function manifests(): { file: string; doc: Doc }[] {
  const dir = path.join(DEPLOY, 'k8s');
  return readdirSync(dir)
    .filter((n) => n.endsWith('.yaml'))
    .flatMap((n) => yaml.loadAll(readFileSync(path.join(dir, n), 'utf8')).map((doc) => ({ file: n, doc: doc as Doc })));
}

const envOf = (job: Doc, name: string): string | undefined =>
  (job.spec.template.spec.containers[0].env as { name: string; value: string }[]).find((e) => e.name === name)?.value;

describe('deploy/: Kubernetes manifests and Dockerfile', () => {
  it('every manifest is a valid Kubernetes object (kubernetes-models schemas)', () => {
    const docs = manifests();
    expect(docs.map((d) => d.doc.kind).sort()).toEqual(['Job', 'Job', 'Job', 'PersistentVolumeClaim']);
    for (const { file, doc } of docs) {
      const model = doc.kind === 'Job' ? new Job(doc as Job) : new PersistentVolumeClaim(doc as PersistentVolumeClaim);
      expect(() => model.validate(), file).not.toThrow();
    }
    // The validation is real: a wrong type in a field is refused.
    const bad = structuredClone(docs.find((d) => d.file === 'score-job.yaml')!.doc);
    bad.spec.completions = 'eight';
    expect(() => new Job(bad as Job).validate()).toThrow();
  });

  it('the shard Job is Indexed, one GPU per pod, N agreed everywhere, and the merge reads what it writes', () => {
    const docs = manifests();
    const job = (file: string) => docs.find((d) => d.file === file)!.doc;
    const score = job('score-job.yaml');
    const merge = job('merge-job.yaml');
    expect(score.spec.completionMode).toBe('Indexed');
    const n = Number(envOf(score, 'TODEVAL_SHARDS'));
    expect(score.spec.completions).toBe(n);
    expect(score.spec.parallelism).toBe(n);
    expect(score.spec.template.spec.containers[0].resources.limits['nvidia.com/gpu']).toBe(1);
    expect(score.spec.template.spec.containers[0].args.slice(0, 2)).toEqual(['shard', 'score']);
    expect(merge.spec.template.spec.containers[0].args).toEqual(['merge']);
    expect(envOf(merge, 'TODEVAL_SHARDS')).toBe(String(n));
    expect(envOf(merge, 'TODEVAL_RUN_DIR')).toBe(envOf(score, 'TODEVAL_RUN_DIR'));
    const claim = docs.find((d) => d.doc.kind === 'PersistentVolumeClaim')!.doc;
    expect(claim.spec.accessModes).toEqual(['ReadWriteMany']);
    for (const { doc } of docs.filter((d) => d.doc.kind === 'Job')) {
      expect(doc.spec.template.spec.volumes[0].persistentVolumeClaim.claimName).toBe(claim.metadata.name);
      expect(doc.spec.template.spec.containers[0].volumeMounts[0].mountPath).toBe('/work');
    }
  });

  it("the Dockerfile's COPY sources exist and its entrypoint is this script", () => {
    const dockerfile = readFileSync(path.join(DEPLOY, 'Dockerfile'), 'utf8');
    const copies = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1].split(/\s+/));
    expect(copies.length).toBeGreaterThan(5);
    for (const src of copies) {
      if (src.includes('*')) {
        const dir = path.join(REPO_ROOT, path.dirname(src));
        const re = new RegExp(`^${path.basename(src).replace('.', '\\.').replace('*', '.*')}$`);
        expect(readdirSync(dir).some((n) => re.test(n)), src).toBe(true);
      } else expect(existsSync(path.join(REPO_ROOT, src)), src).toBe(true);
    }
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/local\/bin\/entrypoint\.sh"\]$/m);
    expect(dockerfile).toContain('COPY deploy/entrypoint.sh /usr/local/bin/entrypoint.sh');
    // The engines field asks for Node 20: the build stage's image must give it.
    expect(JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).engines.node).toMatch(/^>=20\./);
    expect(dockerfile).toMatch(/^FROM node:20-/m);
  });
});

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))(
  'deploy/entrypoint.sh run here: two Indexed Job pods, then the merge step',
  () => {
    const dir = tempDir('deploy');
    const runDir = path.join(dir, 'runs', 'gold');
    let model = '';
    const args = () => ['--dataset', 'sgd', '--dialogues', path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json'), '--data-dir', DATA_DIR, '--limit', '24', '--model', model, '--device', 'cpu'];
    // The built CLI when `npm test` has built it (what the image runs), else the sources.
    const bin = HAS_BUILT_CLI ? `${process.execPath} ${BUILT_CLI}` : `${process.execPath} --import tsx ${path.join(REPO_ROOT, 'src', 'cli', 'main.ts')}`;
    const entrypoint = (argv: string[], env: Record<string, string>) =>
      promisify(execFile)('bash', [path.join(DEPLOY, 'entrypoint.sh'), ...argv], { cwd: REPO_ROOT, env: { ...process.env, TODEVAL_BIN: bin, TODEVAL_RUN_DIR: runDir, ...env } }).then(
        (r) => ({ code: 0, stderr: r.stderr }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );

    beforeAll(async () => {
      model = getSensitiveTinyModelDir();
      await runInProcess(['score', ...args(), '-o', path.join(dir, 'one.json'), '--turns', path.join(dir, 'one.turns.jsonl')]);
    });

    it('shards from JOB_COMPLETION_INDEX 0 and 1 merge into the unsharded report', async () => {
      const env = { TODEVAL_SHARDS: '2', TODEVAL_REFERENCES: '1' };
      const pods = await Promise.all([0, 1].map((i) => entrypoint(['shard', 'score', ...args()], { ...env, JOB_COMPLETION_INDEX: String(i) })));
      for (const pod of pods) expect(pod).toEqual({ code: 0, stderr: '' });
      expect(readdirSync(runDir).sort()).toEqual([
        'part-1-of-2.json', 'part-1-of-2.refs.jsonl', 'part-1-of-2.turns.jsonl',
        'part-2-of-2.json', 'part-2-of-2.refs.jsonl', 'part-2-of-2.turns.jsonl',
      ]);
      const merged = await entrypoint(['merge'], env);
      expect(merged.code).toBe(0);
      const read = (f: string) => {
        const { nli: _n, ...r } = JSON.parse(readFileSync(f, 'utf8')) as Record<string, unknown>;
        return { ...r, references: { ...(r.references as object), file: null } };
      };
      expect(read(path.join(runDir, 'run.json'))).toEqual(read(path.join(dir, 'one.json')));
      const turns = (f: string) => new Set(readFileSync(f, 'utf8').trim().split('\n'));
      expect(turns(path.join(runDir, 'run.turns.jsonl'))).toEqual(turns(path.join(dir, 'one.turns.jsonl')));
      expect(readFileSync(path.join(runDir, 'run.refs.jsonl'), 'utf8').trim().split('\n')).toHaveLength(25);
    });

    it('the merge step fails with one line when a part is missing; bad use of the script exits 2', async () => {
      mkdirSync(path.join(dir, 'runs', 'none'));
      const missing = await entrypoint(['merge'], { TODEVAL_SHARDS: '3', TODEVAL_RUN_DIR: path.join(dir, 'runs', 'none') });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/^todeval: .*part-1-of-3\.json: cannot read shard report: no such file or directory\n$/);
      const noIndex = await entrypoint(['shard', 'score', ...args()], { TODEVAL_SHARDS: '2', JOB_COMPLETION_INDEX: '' });
      expect(noIndex).toEqual({ code: 2, stderr: 'entrypoint: JOB_COMPLETION_INDEX is not set (see deploy/entrypoint.sh)\n' });
      expect((await entrypoint(['shard', 'gcdf1'], { TODEVAL_SHARDS: '2', JOB_COMPLETION_INDEX: '0' })).code).toBe(2);
    });
  },
);

// deploy/slurm is run for real on a one-node cluster in test/slurm.test.ts where Slurm is
// installed; these checks run everywhere: what the scripts ask of the scheduler, and submit.sh's
// refusals, which come before any sbatch call.
describe('deploy/slurm: the job scripts and submit.sh', () => {
  const submitDir = suiteTempDir('slurm-submit');
  const SLURM_DIR = path.join(DEPLOY, 'slurm');
  const directives = (file: string) => [...readFileSync(path.join(SLURM_DIR, file), 'utf8').matchAll(/^#SBATCH (\S+)/gm)].map((m) => m[1]);
  const submit = (argv: string[], env: Record<string, string>) =>
    promisify(execFile)('bash', [path.join(SLURM_DIR, 'submit.sh'), ...argv], { env: { ...process.env, TODEVAL_RUN_DIR: '', TODEVAL_SHARDS: '', ...env } }).then(
      (r) => ({ code: 0, stderr: r.stderr }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );

  it('shards and the references job ask for one GPU and may be requeued; the merge asks for none', async () => {
    for (const file of ['shard.sbatch', 'refs.sbatch']) {
      expect(directives(file), file).toEqual(expect.arrayContaining(['--gres=gpu:1', '--requeue', '--open-mode=append']));
      expect(readFileSync(path.join(SLURM_DIR, file), 'utf8'), file).toContain('--device "${TODEVAL_DEVICE:-cuda}" --dtype "${TODEVAL_DTYPE:-fp16}"');
    }
    expect(directives('merge.sbatch').some((d) => d.startsWith('--gres'))).toBe(false);
    for (const file of readdirSync(SLURM_DIR)) await promisify(execFile)('bash', ['-n', path.join(SLURM_DIR, file)]);
  });

  it('submit.sh refuses bad use in one line (exit 2) before submitting anything', async () => {
    const run = path.join(submitDir, 'run');
    expect(await submit(['score'], { TODEVAL_SHARDS: '4' })).toEqual({ code: 2, stderr: "submit.sh: TODEVAL_RUN_DIR is not set: the run's folder, on storage every node sees\n" });
    expect(await submit(['score'], { TODEVAL_RUN_DIR: run, TODEVAL_SHARDS: '0' })).toEqual({ code: 2, stderr: "submit.sh: TODEVAL_SHARDS must be the number of shards (a positive integer), not '0'\n" });
    expect(await submit(['bleu'], { TODEVAL_RUN_DIR: run, TODEVAL_SHARDS: '4' })).toMatchObject({ code: 2, stderr: expect.stringMatching(/^submit\.sh: usage: submit\.sh \[--cpu\] score\|rerank\|evaluate\|gcdf1 ARGS\.\.\..*\n$/) });
    expect(await submit(['score', '-i', 'sys.jsonl'], { TODEVAL_RUN_DIR: run, TODEVAL_SHARDS: '4' })).toEqual({
      code: 2,
      stderr: "submit.sh: -i: give score's predictions as TODEVAL_INPUT and its references file as TODEVAL_REFERENCES\n",
    });
    expect(await submit(['rerank', '-i', 'c.jsonl', '--shard', '1/2'], { TODEVAL_RUN_DIR: run, TODEVAL_SHARDS: '4' })).toEqual({
      code: 2,
      stderr: 'submit.sh: --shard: the scripts set it for every shard (see deploy/slurm/submit.sh)\n',
    });
    expect(existsSync(run)).toBe(false);
  });

  // A fake sbatch first on PATH (a fake for the scheduler only: submit.sh itself runs as it is). It
  // logs each call's arguments and TODEVAL_DEVICE/DTYPE, answers job ids from 101 on, and fails
  // the call numbered FAKE_SBATCH_FAIL_AT with a message of its own, as sbatch does without a controller.
  const fakeSbatch = () => {
    const bin = path.join(submitDir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      path.join(bin, 'sbatch'),
      [
        '#!/usr/bin/env bash',
        'n=$(( $(cat "$FAKE_SBATCH_LOG" 2>/dev/null | wc -l) + 1 ))',
        'echo "$* device=${TODEVAL_DEVICE:-} dtype=${TODEVAL_DTYPE:-}" >> "$FAKE_SBATCH_LOG"',
        'if [ "$n" = "${FAKE_SBATCH_FAIL_AT:-0}" ]; then echo "sbatch: fatal: Could not establish a configuration source" >&2; exit 1; fi',
        'echo "$((100 + n))"',
        '',
      ].join('\n'),
    );
    chmodSync(path.join(bin, 'sbatch'), 0o755);
    return bin;
  };
  const submitWith = (argv: string[], env: Record<string, string>) =>
    promisify(execFile)('bash', [path.join(SLURM_DIR, 'submit.sh'), ...argv], { env: { ...process.env, PATH: `${fakeSbatch()}:${process.env.PATH}`, TODEVAL_SBATCH_ARGS: '', TODEVAL_DEVICE: '', TODEVAL_DTYPE: '', ...env } }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it('submit.sh stops at the first refused sbatch: its message, the jobs already submitted, exit 1', async () => {
    for (const failAt of [1, 2, 3]) {
      const log = path.join(submitDir, `sbatch-${failAt}.log`);
      const r = await submitWith(['score', '--dataset', 'sgd'], { TODEVAL_RUN_DIR: path.join(submitDir, `run-${failAt}`), TODEVAL_SHARDS: '2', FAKE_SBATCH_LOG: log, FAKE_SBATCH_FAIL_AT: String(failAt) });
      expect(r.code, r.stderr).toBe(1);
      const done = ['references=101', 'shards=102'].slice(0, failAt - 1);
      const what = ['references', 'shards', 'merge'][failAt - 1];
      expect(r.stderr).toBe(
        'sbatch: fatal: Could not establish a configuration source\n' +
          `submit.sh: sbatch did not submit the ${what} job (its message is above)${done.length ? `; already submitted: ${done.join(' ')}` : ''}\n`,
      );
      // No job after the refused one was submitted, and no empty job id was printed.
      expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(failAt);
      expect(r.stdout).not.toMatch(/job \s/);
      expect(r.stdout).not.toContain('report:');
    }
  });

  it('submit.sh --cpu: every job with --gres=none, the shards on cpu/fp32, nothing edited', async () => {
    const log = path.join(submitDir, 'sbatch-cpu.log');
    const r = await submitWith(['--cpu', 'score', '--dataset', 'sgd'], { TODEVAL_RUN_DIR: path.join(submitDir, 'run-cpu'), TODEVAL_SHARDS: '2', FAKE_SBATCH_LOG: log, TODEVAL_SBATCH_ARGS: '--partition=cpu' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^references: job 101\nshards: job 102 \(2 tasks\)\nmerge: job 103\n/);
    const calls = readFileSync(log, 'utf8').trim().split('\n');
    expect(calls).toHaveLength(3);
    for (const call of calls) expect(call).toMatch(/^--parsable --gres=none --partition=cpu .* device=cpu dtype=fp32$/);
    expect(calls[1]).toContain('--dependency=afterok:101');
    expect(calls[2]).toContain('--dependency=afterok:102');
  });
});
