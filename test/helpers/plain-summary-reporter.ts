import type { Reporter } from 'vitest/reporters';
import type { RunnerTask, RunnerTestFile } from 'vitest';

/**
 * Prints the language-neutral closing line `N passed, N failed, N skipped` after vitest's own
 * summary, so CI logs state the outcome in a form any reader (human or tool) understands.
 */
export default class PlainSummaryReporter implements Reporter {
  onFinished(files: RunnerTestFile[] = []): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const visit = (task: RunnerTask): void => {
      if (task.type === 'suite') {
        task.tasks.forEach(visit);
        return;
      }
      const state = task.result?.state;
      if (task.mode === 'skip' || task.mode === 'todo') skipped++;
      else if (state === 'pass') passed++;
      else if (state === 'fail') failed++;
      else skipped++;
    };
    for (const file of files) {
      const before = failed;
      file.tasks.forEach(visit);
      // A file that failed with none of its tests failing (it failed to load, or a file-level hook
      // threw: an afterAll, the event-loop-lag monitor's verdict on its import) still counts as one.
      if (file.result?.state === 'fail' && failed === before) failed++;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
