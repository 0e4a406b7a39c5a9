// The rest of a newcomer's list (issue 21): each case is what a first run of the CLI met, run the
// way the newcomer ran it, and failed before its fix.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { hasShared, REPO_ROOT } from './helpers/shared.js';

const dir = mkdtempSync(path.join(tmpdir(), 'todeval-newcomer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const f = (name: string) => path.join(dir, name);
const MINI = path.join(REPO_ROOT, 'examples', 'sgd-mini');
const miniData = ['--dataset', 'sgd', '--dialogues', path.join(MINI, 'dialogues.json'), '--schema', path.join(MINI, 'schema.json')];

/** Bad input: exit 2, exactly one line on stderr, and that line. */
function oneLine(r: CliResult, line: string | RegExp): void {
  expect(r.stderr.split('\n').filter((l) => l !== '' && !/CUDA execution provider/.test(l))).toEqual([expect.stringMatching(line)]);
  expect(r.code).toBe(2);
}

describe('--allow-missing with predictions that match no turn', () => {
  writeFileSync(f('nomatch.jsonl'), ['{"id": "mini_009/1", "utterance": "Hi."}', '{"id": "mini_001:1", "utterance": "Yes."}'].join('\n') + '\n');
  const refused = `todeval: ${f('nomatch.jsonl')}: no prediction matches a turn of sgd:`;

  it('ser: one line, exit 2 (was: a report over 0 turns, exit 0)', async () => {
    oneLine(await runCli(['ser', ...miniData, '-i', f('nomatch.jsonl'), '--allow-missing']), refused);
  });

  it.skipIf(!hasShared('models', 'roberta-large-mnli', 'tokenizer.json'))('score: one line, exit 2, and no report (was: a 0-turn report, exit 0)', async () => {
    const r = await runCli(['score', ...miniData, '-i', f('nomatch.jsonl'), '--allow-missing', '--model', getLexicalStandinDir(), '--device', 'cpu', '-o', f('nomatch.json')]);
    oneLine(r, refused);
    expect(r.stdout).toBe('');
  }, 60_000);
});
