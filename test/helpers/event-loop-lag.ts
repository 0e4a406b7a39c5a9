/**
 * Event-loop-lag monitor of the test workers (a vitest setup file, so it runs in every worker
 * before each test file).
 *
 * Why: vitest's worker talks to the main process over an RPC whose calls time out after 60 s. A
 * worker whose event loop is blocked (synchronous work, `spawnSync`/`execFileSync` children) cannot
 * read the reply in time, and the run exits 1 with `Timeout calling "onTaskUpdate"` although every
 * test passed. On a CPU-hogged box a worker gets a fraction of a core, so a 5-8 s synchronous stretch
 * on an idle machine becomes 60 s there. This monitor names the test that blocks, on any machine.
 *
 * How: a 100 ms timer notes when it last ran; at every timer tick and at every change of what runs
 * (the file's import, its hooks, each test) the time since the last note is one stretch during
 * which the loop could not run timers, charged to what ran then. For each stretch it also takes the
 * worker's own CPU time (synchronous JavaScript) and, on Linux, its waited-for children's CPU time
 * (`spawnSync` and friends), so the report says what blocked.
 *
 * Off unless TODEVAL_LAG_REPORT=<path> is set: then every stretch of at least TODEVAL_LAG_MIN_MS
 * (default 1000) is appended to <path> as one tab-separated line per stretch,
 *   wall_s  own_cpu_s  children_cpu_s  file  what-ran
 * (`sort -rn <path>` lists the worst first). Lines are appended by each worker when its file
 * ends; each is one small write, so workers' lines do not interleave.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { RunnerTask } from 'vitest';

const REPORT = process.env.TODEVAL_LAG_REPORT;
const MIN_MS = Number(process.env.TODEVAL_LAG_MIN_MS ?? 1000);
const TICK_MS = 100;

interface Cpu {
  /** this thread's user+system CPU, ms: the synchronous JavaScript that blocks the loop */
  own: number;
  /** waited-for children's user+system CPU, ms (`spawnSync` and friends; NaN on a thread) */
  children: number;
}

/**
 * From /proc/thread-self/stat (Linux): utime, stime, cutime, cstime are fields 14-17, in USER_HZ
 * (100) ticks. The calling thread's own, so a thread of the threads pool is not charged with its
 * neighbours' work. NaN elsewhere.
 */
function cpuNow(): Cpu {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    // the command name (field 2) may hold spaces: the fields after its closing ')' start at field 3
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    // On a thread of the threads pool the children's figure is the whole vitest process's (its
    // fork workers' included): meaningless, so left out.
    return { own: (f[11]! + f[12]!) * 10, children: isMainThread ? (f[13]! + f[14]!) * 10 : Number.NaN };
  } catch {
    return { own: Number.NaN, children: Number.NaN };
  }
}

function fullName(task: RunnerTask): string {
  const names: string[] = [];
  // the file itself is named apart (a top-level test's suite may be the file)
  for (let t: RunnerTask | undefined = task; t && t !== task.file; t = t.suite) names.unshift(t.name);
  return names.join(' > ');
}

interface Stretch {
  wallMs: number;
  cpuMs: number;
  childMs: number;
  what: string;
}

if (REPORT) {
  let file = '(unknown file)';
  let what = 'import of the file (top-level code, collection)';
  let last = { wall: performance.now(), ...cpuNow() };
  const stretches: Stretch[] = [];

  /** Closes the stretch since the last note, charged to what ran in it, and starts a new one. */
  const note = (next?: string): void => {
    const now = { wall: performance.now(), ...cpuNow() };
    const wallMs = now.wall - last.wall;
    if (wallMs >= MIN_MS) {
      stretches.push({ wallMs, cpuMs: now.own - last.own, childMs: now.children - last.children, what });
    }
    last = now;
    if (next !== undefined) what = next;
  };
  const timer = setInterval(() => note(), TICK_MS);
  timer.unref();

  beforeAll((suite) => {
    if ('filepath' in suite && typeof suite.filepath === 'string') file = path.relative(process.cwd(), suite.filepath);
    note('beforeAll hooks');
  });
  beforeEach((ctx) => note(fullName(ctx.task)));
  // Registered first, so with vitest's default 'stack' order it runs after the file's own afterEach.
  afterEach((ctx) => note(`after "${fullName(ctx.task)}": a describe block's afterAll/beforeAll hooks, or the file's afterAll`));
  afterAll(() => {
    note();
    clearInterval(timer);
    const s = (ms: number): string => (Number.isNaN(ms) ? '-' : (ms / 1000).toFixed(1));
    const lines = stretches.map((x) => `${s(x.wallMs)}\t${s(x.cpuMs)}\t${s(x.childMs)}\t${file}\t${x.what}\n`);
    if (lines.length > 0) appendFileSync(REPORT, lines.join(''));
  });
}
