/**
 * A `--workers` shard process (started by runWorkers, src/shard/workers.ts): its one argument is
 * the shard's job (JSON, src/pipeline/workers.ts ShardJob), which it runs and ends. It reports
 * progress to its parent over IPC, writes its warnings and its error as `todeval: ` lines on
 * stderr (the parent repeats them, and the last error line is why the shard failed), saves what
 * it finished and exits on SIGTERM/SIGINT, and ends when its parent goes away.
 */
import { exitWithParent } from '../util/progress/worker-ipc.js';
import { failureOf } from '../util/failure.js';
import { exitOnSignals, setResumeCommand } from '../util/interrupt-notice.js';
import { holdRunLocks } from '../util/run-lock.js';
import { runShardJob, type ShardJob } from './workers.js';

function fail(e: unknown): never {
  const { line, code } = failureOf(e);
  process.stderr.write(`${line}\n`);
  process.exit(code);
}

exitOnSignals();
exitWithParent();
// A write stream's 'error' is raised outside the job's promise: one line, as any other failure.
process.on('uncaughtException', fail);

try {
  const job = JSON.parse(process.argv[2] ?? '') as ShardJob;
  setResumeCommand(job.resume);
  // One writer per shard file, as a run from the command line holds its own (src/util/run-lock.ts).
  holdRunLocks([job.product === 'score' ? job.options.turnsFile : job.options.itemsFile, job.options.reportFile]);
  await runShardJob(job);
  // A signal from the last synchronous stretch is still pending: one more turn dispatches it (as src/cli/main.ts).
  await new Promise((resolve) => setImmediate(resolve));
} catch (e) {
  fail(e);
}
