import { isIP } from 'node:net';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { DatasetName, LoadDatasetOptions } from '../adapters/load.js';
import { resolveDataDir } from '../data/data-dir.js';
import { RANK_BY, type RankBy } from '../rerank/rank-by.js';
import { InputError } from '../util/errors.js';

/** Commander parser for a count flag; `allowZero` for counts where 0 means "none" (--show-errors 0). */
export function positiveInt(flag: string, allowZero = false) {
  return (v: string): number => {
    // Decimal digits only: Number() would also take '0x10', '1e3' and ' 7 ' without a word.
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < (allowZero ? 0 : 1)) {
      throw new InvalidArgumentError(`${flag} must be a ${allowZero ? 'non-negative' : 'positive'} integer`);
    }
    return n;
  };
}

/**
 * Commander parser for a count with a hard ceiling the flag's use imposes (a timer Node can keep, a
 * string JSON.parse can read): `why` says where the ceiling comes from.
 */
export function boundedInt(flag: string, max: number, why: string) {
  const parse = positiveInt(flag);
  return (v: string): number => {
    const n = parse(v);
    if (n > max) throw new InvalidArgumentError(`${flag} must be at most ${max} (${why})`);
    return n;
  };
}

/** Commander parser for --port: a TCP port, 0 for any free one. */
export function portNumber(flag: string) {
  return (v: string): number => {
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n > 65535) throw new InvalidArgumentError(`${flag} must be a port number from 0 to 65535 (0: any free port)`);
    return n;
  };
}

/**
 * Commander parser for --host: an IP address or a host name (RFC 1123 labels). Whether it resolves
 * and is an address of this machine is found by binding, before the model loads (serve).
 */
export function hostName(flag: string) {
  const label = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
  const name = new RegExp(`^(?=.{1,253}\\.?$)${label}(?:\\.${label})*\\.?$`);
  return (v: string): string => {
    if (isIP(v) === 0 && !name.test(v)) throw new InvalidArgumentError(`${flag} must be an IP address or a host name`);
    return v;
  };
}

/** The splits of the datasets todeval reads from the data dir (SGD has all three; MultiWOZ ships test). */
export const SPLITS = ['train', 'dev', 'test'] as const;

function splitName(v: string): string {
  if (!(SPLITS as readonly string[]).includes(v)) throw new InvalidArgumentError(`--split must be ${SPLITS.slice(0, -1).join(', ')} or ${SPLITS.at(-1)}`);
  return v;
}

/** --data-dir, with the lookup order resolveDataDir/findDataDir follow when it is absent. */
export function addDataDirOption(cmd: Command): Command {
  return cmd.option('--data-dir <dir>', 'data directory (default: $TODEVAL_DATA, ./data, ../shared/data)');
}

/** The flags addDatasetOptions declares: where the dialogues come from (refs, ser, score, rerank). */
export interface DatasetFlags {
  dataset?: DatasetName;
  dataDir?: string;
  split?: string;
  dialogues?: string;
  schema?: string;
  skipInvalid?: boolean;
}

/** Every dataset command defaults --dataset the same way (shown in --help). */
export const DEFAULT_DATASET: DatasetName = 'sgd';

export interface DatasetOptionsConfig {
  /** The default dataset (DEFAULT_DATASET unless a command has a reason to differ). */
  defaultDataset?: DatasetName;
  datasetHelp?: string;
  splitHelp?: string;
  dialoguesHelp?: string;
  schemaHelp?: string;
  skipInvalidHelp?: string;
  /**
   * Accept the old `--input <file>` for --dialogues, hidden from help. Off where --input means
   * something else (rerank's items).
   */
  inputAlias?: boolean;
}

/** --dataset, --data-dir, --split, --dialogues, --schema, --skip-invalid, worded alike everywhere. */
export function addDatasetOptions(cmd: Command, config: DatasetOptionsConfig = {}): Command {
  const dataset = new Option('--dataset <name>', config.datasetHelp ?? 'dataset the turns come from')
    .choices(['sgd', 'multiwoz', 'generic'])
    .default(config.defaultDataset ?? DEFAULT_DATASET);
  addDataDirOption(cmd.addOption(dataset))
    .option('--split <split>', config.splitHelp ?? `dataset split: ${SPLITS.join(', ')}`, splitName, 'test')
    .option('--dialogues <file>', config.dialoguesHelp ?? 'your own dialogues file/folder instead of the data dir')
    .option('--schema <file>', config.schemaHelp ?? 'schema for --dialogues')
    .option('--skip-invalid', config.skipInvalidHelp ?? 'list invalid dialogues/turns on stderr and go on');
  if (config.inputAlias !== false) {
    cmd.addOption(new Option('--input <file>', 'old name of --dialogues').hideHelp());
    cmd.on('option:input', (file: string) => cmd.setOptionValueWithSource('dialogues', file, 'cli'));
  }
  return cmd;
}

/**
 * The data dir a dataset command needs: none when the user gave both their own dialogues and
 * schema and no --data-dir (nothing is read from it then), else resolveDataDir's answer.
 */
export function datasetDataDir(flags: DatasetFlags): string | undefined {
  const ownData = flags.dialogues !== undefined && flags.schema !== undefined;
  return ownData && !flags.dataDir ? undefined : resolveDataDir(flags.dataDir).dir;
}

/** The adapter's load options for these flags (the caller decides the data dir). */
export function datasetLoadOptions(flags: DatasetFlags & { dataset: DatasetName }, dataDir: string | undefined): Omit<LoadDatasetOptions, 'limit'> {
  return {
    dataset: flags.dataset,
    dataDir,
    split: flags.split,
    input: flags.dialogues,
    schemaFile: flags.schema,
    skipInvalid: flags.skipInvalid,
  };
}

/**
 * The report flags of every command that has a report: `-o, --output <file>` writes it as JSON,
 * `--json` prints it as JSON on stdout instead of the tables. `--json <file>` (its earlier spelling
 * in ser, score and rerank) still names the report file, so the value is optional.
 */
export function addReportFileOption(cmd: Command, help: string): Command {
  return cmd
    .option('-o, --output <file>', help)
    .option('--json [file]', 'print the report as JSON on stdout instead of the tables');
}

/** The report file of addReportFileOption: --output, else the old `--json <file>`. */
export function reportFileFrom(flags: { output?: string; json?: string | boolean }): string | undefined {
  return flags.output ?? (typeof flags.json === 'string' ? flags.json : undefined);
}

/** True when the report goes to stdout as JSON (`--json` without a file). */
export function jsonToStdout(flags: { json?: string | boolean }): boolean {
  return flags.json === true;
}

/**
 * `-i, --input <file>`: the command's own input records (predictions, items), `-` for stdin.
 * `--predictions <file>`, the earlier name in ser and score, lands in the same flag, hidden.
 */
export function addInputOption(cmd: Command, help: string, opts: { required?: boolean; predictionsAlias?: boolean } = {}): Command {
  const input = new Option('-i, --input <file>', `${help}; - reads stdin`);
  if (opts.required) input.makeOptionMandatory();
  cmd.addOption(input);
  if (opts.predictionsAlias) {
    cmd.addOption(new Option('--predictions <file>', 'old name of --input').hideHelp());
    cmd.on('option:predictions', (file: string) => cmd.setOptionValueWithSource('input', file, 'cli'));
  }
  return cmd;
}

/** `--turns <file>`: per-turn (per-item) results as JSONL, appended as they finish; re-running resumes. `--out` is its old name. */
export function addTurnsOption(cmd: Command, help: string): Command {
  cmd.option('--turns <file>', help).addOption(new Option('--out <file>', 'old name of --turns').hideHelp());
  cmd.on('option:out', (file: string) => cmd.setOptionValueWithSource('turns', file, 'cli'));
  return cmd;
}

/** `--limit <n>` for every command that walks a dataset or an input file. */
export function addLimitOption(cmd: Command, what: string): Command {
  return cmd.option('--limit <n>', `only the first N ${what}`, positiveInt('--limit'));
}

/**
 * What --skip-invalid dropped, one stderr line each, worded the same by every command:
 * `todeval: warning: skipped invalid <kind>: <file>: <where>: <message>` (a warning line, as tools reading
 * stderr, the Python package included, pick warnings out by that prefix).
 */
export function reportSkipped(kind: 'input' | 'prediction' | 'item', errors: readonly Pick<InputError, 'oneLine'>[]): void {
  for (const e of errors) process.stderr.write(`todeval: warning: skipped invalid ${kind}: ${e.oneLine()}\n`);
}

/** --rank-by (rerank, serve): one of RANK_BY, refused in one line otherwise. */
export function rankByFrom(value: string): RankBy {
  if (!(RANK_BY as readonly string[]).includes(value)) throw new InputError(`--rank-by must be one of ${RANK_BY.join(', ')} (got "${value}")`);
  return value as RankBy;
}
