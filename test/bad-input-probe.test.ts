import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { classify, PROBE_CASES, runProbe, tallyTable } from '../scripts/probe-bad-input.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';

// The committed bad-input probe (scripts/probe-bad-input.ts; `npm run probe:bad-input` runs all of
// it) on a few of its cases, one per kind of check: usage, an output that is a FIFO, a device,
// a corrupt run report, a record without its utterance. Each must be a clean one-line error with
// every file of its folder unchanged. The cases run the built CLI, as every other suite does (the
// tests' globalSetup builds dist/ from the current sources): through tsx each start compiled src/
// first (about 0.45 CPU-s more a case).
const SUBSET = ['unknown flag', 'score -o a FIFO', 'refs -o a character device', 'report corrupt run ("sgsacc": "oops")', 'score -i record without utterance', 'merge -o a FIFO'];

describe('bad-input probe (subset)', () => {
  it('every case is a clean error: no stack trace, no exit 0, no hang, no file changed', async () => {
    const cases = PROBE_CASES.filter((c) => SUBSET.includes(c.name));
    expect(cases.map((c) => c.name).sort()).toEqual([...SUBSET].sort());
    const results = await runProbe(cases, { model: getLexicalStandinDir(), timeoutMs: 90_000, cli: 'dist' });
    const notClean = results.filter((r) => r.outcome !== 'clean error' && r.outcome !== 'skipped');
    expect(notClean, tallyTable(results)).toEqual([]);
  }, 600_000);
});

describe('the probe tells the outcomes apart', () => {
  it('classify: a stack, an exit 0, a hang, a changed file, several lines', () => {
    const ok = { code: 2, stderr: 'todeval: f: bad\n', timedOut: false, changed: [] };
    expect(classify(ok)).toBe('clean error');
    expect(classify({ ...ok, stderr: 'error: unknown option \'--x\'\n(run with --help for usage)\n' })).toBe('clean error');
    expect(classify({ ...ok, code: 1, stderr: 'TypeError: x is not a function\n    at f (/a/b.js:1:2)\n' })).toBe('stack trace');
    expect(classify({ ...ok, code: 0, stderr: '' })).toBe('wrong exit 0');
    expect(classify({ ...ok, timedOut: true })).toBe('hang');
    expect(classify({ ...ok, changed: ['keep.json'] })).toBe('data lost');
    expect(classify({ ...ok, stderr: 'todeval: a\ntodeval: b\n' })).toBe('unclear');
  });

  it('a command that replaces an existing file of its folder is counted as data lost', async () => {
    const [r] = await runProbe(
      [{ name: 'refs over an existing file', args: (f) => ['refs', '--dataset', 'sgd', '--dialogues', f.dialogues, '--schema', f.schema, '-o', path.join(f.dir, 'keep.json')] }],
      { model: getLexicalStandinDir(), timeoutMs: 90_000, cli: 'dist' },
    );
    expect(r.outcome).toBe('data lost');
  }, 120_000);
});
