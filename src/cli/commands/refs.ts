import { Option, type Command } from 'commander';
import type { DatasetName } from '../../adapters/load.js';
import { runRefsPipeline } from '../../pipeline/refs.js';
import { formatRefsSummary } from '../../report/text/refs-text.js';
import { stderrHooks } from '../hooks.js';
import { addDatasetOptions, addLimitOption, datasetDataDir, datasetLoadOptions, type DatasetFlags } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';

interface RefsFlags extends DatasetFlags {
  output?: string;
  summary?: boolean;
  limit?: number;
}

export function register(program: Command): void {
  const cmd = program
    .command('refs')
    .description('expand every system action into candidate and negative references (JSONL, one line per action)');
  addDatasetOptions(cmd, {
    defaultDataset: 'sgd',
    datasetHelp: 'dataset format',
    dialoguesHelp: 'your own dialogues (SGD file/folder, ConvLab file, or generic JSONL) instead of the data dir',
    schemaHelp: 'schema for --dialogues (SGD or MultiWOZ 2.2 format)',
  })
    .option('-o, --output <file>', 'write the references here (JSONL, one line per action) and the signature to <file>.signature.json')
    .addOption(new Option('--out <file>', 'old name of --output').hideHelp())
    .option('--summary', 'print per-act coverage instead of the references');
  cmd.on('option:out', (file: string) => cmd.setOptionValueWithSource('output', file, 'cli'));
  addLimitOption(cmd, 'system turns')
    .action(async (flags: RefsFlags) => {
      await runRefs(flags);
    });
}

/** Flags -> the refs pipeline -> the references (JSONL) or the coverage summary on stdout. */
async function runRefs(flags: RefsFlags): Promise<void> {
  refuseOutputOverInput(
    { '-o/--output': flags.output, '-o/--output signature': flags.output && `${flags.output}.signature.json` },
    { '--dialogues': flags.dialogues, '--schema': flags.schema },
  );
  const dataset: DatasetName = flags.dataset ?? 'sgd';
  const result = await runRefsPipeline({
    ...datasetLoadOptions({ ...flags, dataset }, datasetDataDir(flags)),
    limit: flags.limit,
    output: flags.output,
    // The references go to stdout when they are neither written to a file nor summarised.
    write: !flags.output && !flags.summary ? writeStdout : undefined,
    hooks: stderrHooks,
  });
  if (flags.summary) process.stdout.write(formatRefsSummary(result));
}

/** stdout with its backpressure: waits for 'drain' when the pipe is full (`todeval refs | slow-reader`). */
async function writeStdout(text: string): Promise<void> {
  if (!process.stdout.write(text)) await new Promise<void>((r) => process.stdout.once('drain', () => r()));
}
