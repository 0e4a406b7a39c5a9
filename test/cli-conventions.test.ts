import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAS_BUILT_CLI, runBuiltCli } from './helpers/cli.js';
import { hasShared, REPO_ROOT, SHARED_DATA } from './helpers/shared.js';

const SCHEMA = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'schema.json');
const DIALOGUES = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'dialogues.json');
const tmp = mkdtempSync(path.join(tmpdir(), 'todeval-conventions-'));

// The built CLI, as users run it: the unified flag names and their hidden old names must behave alike.
const todeval = (...args: string[]) => runBuiltCli(args, tmp);

describe.skipIf(!HAS_BUILT_CLI)('CLI conventions', () => {
  it('refs: --dialogues and the old --input read the same dialogues', () => {
    const now = todeval('refs', '--dialogues', DIALOGUES, '--schema', SCHEMA);
    const old = todeval('refs', '--input', DIALOGUES, '--schema', SCHEMA);
    expect(now.code).toBe(0);
    expect(now.stdout.split('\n').length).toBeGreaterThan(10);
    expect(old).toEqual(now);
  });

  it('ser: -o and the old --json <file> write the same report', () => {
    const a = path.join(tmp, 'a.json');
    const b = path.join(tmp, 'b.json');
    const now = todeval('ser', '--dataset', 'sgd', '--dialogues', DIALOGUES, '--schema', SCHEMA, '-o', a);
    const old = todeval('ser', '--dataset', 'sgd', '--input', DIALOGUES, '--schema', SCHEMA, '--json', b);
    expect(now.code).toBe(0);
    expect(old.stdout).toBe(now.stdout);
    const report = JSON.parse(readFileSync(a, 'utf8')) as { signatureText: string; report: { turnsScored: number } };
    expect(report.report.turnsScored).toBe(9);
    expect(readFileSync(b, 'utf8')).toBe(readFileSync(a, 'utf8'));
  });

  it('an unknown dataset flag value is a usage error (exit 2), not a crash', () => {
    const r = todeval('ser', '--dataset', 'woz', '--dialogues', DIALOGUES, '--schema', SCHEMA);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--dataset/);
  });

  it.skipIf(!hasShared('data', 'multiwoz', 'predictions', 'augpt.json'))(
    'evaluate --skip-invalid lists dropped dialogues in the shared `skipped invalid input` form',
    () => {
      const all = JSON.parse(readFileSync(path.join(SHARED_DATA, 'multiwoz', 'predictions', 'augpt.json'), 'utf8')) as Record<string, unknown[]>;
      const [first, second] = Object.keys(all);
      const file = path.join(tmp, 'mixed.json');
      writeFileSync(file, JSON.stringify({ [first]: all[first], [second]: all[second].slice(1), not_a_dialogue: [{ response: 'hi' }] }));
      const r = todeval('evaluate', '-i', file, '--data-dir', SHARED_DATA, '--skip-invalid', '--bleu');
      expect(r.code).toBe(0);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toBe(`todeval: skipped invalid input: ${file}: ${second}: expected ${all[second].length} system turns, got ${all[second].length - 1}`);
      expect(lines[1]).toMatch(new RegExp(`^todeval: skipped invalid input: ${file}: .*not_a_dialogue`));
    },
  );
});
