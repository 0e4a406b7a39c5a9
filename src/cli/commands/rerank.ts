import { writeJsonAtomic } from '../../util/atomic-write.js';
import type { Command } from 'commander';
import { InvalidCollector } from '../../adapters/collect.js';
import type { DatasetName } from '../../adapters/load.js';
import type { Turn } from '../../adapters/types.js';
import { findDataDir } from '../../data/data-dir.js';
import { loadSgsaccData } from '../../metrics/sgsacc/dataset.js';
import { RecordStore } from '../../metrics/sgsacc/store.js';
import { createNliRunner } from '../../nli/runner.js';
import { progressBar, progressOption, type ProgressMode } from '../../report/progress.js';
import { fileSignature, formatSignature, makeSignature } from '../../util/signature.js';
import { RANK_BY, readRerankInput, rerank, rerankSignature, resolveRerankItem, type RankBy, type RerankItem, type RerankResult } from '../../rerank/index.js';
import { InputError } from '../../util/errors.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { addDatasetOptions, addInputOption, addLimitOption, addReportFileOption, addTurnsOption, datasetLoadOptions, jsonToStdout, reportFileFrom, reportSkipped, type DatasetFlags } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';
import { savedTurnsNotice, setInterruptNotice } from '../../util/interrupt-notice.js';
import { formatRerankSummary, summarizeRerank } from '../../rerank/summary.js';
import { reportToParent } from '../../report/worker-progress.js';
import { runCommandInWorkers } from '../workers-run.js';
import { shardLabel, shardPositions } from '../../shard/spec.js';
import type { RerankReport, RerankShardReport } from '../../shard/rerank-merge.js';
import { addShardOptions, applySlurmArrayShard, shardBlock, type ShardFlags } from '../shard-options.js';
import { addContextControlOptions } from '../sgsacc-options.js';

interface RerankFlags extends NliCliFlags, DatasetFlags, ShardFlags {
  input: string;
  dataset: DatasetName;
  turns?: string;
  output?: string;
  json?: string | boolean;
  limit?: number;
  context: boolean;
  contextControl: boolean;
  systems?: string;
  progress: ProgressMode;
  hallucination?: boolean;
  rankBy: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('rerank')
    .description('choose, per item, the candidate utterance that realises the most dialogue actions (SGSAcc fidelity)')
  addInputOption(cmd, 'JSONL items (schemas/rerank-input.schema.json)', { required: true });
  addDatasetOptions(cmd, {
    defaultDataset: 'sgd',
    datasetHelp: 'schema and rules the actions belong to',
    splitHelp: 'dataset split for dataset_id lookups',
    dialoguesHelp: 'your own dialogues file/folder for dataset_id lookups',
    schemaHelp: 'schema file (instead of the data dir)',
    skipInvalidHelp: 'list invalid items on stderr and go on',
    inputAlias: false, // --input names the items here
  });
  addLimitOption(cmd, 'items');
  addTurnsOption(cmd, 'per-item results (JSONL after a signature line), written as chunks finish; re-running resumes');
  addReportFileOption(cmd, 'write {signature, summary, items} as one JSON file')
    .option('--no-context', 'do not retry with context + slot description in the premise')
    .option('--systems <names>', 'comma-separated tie-break order of systems (default: order of each item\'s candidates)')
    .option('--hallucination', 'also check facts => text per candidate: the references it realised must entail it (four-way label)')
    .option('--rank-by <order>', `${RANK_BY.join(' | ')}: most actions realised, or no omission then no hallucination, or no omission then fewest unsupported sentences (both imply --hallucination); then likelihood`, 'fidelity');
  addContextControlOptions(cmd, true);
  addShardOptions(cmd, 'items');
  cmd.addOption(progressOption());
  addNliOptions(cmd);
  cmd.action(async (flags: RerankFlags) => {
    // In a Slurm array task with no --shard, the task's shard (src/shard/spec.ts shardFromSlurmArray).
    applySlurmArrayShard(flags);
    if (flags.workers !== undefined) await runRerankInWorkers(flags);
    else await runRerank(flags);
  });
}

/** `rerank --workers N`: the same command as N shards in child processes, merged (src/shard/workers.ts). */
async function runRerankInWorkers(flags: RerankFlags): Promise<void> {
  const merged = await runCommandInWorkers(flags, { flag: '--input', file: flags.input });
  if (merged.kind !== 'rerank') return;
  if (jsonToStdout(flags)) process.stdout.write(JSON.stringify(merged.report, null, 2) + '\n');
  else {
    process.stdout.write(formatRerankSummary(merged.report.summary, merged.report.items.length, merged.report.signature.contextControl === true));
    process.stdout.write(`signature: ${formatSignature(merged.report.signature)}\n`);
  }
}

async function runRerank(flags: RerankFlags): Promise<void> {
  if (!(RANK_BY as readonly string[]).includes(flags.rankBy)) {
    throw new InputError(`--rank-by must be one of ${RANK_BY.join(', ')} (got "${flags.rankBy}")`);
  }
  const rankBy = flags.rankBy as RankBy;
  const hallucination = flags.hallucination === true || rankBy === 'omission-hallucination' || rankBy === 'omission-sentences';
  const contextControl = flags.context && flags.contextControl;
  refuseOutputOverInput(
    { '--turns': flags.turns, '-o/--output': reportFileFrom(flags), '--cache': flags.cache },
    { '--input': flags.input, '--dialogues': flags.dialogues, '--schema': flags.schema },
  );
  const reportFile = reportFileFrom(flags);
  if (flags.shard && !reportFile) throw new InputError('--shard needs -o/--output: todeval merge joins the shard reports');
  const { items: all, invalid } = readRerankInput(flags.input, { skipInvalid: flags.skipInvalid });
  const raw = flags.limit !== undefined ? all.slice(0, flags.limit) : all;
  const dataDir = findDataDir(flags.dataDir)?.dir;
  if (!dataDir && !(flags.schema && (flags.dialogues || flags.dataset === 'generic'))) {
    throw new InputError('no data directory: pass --data-dir, set TODEVAL_DATA, or give --schema (and --dialogues)');
  }
  if (flags.dataset === 'generic' && !flags.dialogues) {
    throw new InputError('--dataset generic needs --dialogues <turns.jsonl> and --schema <schema.json>');
  }
  // Invalid dataset turns only matter if an item points at them (reported then).
  const data = loadSgsaccData({ ...datasetLoadOptions(flags, dataDir), skipInvalid: true });
  const turnsById = new Map<string, Turn>(data.loaded.turns.map((t) => [t.id, t]));
  const resolver = {
    schema: data.schema,
    dataset: flags.dataset,
    expand: (turn: Turn) => data.expand([turn])[0].actions,
    turnsById,
  };
  const collector = new InvalidCollector(flags.skipInvalid === true);
  let items: RerankItem[] = [];
  // An item's dialogue: the dataset turn's for dataset_id items; an inline item stands alone.
  const dialogueOf: string[] = [];
  for (const { line, item } of raw) {
    const resolved = collector.guard(() => resolveRerankItem(item, resolver, flags.input, line));
    if (resolved) {
      items.push(resolved);
      dialogueOf.push(item.dataset_id !== undefined ? `dialogue:${turnsById.get(item.dataset_id)!.dialogueId}` : `item:${item.id}`);
    }
  }
  invalid.push(...collector.invalid);
  reportSkipped('item', invalid);
  if (items.length === 0) {
    const why = invalid.length > 0 ? `all ${invalid.length} invalid items were skipped` : 'no items in the file';
    throw new InputError(`nothing to rerank: ${why}`, { file: flags.input });
  }

  const systemOrder = flags.systems?.split(',').map((s) => s.trim()).filter(Boolean);
  // A misspelt name would silently leave the tie-break to item order while the signature claims it.
  const seen = new Set(items.flatMap((it) => it.candidates.map((c) => c.system)));
  const unknown = systemOrder?.filter((s) => !seen.has(s)) ?? [];
  if (unknown.length > 0) {
    throw new InputError(`--systems names ${unknown.map((s) => `"${s}"`).join(', ')}, not a system of any candidate (systems: ${[...seen].join(', ')})`);
  }
  // Every shard validates the whole input (cheap, no NLI) so all report the same invalid items;
  // the split comes after, on the valid items (after --limit).
  const positions = flags.shard ? shardPositions(items, (_, i) => dialogueOf[i], flags.shard) : undefined;
  if (positions) items = positions.map((i) => items[i]);
  const shard = flags.shard ? shardLabel(flags.shard) : undefined;
  const runner = await createNliRunner(nliOptionsFrom(flags));
  const bar = progressBar('rerank |{bar}| {value}/{total} items | ETA {eta_formatted}', {}, flags.progress);
  try {
    const runSig = rerankSignature({
      model: runner.modelSignature,
      rulesHash: data.rulesHash,
      dataset: flags.dataset,
      context: flags.context,
      contextControl,
      systems: systemOrder,
      hallucination,
      rankBy,
    });
    // A shard's report and per-item file carry the shard; todeval merge writes the run's without it.
    const signature = shard ? makeSignature({ ...runSig, shard }) : runSig;
    // --out is a resumable store, as score's: items already there (same configuration and input
    // file) are kept, the rest are computed and appended in chunks while a long input runs. A file
    // of another kind (the input itself, say) is refused rather than overwritten.
    const store = flags.turns
      ? RecordStore.open<RerankResult>(flags.turns, 'todeval-rerank', makeSignature({ ...signature, input: fileSignature(flags.input, dataDir) }))
      : undefined;
    const todo = store ? items.filter((it) => !store.done.has(it.id)) : items;
    setInterruptNotice(savedTurnsNotice('items', flags.turns, () => items.filter((it) => store!.done.has(it.id)).length, items.length));
    if (store && todo.length < items.length) {
      process.stderr.write(`todeval: resuming ${flags.turns}: ${items.length - todo.length} of ${items.length} items already reranked\n`);
    }
    const computed = new Map<string, RerankResult>();
    bar?.start(items.length, items.length - todo.length);
    reportToParent(items.length - todo.length, items.length);
    const chunk = 64;
    for (let i = 0; i < todo.length; i += chunk) {
      const done = await rerank(todo.slice(i, i + chunk), { scorer: runner, context: flags.context, contextControl, systemOrder, hallucination, rankBy });
      store?.append(done);
      for (const r of done) computed.set(r.id, r);
      bar?.update(items.length - todo.length + computed.size);
      reportToParent(items.length - todo.length + computed.size, items.length);
    }
    bar?.stop();
    const results: RerankResult[] = items.map((it) => computed.get(it.id) ?? store!.done.get(it.id)!);

    const summary = summarizeRerank(results, hallucination);
    const stats = runner.stats();
    const doc: RerankReport | RerankShardReport = {
      signature,
      signatureText: formatSignature(signature),
      summary,
      invalid: invalid.map((e) => e.oneLine()),
      nli: { requested: stats.requested, issued: stats.issued, cacheHits: stats.cacheHits },
      items: results,
    };
    if (flags.shard && reportFile) (doc as RerankShardReport).shard = { ...shardBlock(flags.shard, reportFile, { turns: flags.turns }), positions: positions! };
    if (reportFile) writeJsonAtomic(reportFile, doc);
    if (jsonToStdout(flags)) {
      process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
    } else {
      process.stdout.write(formatRerankSummary(summary, results.length, contextControl));
      process.stdout.write(`signature: ${formatSignature(signature)}\n`);
    }
  } finally {
    bar?.stop();
    await runner.close();
  }
}
