import type { PipelineHooks } from '../pipeline/hooks.js';
import { reportSkipped } from './options.js';

/** A pipeline's warnings, notices and skipped records as the CLI prints them: one stderr line each. */
export const stderrHooks: Required<PipelineHooks> = {
  warn: (message) => process.stderr.write(`todeval: warning: ${message}\n`),
  notice: (message) => process.stderr.write(`todeval: ${message}\n`),
  skipped: (kind, errors) => reportSkipped(kind, errors),
};
