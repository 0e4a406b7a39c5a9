import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';

// A one-node Slurm cluster from Debian's slurm-wlm and munge packages, private to one test file:
// its own slurm.conf, state, spool, logs and munge key and socket in a temp folder, its ports
// free ones on loopback, so it touches no system configuration and no other cluster. Imported by
// test files only (it registers a hook): whatever a test started is stopped after the file's last
// test, however it ended.

const SBIN = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'];
const started: SlurmCluster[] = [];

afterAll(async () => {
  for (const c of started.splice(0)) await c.stop();
});

function findBinary(name: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...SBIN]) {
    const file = path.join(dir, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** A free TCP port on loopback (the kernel's pick, released for slurm to take). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export interface SlurmCluster {
  dir: string;
  /** The environment for sbatch, squeue, scontrol: ours plus SLURM_CONF. */
  env: NodeJS.ProcessEnv;
  /** A Slurm client command (sbatch, squeue, scontrol, ...) against this cluster; rejects on failure. */
  client(cmd: string, args: string[], opts?: { cwd?: string; env?: NodeJS.ProcessEnv }): Promise<string>;
  /** The daemons' logs' last lines, for a failure message. */
  logs(): string;
  /** Cancels every job, stops the daemons and whatever they started, removes the folder. */
  stop(): Promise<void>;
}

/**
 * Starts the cluster: munged, slurmctld and slurmd, then waits for the node to be idle. Resolves
 * to the cluster, or to one line saying why Slurm cannot run here (the caller skips with it).
 * The node advertises `gpus` pretend GPUs (plain files: with task/none nothing opens them), so a
 * script asking for --gres=gpu:1 runs as written; `cpus` is what the node claims to have.
 */
const SLURM_BINARIES = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scontrol', 'scancel', 'sinfo'];

/** Why no Slurm cluster can start here (one line, the test skips with it), or undefined when one can. */
export function slurmUnavailable(): string | undefined {
  const absent = SLURM_BINARIES.filter((b) => !findBinary(b));
  if (absent.length > 0) return `Slurm is not installed here (no ${absent.join(', ')}): apt-get install slurm-wlm munge`;
  if (process.getuid?.() !== 0) return 'slurmd must run as root to start jobs, and this test runs as another user';
  return undefined;
}

export async function startSlurmCluster(opts: { cpus?: number; gpus?: number } = {}): Promise<SlurmCluster | string> {
  const unavailable = slurmUnavailable();
  if (unavailable) return unavailable;
  const bins = Object.fromEntries(SLURM_BINARIES.map((b) => [b, findBinary(b)]));

  const dir = mkdtempSync(path.join(tmpdir(), 'todeval-slurm-'));
  const daemons: ChildProcess[] = [];
  const f = (...p: string[]) => path.join(dir, ...p);
  const env: NodeJS.ProcessEnv = { ...process.env, SLURM_CONF: f('slurm.conf') };
  // sbatch options from the environment would change what the scripts ask for.
  for (const k of Object.keys(env)) if (/^(SBATCH|SLURM|SQUEUE|SINFO)_/.test(k) && k !== 'SLURM_CONF') delete env[k];
  const logTail = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').slice(-15).join('\n') : '(no log)');
  let stopped = false;

  const cluster: SlurmCluster = {
    dir,
    env,
    client: (cmd, args, o = {}) =>
      promisify(execFile)(bins[cmd] ?? cmd, args, { cwd: o.cwd ?? dir, env: { ...env, ...o.env }, timeout: 30_000 }).then((r) => r.stdout),
    logs: () => ['slurmctld.log', 'slurmd.log', 'munged.log'].map((l) => `--- ${l}\n${logTail(f('log', l))}`).join('\n'),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      // Jobs first (their steps end with them), then the daemons, each by its pid.
      await cluster.client('scancel', ['--full', `--user=${process.env.USER ?? 'root'}`]).catch(() => undefined);
      for (let i = 0; i < 20 && daemons.some((d) => d.exitCode === null); i++) {
        const queue = await cluster.client('squeue', ['-h', '-o', '%i']).catch(() => '');
        if (queue.trim() === '') break;
        await sleep(500);
      }
      for (const d of [...daemons].reverse()) {
        if (d.exitCode !== null || d.signalCode !== null) continue;
        d.kill('SIGTERM');
        for (let i = 0; i < 50 && d.exitCode === null && d.signalCode === null; i++) await sleep(100);
        if (d.exitCode === null && d.signalCode === null) d.kill('SIGKILL');
      }
      // slurmstepd and job processes detach into sessions of their own: found by this cluster's
      // SLURM_CONF in their environment, and killed by pid.
      for (const pid of processesWith(`SLURM_CONF=${f('slurm.conf')}`)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // exited meanwhile
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  started.push(cluster);

  const stderrOf = new Map<ChildProcess, string>();
  const spawnDaemon = (cmd: string, args: string[]) => {
    const child = spawn(bins[cmd]!, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    stderrOf.set(child, '');
    child.stderr!.on('data', (c: Buffer) => stderrOf.set(child, (stderrOf.get(child)! + c.toString()).slice(-2000)));
    child.on('error', () => undefined);
    daemons.push(child);
  };
  const lastLine = (text: string) => text.trim().split('\n').pop() ?? '';
  // One line: the test skips with it.
  const giveUp = async (why: string) => {
    const ctldLog = f('log', 'slurmctld.log');
    const hint = existsSync(ctldLog) ? ` (slurmctld.log: ${lastLine(readFileSync(ctldLog, 'utf8'))})` : '';
    await cluster.stop();
    return `${why}${hint}`;
  };

  try {
    for (const sub of ['state', 'spool', 'log', 'munge']) mkdirSync(f(sub), { mode: 0o700 });
    // munged refuses a key others can read.
    writeFileSync(f('munge', 'munge.key'), randomBytes(1024), { mode: 0o400 });
    chmodSync(dir, 0o755);
    const socket = f('munge', 'munge.socket');
    spawnDaemon('munged', [
      '--foreground', '--force', `--socket=${socket}`, `--key-file=${f('munge', 'munge.key')}`,
      `--pid-file=${f('munge', 'munged.pid')}`, `--log-file=${f('log', 'munged.log')}`, `--seed-file=${f('munge', 'munged.seed')}`,
    ]);
    for (let i = 0; i < 50 && !existsSync(socket); i++) await sleep(100);
    if (!existsSync(socket)) return await giveUp(`munged did not start: ${lastLine(stderrOf.get(daemons[0])!)}`);

    const host = hostname().split('.')[0];
    const [ctldPort, slurmdPort] = [await freePort(), await freePort()];
    const gpus = opts.gpus ?? 4;
    for (let i = 0; i < gpus; i++) writeFileSync(f(`gpu${i}`), '');
    writeFileSync(f('gres.conf'), gpus > 0 ? `Name=gpu File=${f('gpu')}[0-${gpus - 1}]\n` : '');
    writeFileSync(
      f('slurm.conf'),
      [
        'ClusterName=todevaltest',
        // Loopback addresses: nothing depends on how this machine's name resolves.
        `SlurmctldHost=${host}(127.0.0.1)`,
        `SlurmctldPort=${ctldPort}`,
        `SlurmdPort=${slurmdPort}`,
        'SlurmUser=root',
        'SlurmdUser=root',
        'AuthType=auth/munge',
        'CredType=cred/munge',
        // A requeued job may start again once its old credential has expired: 10 s, not 120.
        `AuthInfo=socket=${socket},cred_expire=10`,
        `StateSaveLocation=${f('state')}`,
        `SlurmdSpoolDir=${f('spool')}`,
        `SlurmctldPidFile=${f('slurmctld.pid')}`,
        `SlurmdPidFile=${f('slurmd.pid')}`,
        `SlurmctldLogFile=${f('log', 'slurmctld.log')}`,
        `SlurmdLogFile=${f('log', 'slurmd.log')}`,
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_CPU',
        'SchedulerType=sched/builtin',
        'ReturnToService=2',
        'MpiDefault=none',
        'JobCompType=jobcomp/none',
        'JobAcctGatherType=jobacct_gather/none',
        'AccountingStorageType=accounting_storage/none',
        // A killed or requeued task gets SIGKILL 2 s after SIGTERM (default 30).
        'KillWait=2',
        'MailProg=/bin/true',
        // The node may claim more CPUs than the machine has: jobs are light, the test wants them side by side.
        'SlurmdParameters=config_overrides',
        gpus > 0 ? 'GresTypes=gpu' : '',
        `NodeName=${host} NodeAddr=127.0.0.1 CPUs=${opts.cpus ?? 8}${gpus > 0 ? ` Gres=gpu:${gpus}` : ''} State=UNKNOWN`,
        `PartitionName=test Nodes=${host} Default=YES MaxTime=INFINITE State=UP`,
        '',
      ].join('\n'),
    );
    spawnDaemon('slurmctld', ['-D', '-i']);
    spawnDaemon('slurmd', ['-D']);
    for (let i = 0; i < 300; i++) {
      const state = await cluster.client('sinfo', ['-h', '-N', '-o', '%T']).catch(() => '');
      if (state.trim() === 'idle') return cluster;
      if (daemons.some((d) => d.exitCode !== null)) break;
      await sleep(100);
    }
    const exited = daemons.find((d) => d.exitCode !== null);
    const why = exited ? `${path.basename(exited.spawnfile)} exited: ${lastLine(stderrOf.get(exited)!)}` : 'the node did not come up idle within 30 s';
    return await giveUp(`Slurm did not start: ${why}`);
  } catch (e) {
    return await giveUp(`Slurm did not start: ${(e as Error).message}`);
  }
}

/** Pids of the processes whose environment holds `entry` (KEY=VALUE). */
function processesWith(entry: string): number[] {
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(entry)) pids.push(Number(d));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}
