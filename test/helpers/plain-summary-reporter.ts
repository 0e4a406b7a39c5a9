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
      file.tasks.forEach(visit);
      // a file that failed to load has no tests but must still count as a failure
      if (file.result?.state === 'fail' && file.tasks.length === 0) failed++;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
