import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';

// A one-node Slurm cluster from Debian's slurm-wlm and munge packages, private to one test file,
// started and stopped by deploy/slurm/try-local.sh (up DIR / down DIR): its own slurm.conf, state,
// spool, logs and munge key and socket in a temp folder, its ports free ones on loopback, so it
// touches no system configuration and no other cluster. Imported by
// test files only (it registers a hook): whatever a test started is stopped after the file's last
// test, however it ended.

const SBIN = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'];
const TRY_LOCAL = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'deploy', 'slurm', 'try-local.sh');
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

const SLURM_BINARIES = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scontrol', 'scancel', 'sinfo'];

/** Why no Slurm cluster can start here (one line, the test skips with it), or undefined when one can. */
export function slurmUnavailable(): string | undefined {
  const absent = SLURM_BINARIES.filter((b) => !findBinary(b));
  if (absent.length > 0) return `Slurm is not installed here (no ${absent.join(', ')}): apt-get install slurm-wlm munge`;
  if (process.getuid?.() !== 0) return 'slurmd must run as root to start jobs, and this test runs as another user';
  return undefined;
}

/**
 * Starts the cluster (try-local.sh up: munged, slurmctld and slurmd), then waits for the node to be idle. Resolves
 * to the cluster, or to one line saying why Slurm cannot run here (the caller skips with it).
 * The node advertises `gpus` pretend GPUs (plain files: with task/none nothing opens them), so a
 * script asking for --gres=gpu:1 runs as written; `cpus` is what the node claims to have.
 */
export async function startSlurmCluster(opts: { cpus?: number; gpus?: number } = {}): Promise<SlurmCluster | string> {
  const unavailable = slurmUnavailable();
  if (unavailable) return unavailable;
  const bins = Object.fromEntries(SLURM_BINARIES.map((b) => [b, findBinary(b)]));

  const dir = mkdtempSync(path.join(tmpdir(), 'todeval-slurm-'));
  const f = (...p: string[]) => path.join(dir, ...p);
  const env: NodeJS.ProcessEnv = { ...process.env, SLURM_CONF: f('slurm.conf') };
  // sbatch options from the environment would change what the scripts ask for.
  for (const k of Object.keys(env)) if (/^(SBATCH|SLURM|SQUEUE|SINFO)_/.test(k) && k !== 'SLURM_CONF') delete env[k];
  // For try-local.sh itself: without SLURM_CONF, so that its sweep for this cluster's processes cannot match it.
  const { SLURM_CONF: _conf, ...scriptEnv } = env;
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
      for (let i = 0; i < 20; i++) {
        const queue = await cluster.client('squeue', ['-h', '-o', '%i']).catch(() => '');
        if (queue.trim() === '') break;
        await sleep(500);
      }
      // The daemons, each by its pid file (try-local.sh down), which also removes the folder.
      await promisify(execFile)('bash', [TRY_LOCAL, 'down', dir], { env: scriptEnv, timeout: 60_000 }).catch(() => undefined);
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

  // deploy/slurm/try-local.sh up: the same one-node cluster the docs give newcomers, so the suite
  // runs the scripts on exactly the setup users try them on.
  const up = await promisify(execFile)('bash', [TRY_LOCAL, 'up', dir, '--cpus', String(opts.cpus ?? 8), '--gpus', String(opts.gpus ?? 4)], { env: scriptEnv, timeout: 60_000 }).then(
    () => undefined,
    (e: { stderr?: string; message: string }) => (e.stderr ?? e.message).trim().split('\n')[0],
  );
  if (up !== undefined) {
    await cluster.stop();
    return `Slurm did not start: ${up}`;
  }
  return cluster;
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
