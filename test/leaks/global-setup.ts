/**
 * Run-wide setup of the tests (vitest globalSetup, in the main vitest process): the data directory
 * handed to children (below), and the leak check of the whole test run (vitest globalSetup, in the main vitest process): a run fails
 * when a test leaves a process or a `todeval-*` temporary folder behind, even if every test passed.
 *
 * What counts as ours:
 * - Temporary folders: the run gets a private temp dir (TMPDIR, which os.tmpdir() and every child
 *   read), made here before any worker starts. Whatever `todeval-*` entry is left in it at the end
 *   was made by this run; nothing another run on the same machine does can land there. The private
 *   dir itself is removed at the end, so a leak is reported and then cleaned, never left.
 * - Processes: every process started under this run carries TODEVAL_TEST_RUN=<id> in its
 *   environment (set here, inherited by the workers and everything they spawn), so one that outlived
 *   its parent and was re-parented to init is still found (/proc/PID/environ); a child that was
 *   given a fresh environment is found as a descendant of this process (/proc/PID/stat's ppid).
 *   Vitest's own children (its fork workers, esbuild's service) are left out; a test of the system
 *   project runs on a thread of this process, so its direct children are this process's too, and
 *   are told from vitest's by their command line. Leftovers get a few seconds to exit (a SIGTERM in flight),
 *   then are named, killed (SIGKILL, by pid) and the run fails.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DATA_DIR, DATA_ENV } from '../helpers/shared.js';

const RUN_VAR = 'TODEVAL_TEST_RUN';

interface Proc {
  pid: number;
  ppid: number;
  cmd: string;
  ours: boolean;
}

function readProc(pid: number, runId: string): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may hold spaces and parentheses: the fields after the last ')' are fixed.
    const [state, ppidField] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z') return undefined; // exited, only waiting for its parent to reap it
    const ppid = Number(ppidField);
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    let ours = false;
    try {
      ours = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`${RUN_VAR}=${runId}`);
    } catch {
      // another user's process: not ours
    }
    return { pid, ppid, cmd, ours };
  } catch {
    return undefined; // exited while we looked
  }
}

/** Processes of this run still alive, other than this one and vitest's own (its direct children). */
export function leftoverProcesses(runId: string, self = process.pid): Proc[] {
  const procs = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => readProc(Number(d), runId))
    .filter((p): p is Proc => p !== undefined);
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const descends = (p: Proc): boolean => {
    for (let q: Proc | undefined = p, n = 0; q && n < 64; q = byPid.get(q.ppid), n++) if (q.ppid === self) return true;
    return false;
  };
  // This process's own children are vitest's (its fork workers, its esbuild service), or started by a
  // test on one of the threads pool's threads (the system project), which run inside this process.
  const vitestOwn = (p: Proc): boolean => p.ppid === self && VITEST_OWN.test(p.cmd);
  return procs.filter((p) => p.pid !== self && !vitestOwn(p) && (p.ours || descends(p) || p.ppid === self));
}

/** The command lines of vitest's own children: its fork workers (titled `node (vitest N)`) and esbuild's service. */
const VITEST_OWN = /^node \(vitest \d+\)$|node_modules\/(vitest|tinypool|esbuild|@esbuild)\/|\besbuild --service/;

let runTmp = '';
let runId = '';
/** Every project of the run (vitest.config.ts) lists this file: the first setup does the work, once. */
const OWNER_VAR = 'TODEVAL_TEST_LEAKS_OWNER';
let owner = false;

export function setup(): void {
  if (process.env[OWNER_VAR] === String(process.pid)) return;
  process.env[OWNER_VAR] = String(process.pid);
  owner = true;
  runId = `${process.pid}-${Date.now().toString(36)}`;
  runTmp = mkdtempSync(path.join(tmpdir(), 'todeval-test-run-'));
  process.env.TMPDIR = runTmp;
  process.env[RUN_VAR] = runId;
  // The data the tests found (TODEVAL_DATA, else ../shared/data beside the checkout) is handed to
  // every command they spawn through the variable, so no child looks for data beside its cwd.
  if (!process.env[DATA_ENV] && existsSync(DATA_DIR)) process.env[DATA_ENV] = DATA_DIR;
}

export async function teardown(): Promise<void> {
  if (!owner) return;
  owner = false;
  const problems: string[] = [];
  let procs = leftoverProcesses(runId);
  for (let waited = 0; procs.length > 0 && waited < 5000; waited += 250) {
    await sleep(250);
    procs = leftoverProcesses(runId);
  }
  for (const p of procs) {
    problems.push(`process ${p.pid} still running: ${p.cmd.slice(0, 200)}`);
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  const left = readdirSync(runTmp).filter((f) => f.startsWith('todeval-'));
  for (const f of left) problems.push(`temporary folder left behind: ${path.join(runTmp, f)}`);
  rmSync(runTmp, { recursive: true, force: true });
  if (problems.length > 0) {
    throw new Error(`test leaks (the tests that made these must clean up in afterAll/finally):\n  ${problems.join('\n  ')}`);
  }
}
