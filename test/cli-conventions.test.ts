import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { loadCommands } from '../src/cli/commands/index.js';
import { BUILT_CLI, HAS_BUILT_CLI, runBuiltCli, runProcess } from './helpers/cli.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';

const SCHEMA = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'schema.json');
const DIALOGUES = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'dialogues.json');
const tmp = tempDir('conventions');

// The built CLI, as users run it: the unified flag names and their hidden old names must behave alike.
const todeval = (...args: string[]) => runBuiltCli(args, tmp);

describe.skipIf(!HAS_BUILT_CLI)('CLI conventions', () => {
  it('refs: --dialogues and the old --input read the same dialogues', async () => {
    const now = await todeval('refs', '--dialogues', DIALOGUES, '--schema', SCHEMA);
    const old = await todeval('refs', '--input', DIALOGUES, '--schema', SCHEMA);
    expect(now.code).toBe(0);
    expect(now.stdout.split('\n').length).toBeGreaterThan(10);
    expect(old).toEqual(now);
  });

  it('ser: -o and the old --json <file> write the same report; --json alone prints it', async () => {
    const a = path.join(tmp, 'a.json');
    const b = path.join(tmp, 'b.json');
    const now = await todeval('ser', '--dataset', 'sgd', '--dialogues', DIALOGUES, '--schema', SCHEMA, '-o', a);
    const old = await todeval('ser', '--dataset', 'sgd', '--dialogues', DIALOGUES, '--schema', SCHEMA, '--json', b);
    expect(now.code).toBe(0);
    expect(old.stdout).toBe(now.stdout);
    const report = JSON.parse(readFileSync(a, 'utf8')) as { signatureText: string; report: { turnsScored: number } };
    expect(report.report.turnsScored).toBe(9);
    expect(readFileSync(b, 'utf8')).toBe(readFileSync(a, 'utf8'));
    const json = await todeval('ser', '--dialogues', DIALOGUES, '--schema', SCHEMA, '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(report);
  });

  it('ser: -i, --input, the old --predictions and stdin (-i -) read the same predictions', async () => {
    const preds = path.join(tmp, 'preds.jsonl');
    const refs = await todeval('refs', '--dialogues', DIALOGUES, '--schema', SCHEMA);
    const ids = [...new Set(refs.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id))];
    writeFileSync(preds, ids.map((id) => JSON.stringify({ id, utterance: 'Sure.' })).join('\n') + '\n');
    const own = ['ser', '--dialogues', DIALOGUES, '--schema', SCHEMA, '--json'];
    const a = await todeval(...own, '-i', preds);
    expect(a.code).toBe(0);
    expect((await todeval(...own, '--predictions', preds)).stdout).toBe(a.stdout);
    const viaStdin = await runProcess(process.execPath, [BUILT_CLI, ...own, '-i', '-'], { input: readFileSync(preds), cwd: tmp });
    expect(viaStdin.code).toBe(0);
    const parsed = (out: string) => JSON.parse(out) as { report: unknown; signature: { predictions: string } };
    expect(parsed(viaStdin.stdout).report).toEqual(parsed(a.stdout).report);
    expect(parsed(viaStdin.stdout).signature.predictions.split('@')[1]).toBe(parsed(a.stdout).signature.predictions.split('@')[1]);
  });

  it('refs: -o and the old --out write the same references; --limit slices', async () => {
    const a = path.join(tmp, 'refs-a.jsonl');
    const b = path.join(tmp, 'refs-b.jsonl');
    expect((await todeval('refs', '--dialogues', DIALOGUES, '--schema', SCHEMA, '-o', a, '--limit', '2')).code).toBe(0);
    expect((await todeval('refs', '--dialogues', DIALOGUES, '--schema', SCHEMA, '--out', b, '--limit', '2')).code).toBe(0);
    expect(readFileSync(b, 'utf8')).toBe(readFileSync(a, 'utf8'));
    const all = (await todeval('refs', '--dialogues', DIALOGUES, '--schema', SCHEMA)).stdout.trim().split('\n');
    expect(readFileSync(a, 'utf8').trim().split('\n').length).toBeLessThan(all.length);
  });

  it('an unknown dataset flag value is a usage error (exit 2), not a crash', async () => {
    const r = await todeval('ser', '--dataset', 'woz', '--dialogues', DIALOGUES, '--schema', SCHEMA);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--dataset/);
  });

  it.skipIf(!hasData('multiwoz', 'predictions', 'augpt.json'))(
    'evaluate --skip-invalid lists dropped dialogues in the shared `skipped invalid input` form',
    async () => {
      const all = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'predictions', 'augpt.json'), 'utf8')) as Record<string, unknown[]>;
      const [first, second] = Object.keys(all);
      const file = path.join(tmp, 'mixed.json');
      writeFileSync(file, JSON.stringify({ [first]: all[first], [second]: all[second].slice(1), not_a_dialogue: [{ response: 'hi' }] }));
      const r = await todeval('evaluate', '-i', file, '--data-dir', DATA_DIR, '--skip-invalid', '--bleu');
      expect(r.code).toBe(0);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toBe(`todeval: warning: skipped invalid input: ${file}: ${second}: expected ${all[second].length} system turns, got ${all[second].length - 1}`);
      expect(lines[1]).toMatch(new RegExp(`^todeval: warning: skipped invalid input: ${file}: .*not_a_dialogue`));
    },
  );
});

/** Rows of docs/cli-conventions.md's flag table: the flags of the first cell, the commands of the last. */
function conventionRows(): { flags: string[]; commands: string[] }[] {
  const text = readFileSync(path.join(REPO_ROOT, 'docs', 'cli-conventions.md'), 'utf8');
  const table = text.slice(text.indexOf('### Flags'), text.indexOf('###', text.indexOf('### Flags') + 5));
  return table
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => {
      const cells = l.split(/(?<!\\)\|/).map((c) => c.trim());
      const flags = [...cells[1].matchAll(/(?:^|[\s`,(])(--?[a-zA-Z][a-z-]*)/g)].map((m) => m[1]);
      const last = cells[cells.length - 2];
      const commands = last === 'all' ? ['all'] : [...last.matchAll(/`([a-z][a-z0-9 -]*)`/g)].map((m) => m[1]);
      return { flags, commands };
    });
}

/** Every (sub)command with its full name ('models pull') and the flags its --help lists. */
async function helpFlags(): Promise<{ command: string; flags: string[] }[]> {
  const program = new Command('todeval');
  for (const register of await loadCommands()) register(program);
  const out: { command: string; flags: string[] }[] = [];
  const walk = (cmd: Command, prefix: string): void => {
    for (const sub of cmd.commands) {
      const name = `${prefix}${sub.name()}`;
      if (sub.commands.length > 0) walk(sub, `${name} `);
      else {
        const options = sub.helpInformation().split(/\nOptions:\n/)[1] ?? '';
        const flags = [...options.matchAll(/^ {2}(?:(-[a-zA-Z]), )?(--[a-z][a-z-]*)/gm)].flatMap((m) => (m[1] ? [m[1], m[2]] : [m[2]]));
        out.push({ command: name, flags });
      }
    }
  };
  walk(program, '');
  return out;
}

const commandsHelp = await helpFlags();

describe('docs/cli-conventions.md is the one table of flags', () => {
  const rows = conventionRows();

  it('the table and the command list are read (a parsing slip would pass everything)', () => {
    expect(rows.length).toBeGreaterThan(20);
    expect(commandsHelp.map((c) => c.command)).toEqual(expect.arrayContaining(['refs', 'score', 'models pull', 'data pull', 'gcdf1']));
    expect(commandsHelp.find((c) => c.command === 'score')!.flags).toEqual(expect.arrayContaining(['-i', '--input', '--turns', '--json', '--limit']));
  });

  it('every flag in every --help is in the table, in a row that lists the command', () => {
    const problems: string[] = [];
    for (const { command, flags } of commandsHelp) {
      for (const flag of flags) {
        const matching = rows.filter((r) => r.flags.includes(flag));
        if (matching.length === 0) problems.push(`${command} ${flag}: not in the table`);
        else if (!matching.some((r) => r.commands.includes('all') || r.commands.includes(command))) {
          problems.push(`${command} ${flag}: its row does not list \`${command}\``);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
