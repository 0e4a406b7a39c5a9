/**
 * What a pipeline tells its caller besides its result, as callbacks: a library pipeline never
 * writes to stdout or stderr itself. The CLI prints each kind as one stderr line
 * (src/cli/hooks.ts); a program may collect them, show them elsewhere or ignore them.
 */
export interface PipelineHooks {
  /** Something likely wrong that did not stop the run (the CLI prefixes `todeval: warning: `). */
  warn?(message: string): void;
  /** Something the user should know that is not wrong (the CLI prefixes `todeval: `). */
  notice?(message: string): void;
  /** Invalid records left out under `skipInvalid`, one line each: dialogues/turns (`input`) or predictions. */
  skipped?(kind: 'input' | 'prediction', errors: readonly { oneLine(): string }[]): void;
}
