import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Fails the run when a test leaves a process or a todeval-* temp folder behind (see the file).
    globalSetup: ['./test/leaks/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // CI has two cores; model-backed suites each hold an ONNX session. A third worker because several
    // suites mostly wait (the Slurm cluster's scheduling, pip and npm installs, servers, Chromium)
    // while their child processes, not the worker, use the CPU: with two, such a suite idles a core.
    maxWorkers: 3,
    minWorkers: 1,
    reporters: ['default', './test/helpers/plain-summary-reporter.ts'],
    // Commands run by tests have no terminal, so they would print a progress line every 30 s: on a
    // loaded CI box that lands in stderr assertions. Tests of the lines set their own interval.
    env: { TODEVAL_PROGRESS_SECONDS: '86400' },
  },
});
