import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadCommands } from '../../src/cli/commands/index.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../../src/cli/nli-options.js';
import {
  addDatasetOptions,
  addInputOption,
  addLimitOption,
  addReportFileOption,
  addTurnsOption,
  jsonToStdout,
  datasetDataDir,
  datasetLoadOptions,
  positiveInt,
  reportFileFrom,
  reportSkipped,
  type DatasetFlags,
} from '../../src/cli/options.js';
import { SGSACC_DEFAULTS } from '../../src/metrics/sgsacc/index.js';
import { InputError } from '../../src/util/errors.js';

/** A throwaway command with the shared options, parsed without touching process.exit. */
function parse(args: string[], setup: (cmd: Command) => void): Record<string, unknown> {
  const cmd = new Command('t').exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  setup(cmd);
  cmd.parse(args, { from: 'user' });
  return cmd.opts();
}

describe('shared dataset options', () => {
  it('--dialogues and its hidden old name --input land in the same flag', () => {
    const setup = (cmd: Command) => addDatasetOptions(cmd, { defaultDataset: 'sgd' });
    expect(parse(['--dialogues', 'a.json'], setup).dialogues).toBe('a.json');
    expect(parse(['--input', 'b.json'], setup).dialogues).toBe('b.json');
  });

  it('without inputAlias, --input is not a dataset flag', () => {
    expect(() => parse(['--input', 'b.json'], (cmd) => addDatasetOptions(cmd, { defaultDataset: 'sgd', inputAlias: false }))).toThrow(CommanderError);
  });

  it('--dataset defaults to sgd everywhere (a command may name another default)', () => {
    expect(parse([], (cmd) => addDatasetOptions(cmd)).dataset).toBe('sgd');
    expect(parse([], (cmd) => addDatasetOptions(cmd, { defaultDataset: 'multiwoz' })).dataset).toBe('multiwoz');
    expect(() => parse(['--dataset', 'woz'], (cmd) => addDatasetOptions(cmd))).toThrow(CommanderError);
  });

  it('own dialogues and schema need no data dir; --data-dir is still honoured', () => {
    const own: DatasetFlags = { dataset: 'sgd', dialogues: 'd.json', schema: 's.json' };
    expect(datasetDataDir(own)).toBeUndefined();
    expect(datasetDataDir({ ...own, dataDir: 'x' })).toBe(path.resolve('x'));
    expect(datasetLoadOptions({ ...own, dataset: 'sgd', split: 'dev', skipInvalid: true }, undefined)).toEqual({
      dataset: 'sgd',
      dataDir: undefined,
      split: 'dev',
      input: 'd.json',
      schemaFile: 's.json',
      skipInvalid: true,
    });
  });
});

describe('shared report-file option', () => {
  const setup = (cmd: Command) => addReportFileOption(cmd, 'report');
  it('-o, --output and the old --json <file> all name the report file', () => {
    expect(reportFileFrom(parse(['-o', 'r.json'], setup))).toBe('r.json');
    expect(reportFileFrom(parse(['--output', 'r.json'], setup))).toBe('r.json');
    expect(reportFileFrom(parse(['--json', 'old.json'], setup))).toBe('old.json');
    expect(reportFileFrom(parse([], setup))).toBeUndefined();
  });

  it('--json alone sends the report to stdout, and names no file', () => {
    const flags = parse(['--json', '-o', 'r.json'], setup);
    expect(jsonToStdout(flags)).toBe(true);
    expect(reportFileFrom(flags)).toBe('r.json');
    expect(jsonToStdout(parse(['--json', 'old.json'], setup))).toBe(false);
    expect(jsonToStdout(parse([], setup))).toBe(false);
  });
});

describe('one grammar: -i/--input, --turns, --limit and their old names', () => {
  it('-i, --input and the hidden --predictions name the same file', () => {
    const setup = (cmd: Command) => addInputOption(cmd, 'predictions', { predictionsAlias: true });
    expect(parse(['-i', 'p.jsonl'], setup).input).toBe('p.jsonl');
    expect(parse(['--input', 'p.jsonl'], setup).input).toBe('p.jsonl');
    expect(parse(['--predictions', 'p.jsonl'], setup).input).toBe('p.jsonl');
    expect(() => parse([], (cmd) => addInputOption(cmd, 'items', { required: true }))).toThrow(/--input/);
  });

  it('--turns and the hidden --out name the same per-turn file', () => {
    const setup = (cmd: Command) => addTurnsOption(cmd, 'per-turn results');
    expect(parse(['--turns', 't.jsonl'], setup).turns).toBe('t.jsonl');
    expect(parse(['--out', 't.jsonl'], setup).turns).toBe('t.jsonl');
  });

  it('--limit takes a positive count', () => {
    const setup = (cmd: Command) => addLimitOption(cmd, 'turns');
    expect(parse(['--limit', '3'], setup).limit).toBe(3);
    expect(() => parse(['--limit', '0'], setup)).toThrow(/--limit must be a positive integer/);
  });

  it('--dtype int8 is accepted as q8', () => {
    const flags = parse(['--dtype', 'int8'], (cmd) => addNliOptions(cmd)) as NliCliFlags;
    expect(nliOptionsFrom(flags).dtype).toBe('q8');
  });
});

describe('positiveInt', () => {
  it('accepts positive integers and rejects the rest, naming the flag', () => {
    expect(positiveInt('--limit')('12')).toBe(12);
    expect(() => positiveInt('--limit')('0')).toThrow('--limit must be a positive integer');
    expect(() => positiveInt('--limit')('1.5')).toThrow('--limit must be a positive integer');
    expect(positiveInt('--show-errors', true)('0')).toBe(0);
    expect(() => positiveInt('--show-errors', true)('-1')).toThrow('--show-errors must be a non-negative integer');
  });
});

describe('reportSkipped', () => {
  afterEach(() => vi.restoreAllMocks());
  it('writes one `todeval: warning: skipped invalid <kind>:` line per item to stderr', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    reportSkipped('prediction', [new InputError('no utterance', { file: 'p.jsonl', where: 'line 3' })]);
    expect(write.mock.calls.map((c) => c[0])).toEqual(['todeval: warning: skipped invalid prediction: p.jsonl: line 3: no utterance\n']);
  });
});

const registers = await loadCommands();

describe('the registered commands use the same flag names', () => {
  const program = new Command('todeval');
  for (const register of registers) register(program);
  const help = (name: string): string => program.commands.find((c) => c.name() === name)!.helpInformation();

  it.each(['refs', 'ser', 'score', 'rerank'])('%s: own dialogues are --dialogues', (name) => {
    expect(help(name)).toContain('--dialogues <file>');
    if (name === 'refs') expect(help(name)).not.toMatch(/--input\b/); // the old alias, hidden
  });

  it.each(['ser', 'score', 'rerank', 'evaluate'])('%s: predictions/items are -i, --input <file>', (name) => {
    expect(help(name)).toContain('-i, --input <file>');
    expect(help(name)).not.toContain('--predictions');
  });

  it.each(['ser', 'score', 'rerank', 'evaluate', 'gcdf1'])('%s: -o, --output <file> writes the report, --json prints it, --limit slices', (name) => {
    expect(help(name)).toContain('-o, --output <file>');
    expect(help(name)).toMatch(/--json\b/);
    expect(help(name)).toContain('--limit <n>');
  });

  it.each(['score', 'rerank'])('%s: per-turn results are --turns <file>; --out is hidden', (name) => {
    expect(help(name)).toContain('--turns <file>');
    expect(help(name)).not.toMatch(/--out\b/);
  });
});

describe("each command's SGSAcc flags default to its product's SGSACC_DEFAULTS", () => {
  const program = new Command('todeval');
  for (const register of registers) register(program);

  // The CLI parses flags into settings that resolveSgsaccConfig completes with SGSACC_DEFAULTS; a
  // flag with a default of its own (commander's implicit true of --no-validation, a .default()) decides
  // before the table can: this fails when the two disagree, so the table stays the one source.
  it.each(['score', 'evaluate', 'serve'] as const)('%s', (name) => {
    const cmd = program.commands.find((c) => c.name() === name)!;
    const defaults = SGSACC_DEFAULTS[name];
    const keys = ['validation', 'context', 'referenceSelection', 'contextControl'] as const;
    const present = keys.filter((k) => cmd.options.some((o) => o.attributeName() === k));
    expect(present.length).toBeGreaterThanOrEqual(2);
    for (const k of present) expect(cmd.getOptionValue(k), `${name} --${k}`).toBe(defaults[k]);
  });
});
