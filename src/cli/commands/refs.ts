import { AtomicFile, writeJsonAtomic } from '../../util/atomic-write.js';
import { Option, type Command } from 'commander';
import { loadDataset, type DatasetName, type LoadedDataset } from '../../adapters/load.js';
import { formatSignature, makeSignature, type Signature } from '../../util/signature.js';
import { Expander } from '../../rules/expand.js';
import { loadRules } from '../../rules/load.js';
import type { ActionReferences, RuleSet } from '../../rules/types.js';
import { buildValueIndex } from '../../rules/value-index.js';
import { addDatasetOptions, addLimitOption, datasetDataDir, datasetLoadOptions, reportSkipped, type DatasetFlags } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';

interface RefsFlags extends DatasetFlags {
  output?: string;
  summary?: boolean;
  limit?: number;
}

/** Per-act coverage: what --summary prints and what `refs` checks the rules against. */
export interface ActCoverage {
  actions: number;
  withTwoCandidates: number;
  withoutRule: number;
  withNegatives: number;
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

export async function runRefs(flags: RefsFlags): Promise<void> {
  refuseOutputOverInput(
    { '-o/--output': flags.output, '-o/--output signature': flags.output && `${flags.output}.signature.json` },
    { '--dialogues': flags.dialogues, '--schema': flags.schema },
  );
  const dataset: DatasetName = flags.dataset ?? 'sgd';
  const loaded = loadDataset(datasetLoadOptions({ ...flags, dataset }, datasetDataDir(flags)));
  // Negatives draw free-text values from all loaded turns, so a --limit slice gets the same
  // references as the full run; only the expansion is limited.
  const valueIndex = buildValueIndex(loaded.turns);
  if (flags.limit !== undefined) loaded.turns = loaded.turns.slice(0, flags.limit);
  reportSkipped('input', loaded.invalid);

  const rules = loadRules(dataset);
  const expander = new Expander(loaded.schema, rules, valueIndex);
  const signature = refsSignature(rules, loaded, dataset, flags);
  const coverage = new Map<string, ActCoverage>();
  const toStdout = !flags.output && !flags.summary;
  // Written whole or not at all: a failure mid-way leaves no half reference file behind.
  const out = flags.output ? new AtomicFile(flags.output) : undefined;
  let buffer: string[] = [];
  const flush = async (): Promise<void> => {
    if (buffer.length === 0) return;
    const text = buffer.join('');
    buffer = [];
    if (out) {
      out.write(text);
    } else if (toStdout) {
      if (!process.stdout.write(text)) await new Promise<void>((r) => process.stdout.once('drain', () => r()));
    }
  };

  try {
    for (const turn of loaded.turns) {
      for (const r of expander.expandTurn(turn)) {
        countCoverage(coverage, r);
        if (out || toStdout) buffer.push(`${JSON.stringify(referenceLine(r))}\n`);
      }
      if (buffer.length >= 2000) await flush();
    }
    await flush();
  } catch (e) {
    out?.abort();
    throw e;
  }
  if (out) {
    out.commit();
    writeJsonAtomic(`${flags.output}.signature.json`, signature);
  }
  if (flags.summary) process.stdout.write(formatSummary(coverage, loaded, rules, signature));
}

/** The line written per action; field order fixed so files diff cleanly. */
function referenceLine(r: ActionReferences): Record<string, unknown> {
  return {
    id: r.id,
    service: r.service,
    act: r.act,
    slot: r.slot,
    values: r.values,
    candidates: r.candidates,
    negatives: r.negatives,
    slotDescription: r.slotDescription,
    rule: r.rule ?? null,
  };
}

function countCoverage(coverage: Map<string, ActCoverage>, r: ActionReferences): void {
  let c = coverage.get(r.act);
  if (!c) coverage.set(r.act, (c = { actions: 0, withTwoCandidates: 0, withoutRule: 0, withNegatives: 0 }));
  c.actions++;
  if (r.candidates.length >= 2) c.withTwoCandidates++;
  if (r.rule === undefined) c.withoutRule++;
  if (r.negatives.length > 0) c.withNegatives++;
}

function refsSignature(rules: RuleSet, loaded: LoadedDataset, dataset: DatasetName, flags: RefsFlags): Signature {
  return makeSignature({
    rules: rules.hash,
    dataset,
    data: loaded.source,
    limit: flags.limit,
  });
}

export function formatSummary(
  coverage: Map<string, ActCoverage>,
  loaded: LoadedDataset,
  rules: RuleSet,
  signature: Signature,
): string {
  const acts = [...coverage.keys()].sort();
  const total: ActCoverage = { actions: 0, withTwoCandidates: 0, withoutRule: 0, withNegatives: 0 };
  const rows = acts.map((act) => {
    const c = coverage.get(act)!;
    total.actions += c.actions;
    total.withTwoCandidates += c.withTwoCandidates;
    total.withoutRule += c.withoutRule;
    total.withNegatives += c.withNegatives;
    return [act, c];
  }) as [string, ActCoverage][];
  rows.push(['total', total]);
  const w = Math.max(12, ...acts.map((a) => a.length)) + 2;
  const num = (n: number, width: number): string => String(n).padStart(width);
  const lines = [
    `references for ${loaded.source}: ${loaded.turns.length} system turns, ${total.actions} actions`,
    `${'act'.padEnd(w)}${'actions'.padStart(9)}${'>=2 cand'.padStart(10)}${'no rule'.padStart(9)}${'negatives'.padStart(11)}`,
    ...rows.map(
      ([act, c]) =>
        `${act.padEnd(w)}${num(c.actions, 9)}${num(c.withTwoCandidates, 10)}${num(c.withoutRule, 9)}${num(c.withNegatives, 11)}`,
    ),
    `actions with < 2 candidates: ${total.actions - total.withTwoCandidates}`,
    `actions without a rule: ${total.withoutRule}`,
    `invalid items skipped: ${loaded.invalid.length}`,
    `rules hash: ${rules.hash} (${rules.files.join(', ')})`,
    `signature: ${formatSignature(signature)}`,
  ];
  return `${lines.join('\n')}\n`;
}
