// Preloaded by scripts/bench-pipeline.ts into each `todeval score` it times (node --import): at exit
// it writes what the process cost to $TODEVAL_PROBE_OUT as JSON: CPU time (all threads, and the
// main thread's alone), peak RSS, main-thread garbage-collection pauses, and the stage clock's
// milliseconds per stage when the code under test has one (src/util/stage-clock.ts; an older build
// without it reports null).
// Plain JavaScript so that it loads into any build, ours or a baseline checkout's.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const out = process.env.TODEVAL_PROBE_OUT;
let gcMs = 0;
let gcCount = 0;
const count = (list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration;
    gcCount++;
  }
};
const observer = new PerformanceObserver(count);
observer.observe({ entryTypes: ['gc'] });

/**
 * CPU time of the main thread alone, from /proc (Linux; null elsewhere): the serial part of a run,
 * and a figure that load from other processes inflates far less than wall time.
 */
function mainThreadCpuMs() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : null;
  } catch {
    return null;
  }
}

function threadCount() {
  try {
    return readdirSync('/proc/self/task').length;
  } catch {
    return null;
  }
}

process.on('exit', () => {
  if (!out) return;
  for (const e of observer.takeRecords()) {
    gcMs += e.duration;
    gcCount++;
  }
  const clock = globalThis[Symbol.for('todeval.stage-clock')];
  const cpu = process.cpuUsage();
  writeFileSync(
    out,
    JSON.stringify({
      sinceStartMs: performance.now(),
      cpuUserMs: cpu.user / 1000,
      cpuSystemMs: cpu.system / 1000,
      mainThreadCpuMs: mainThreadCpuMs(),
      threads: threadCount(),
      maxRssKb: process.resourceUsage().maxRSS,
      gcMs,
      gcCount,
      stages: clock ? clock.snapshot() : null,
    }),
  );
});
