import { Command } from 'commander';
import { vi } from 'vitest';
import { loadCommands } from '../../src/cli/commands/index.js';
import { releaseRunLocks } from '../../src/util/run-lock.js';

/**
 * `todeval ARGS` parsed and run inside the test process by the same commander program the CLI
 * builds: the real flag parsing and command code, without a process start per run (the sharding
 * tests run dozens of short commands). stdout is captured and returned; errors are thrown as the
 * command throws them (the CLI turns an InputError into one line and exit 2: tested through the
 * real CLI separately).
 */
export async function runInProcess(args: string[]): Promise<string> {
  const program = new Command('todeval').exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  for (const register of await loadCommands()) register(program);
  let out = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await program.parseAsync(['node', 'todeval', ...args]);
  } finally {
    write.mockRestore();
    // A process holds its run's locks until it exits; the test process goes on, as a CLI run would not.
    releaseRunLocks();
  }
  return out;
}
