import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGV, runCli, runProcess } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { suiteTempDir } from './helpers/temp.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';

// Issue 42: the same `score` twice at once on one -o: both exited 0 and the per-turn and references
// files held every turn twice. Now the second is refused in one line naming the first one's PID,
// and a lock left by a process that is gone is taken over (resume after SIGKILL still works).
const SGD_FILE = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 40;

const lines = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '') : []);

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))('one writer per run (lexical stand-in, SGD slice)', () => {
  const dir = suiteTempDir('onewriter');
  const f = (name: string) => path.join(dir, name);
  let model = '';
  const args = (name: string) => [
    'score', '--dataset', 'sgd', '--data-dir', DATA_DIR, '--dialogues', SGD_FILE, '--limit', String(LIMIT), '--chunk', '2',
    '--model', model, '--device', 'cpu', '--threads', '1', '--progress', 'none', '--turns', f(`${name}.turns.jsonl`), '-o', f(`${name}.json`),
  ];

  beforeAll(() => {
    model = getLexicalStandinDir();
  });

  it('two concurrent scores on one -o: the second is refused naming the first one\'s PID; every turn is saved once', async () => {
    const first = spawn(process.execPath, [...CLI_ARGV, ...args('run')], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let firstErr = '';
    first.stderr.setEncoding('utf8').on('data', (d: string) => (firstErr += d));
    const firstExit = new Promise<number | null>((resolve) => first.once('exit', (code) => resolve(code)));
    try {
      // The first run is writing turns: it holds the lock now. Paused (SIGSTOP) while the second
      // starts, so the two overlap whatever the machine's speed; resumed (SIGCONT) after.
      while (first.exitCode === null && lines(f('run.turns.jsonl')).length < 3) await new Promise((r) => setTimeout(r, 10));
      first.kill('SIGSTOP');
      const second = await runCli(args('run')).finally(() => first.kill('SIGCONT'));
      expect(second.code).toBe(2);
      const lock = `${f('run.turns.jsonl')}.lock`;
      expect(second.stderr).toMatch(
        new RegExp(`^todeval: ${f('run.turns.jsonl').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: in use by another todeval run \\(PID ${first.pid}, started [^)]+\\); wait for it to finish or stop it \\(its lock: .*${path.basename(lock)}\\)\\n$`),
      );
    } finally {
      first.kill('SIGCONT');
      if (first.exitCode === null) await firstExit;
    }
    expect(await firstExit).toBe(0);
    expect(firstErr).toBe('');
    const turns = lines(f('run.turns.jsonl')).slice(1).map((l) => (JSON.parse(l) as { id: string }).id);
    expect(turns).toHaveLength(LIMIT);
    expect(new Set(turns).size).toBe(LIMIT);
    expect(lines(f('run.turns.references.jsonl'))).toHaveLength(LIMIT + 1);
    // Released at exit: nothing left beside the outputs.
    expect(existsSync(`${f('run.turns.jsonl')}.lock`)).toBe(false);
    expect(existsSync(`${f('run.json')}.lock`)).toBe(false);
  }, 180_000);

  it('a lock whose process is gone (SIGKILL) is taken over: the run goes on', async () => {
    const dead = await runProcess(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const pid = Number(dead.stdout);
    for (const out of ['stale.turns.jsonl', 'stale.json']) {
      writeFileSync(f(`${out}.lock`), `${JSON.stringify({ pid, host: hostname(), started: new Date().toISOString() })}\n`);
    }
    const r = await runCli(args('stale').map((a) => (a === String(LIMIT) ? '4' : a)));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(lines(f('stale.turns.jsonl'))).toHaveLength(5);
    expect(existsSync(f('stale.turns.jsonl.lock'))).toBe(false);
  }, 120_000);
});
