// Preloaded (node --import) into the todeval commands of the Slurm test's array tasks. In the task
// named by TODEVAL_TEST_GATE_TASK, on its first run only (SLURM_RESTART_COUNT unset or 0), the
// first append to a .turns.jsonl file is made and then the process holds still, after writing its
// pid to TODEVAL_TEST_GATE_FILE, until it is killed: the test then requeues the task knowing it is
// mid-run with some turns saved, whatever the machine's speed. The rerun is not held.
// Plain JavaScript: it must load in the built CLI as well as under tsx.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const task = process.env.TODEVAL_TEST_GATE_TASK;
const gateFile = process.env.TODEVAL_TEST_GATE_FILE;
const firstRun = (process.env.SLURM_RESTART_COUNT ?? '0') === '0';
if (task !== undefined && gateFile && process.env.SLURM_ARRAY_TASK_ID === task && firstRun) {
  const append = fs.appendFileSync;
  fs.appendFileSync = function gatedAppend(file, ...rest) {
    append.call(fs, file, ...rest);
    if (String(file).endsWith('.turns.jsonl')) {
      fs.writeFileSync(gateFile, `${process.pid}\n`);
      // A real run ends within a second of Slurm's SIGTERM (its handler runs on the event loop),
      // but this one holds the loop still, so the handler could never run: with no listener left,
      // the signal takes its default action and ends the process at once, as the real run would
      // end. Left alive, it outlived its step (proctrack/linuxproc loses an orphan) and still held
      // the shard's run lock when the requeued task started.
      for (const signal of ['SIGTERM', 'SIGINT']) process.removeAllListeners(signal);
      const cell = new Int32Array(new SharedArrayBuffer(4));
      for (;;) Atomics.wait(cell, 0, 0, 1000);
    }
  };
  // The CLI imports appendFileSync by name: make the ESM bindings see the patched function.
  syncBuiltinESMExports();
}
