import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT_CLI, HAS_BUILT_CLI } from './helpers/cli.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';

// `todeval stdio` (src/cli/stdio.ts), the process the Python package's warm Evaluator keeps: each
// answer must be exactly what the same command run alone prints, exit code included.

interface Answer {
  id: unknown;
  code: number;
  stdout: string;
  stderr: string;
}

/** Sends the lines to one `todeval stdio` process, closes its stdin, and returns its answers and exit code. */
function stdio(lines: string[]): Promise<{ answers: Answer[]; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BUILT_CLI, 'stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ answers: out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Answer), code });
    });
    child.stdin.end(lines.join('\n') + '\n');
  });
}

/** The same command run alone (async: a worker blocked for long misses vitest's RPC deadline). */
function oneShot(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BUILT_CLI, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe.skipIf(!HAS_BUILT_CLI || !hasData('multiwoz', 'predictions', 'damd.json'))('todeval stdio', () => {
  const dir = suiteTempDir('stdio');

  it('answers each request with what the one-shot run prints (results, warnings, errors, exit codes), in order, then exits 0', async () => {
    const all = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'predictions', 'damd.json'), 'utf8')) as Record<string, unknown[]>;
    const [first, second] = Object.keys(all);
    const good = path.join(dir, 'two.json');
    writeFileSync(good, JSON.stringify({ [first]: all[first], [second]: all[second] }));
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ [first]: all[first].slice(1) }));
    const evaluate = (file: string, ...more: string[]) => ['evaluate', '-i', file, '--json', '--bleu', '--success', '--dst', '--data-dir', DATA_DIR, ...more];
    const requests = [
      evaluate(good),
      evaluate(bad), // a one-line input error, exit 2
      evaluate(good, '--richness'), // flags of the earlier requests do not carry over, nor are they lost
      ['evaluate', '--no-such-flag'], // commander's usage error
      evaluate(good),
    ];
    const { answers, code } = await stdio([...requests.map((args, i) => JSON.stringify({ id: `r${i}`, args })), '{"id": 7, "args": ["serve"]}', 'not json']);
    expect(code).toBe(0);
    expect(answers.map((a) => a.id)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 7, null]);
    for (const [i, args] of requests.entries()) {
      const alone = await oneShot(args);
      expect({ code: answers[i].code, stdout: answers[i].stdout, stderr: answers[i].stderr }, args.join(' ')).toEqual(alone);
    }
    expect(answers[1].code).toBe(2);
    expect(answers[2].stdout).toContain('"richness"');
    expect(answers[4].stdout).toBe(answers[0].stdout);
    expect(answers[5]).toEqual({ id: 7, code: 2, stdout: '', stderr: 'todeval: stdio: args[0] must be one of evaluate, compare, got "serve"\n' });
    expect(answers[6].code).toBe(2);
    expect(answers[6].stderr).toMatch(/^todeval: stdio: not JSON: /);
  }, 300_000);
});
