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
 * What it does with them:
 * - One stretch of >= TODEVAL_LAG_WARN_CPU_S (default 3) s of the thread's CPU prints one line under
 *   the test; >= TODEVAL_LAG_FAIL_CPU_S (default 10; 0: never) fails the test (a file's import or
 *   hooks: the file), naming it. CPU, not wall time, so the verdict does not depend on the load: under
 *   a CPU hog (load ~15 on 2 cores) a worker gets ~1/8 of a core, and 10 s of CPU in one piece is then
 *   over the 60 s deadline; the worst stretch of the suite was 4.7 s when this was written. Off the
 *   limits where /proc/thread-self is missing (not Linux).
 * - With TODEVAL_LAG_REPORT=<path>, every stretch of at least TODEVAL_LAG_MIN_MS (default 1000) of
 *   wall time is appended to <path>, one tab-separated line each,
 *     wall_s  own_cpu_s  children_cpu_s  file  what-ran
 *   (`sort -t$'\t' -k2,2 -rn <path>`: the worst CPU first). Each worker appends its file's lines
 *   in one small write when the file ends, so workers' lines do not interleave. The children's CPU
 *   is that of the children reaped in the stretch: a spawnSync child's, or async ones that ended
 *   in it.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { RunnerTask } from 'vitest';

const REPORT = process.env.TODEVAL_LAG_REPORT;
const MIN_MS = Number(process.env.TODEVAL_LAG_MIN_MS ?? 1000);
/** one stretch of this much of the thread's CPU prints a warning under the test... */
const WARN_CPU_MS = Number(process.env.TODEVAL_LAG_WARN_CPU_S ?? 3) * 1000;
/** ...and this much fails it (0: never) */
const FAIL_CPU_MS = Number(process.env.TODEVAL_LAG_FAIL_CPU_S ?? 10) * 1000;
const TICK_MS = 100;
// Taken now, before a test file can install vitest's fake timers over the globals.
const clock = performance.now.bind(performance);
const stopTimer = clearInterval;

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

const seconds = (ms: number): string => (Number.isNaN(ms) ? '-' : (ms / 1000).toFixed(1));

/** The line a stretch over the limits prints (a warning) or fails its test with. */
function blockedMessage(x: Stretch, file: string, fails: boolean): string {
  const verdict = fails
    ? `limit ${seconds(FAIL_CPU_MS)} s of CPU, TODEVAL_LAG_FAIL_CPU_S). On a loaded box that is over vitest's 60 s RPC deadline`
    : `a test fails at ${seconds(FAIL_CPU_MS)} s of CPU). On a loaded box that nears vitest's 60 s RPC deadline`;
  return (
    `event-loop-lag: ${file} > ${x.what}: held its worker's event loop for ${seconds(x.cpuMs)} s of CPU in one ` +
    `piece (wall ${seconds(x.wallMs)} s; ${verdict} ('Timeout calling "onTaskUpdate"', exit 1 with every test ` +
    `passed): give the loop a turn between chunks (test/helpers/yield.ts) or move the work to a child process.`
  );
}

let file = '(unknown file)';
let what = 'import of the file (top-level code, collection)';
let last = { wall: clock(), ...cpuNow() };
/** stretches of at least MIN_MS wall, for the report */
const stretches: Stretch[] = [];
/** stretches over the CPU limit not yet failed on */
let overLimit: Stretch[] = [];

/** Closes the stretch since the last note, charged to what ran in it, and starts a new one. */
function note(next?: string): void {
  const now = { wall: clock(), ...cpuNow() };
  const x = { wallMs: now.wall - last.wall, cpuMs: now.own - last.own, childMs: now.children - last.children, what };
  if (REPORT && x.wallMs >= MIN_MS) stretches.push(x);
  if (FAIL_CPU_MS > 0 && x.cpuMs >= FAIL_CPU_MS) overLimit.push(x);
  else if (x.cpuMs >= WARN_CPU_MS) console.warn(blockedMessage(x, file, false));
  last = now;
  if (next !== undefined) what = next;
}

/** Fails the hook it is called from on the stretches over the limit that `which` selects. */
function failOn(which: (x: Stretch) => boolean): void {
  const mine = overLimit.filter(which);
  overLimit = overLimit.filter((x) => !which(x));
  if (mine.length > 0) throw new Error(mine.map((x) => blockedMessage(x, file, true)).join('\n'));
}

const timer = setInterval(() => note(), TICK_MS);
timer.unref();

beforeAll((suite) => {
  if ('filepath' in suite && typeof suite.filepath === 'string') file = path.relative(process.cwd(), suite.filepath);
  note('beforeAll hooks');
});
beforeEach((ctx) => note(fullName(ctx.task)));
// Registered first, so with vitest's default 'stack' order it runs after the file's own afterEach:
// the stretch it closes is the test's with all its hooks, and its error fails that test.
afterEach((ctx) => {
  const name = fullName(ctx.task);
  note(`after "${name}": a describe block's afterAll/beforeAll hooks, or the file's afterAll`);
  failOn((x) => x.what === name);
});
// Runs after the file's own afterAll hooks: the import's and hooks' stretches fail the file here.
afterAll(() => {
  note();
  stopTimer(timer);
  if (REPORT && stretches.length > 0) {
    appendFileSync(REPORT, stretches.map((x) => `${seconds(x.wallMs)}\t${seconds(x.cpuMs)}\t${seconds(x.childMs)}\t${file}\t${x.what}\n`).join(''));
  }
  failOn(() => true);
});
