import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // CI has two cores; model-backed suites each hold an ONNX session.
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ['default', './test/helpers/plain-summary-reporter.ts'],
  },
});
