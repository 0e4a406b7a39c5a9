import { spawn } from 'node:child_process';
import { afterAll } from 'vitest';

// Imported by test files only (it registers a hook): each test file gets its own copy.
const live = new Set<number>();

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
  live.delete(pid);
}

// A test that fails or times out never reaches its own cleanup: whatever it started still runs here.
afterAll(() => {
  for (const pid of [...live]) killGroup(pid);
});

export interface GroupResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command in its own process group (detached), so a timeout or a failing test kills it and
 * everything it started (a shell script's node children, their ONNX sessions), not only the direct
 * child as execFile's `timeout` does. Rejects on a non-zero exit or when `timeoutMs` passes, with
 * the tail of both streams in the message.
 */
export function runInGroup(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<GroupResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid!;
    live.add(pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(pid);
    }, opts.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      killGroup(pid);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      // The shell may have exited with children left behind (a phase still running): none survive.
      killGroup(pid);
      const tail = `\n--- stdout (tail)\n${stdout.slice(-3000)}\n--- stderr (tail)\n${stderr.slice(-3000)}`;
      if (timedOut) reject(new Error(`${cmd} ${args.join(' ')}: killed after ${opts.timeoutMs} ms${tail}`));
      else if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')}: exit ${code}${tail}`));
      else resolve({ code, stdout, stderr });
    });
  });
}
