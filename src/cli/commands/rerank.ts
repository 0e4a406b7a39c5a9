import { writeJsonAtomic } from '../../util/atomic-write.js';
import type { Command } from 'commander';
import { InvalidCollector } from '../../adapters/collect.js';
import type { DatasetName } from '../../adapters/load.js';
import type { Turn } from '../../adapters/types.js';
import { findDataDir } from '../../data/data-dir.js';
import { loadSgsaccData } from '../../metrics/sgsacc/dataset.js';
import type { LabelCounts } from '../../metrics/sgsacc/aggregate-hallucination.js';
import { RecordStore } from '../../metrics/sgsacc/store.js';
import { createNliRunner } from '../../nli/runner.js';
import { progressBar, progressOption, type ProgressMode } from '../../report/progress.js';
import { fileSignature, formatSignature, makeSignature } from '../../report/signature.js';
import { RANK_BY, readRerankInput, rerank, rerankSignature, resolveRerankItem, type RankBy, type RerankItem, type RerankResult } from '../../rerank/index.js';
import { InputError } from '../../util/errors.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { addDatasetOptions, addInputOption, addLimitOption, addReportFileOption, addTurnsOption, datasetLoadOptions, jsonToStdout, reportFileFrom, reportSkipped, type DatasetFlags } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';
import { savedTurnsNotice, setInterruptNotice } from '../interrupt.js';

interface RerankFlags extends NliCliFlags, DatasetFlags {
  input: string;
  dataset: DatasetName;
  turns?: string;
  output?: string;
  json?: string | boolean;
  limit?: number;
  context: boolean;
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
    .option('--rank-by <order>', `${RANK_BY.join(' | ')}: most actions realised, or no omission then no hallucination (implies --hallucination); then likelihood`, 'fidelity');
  cmd.addOption(progressOption());
  addNliOptions(cmd);
  cmd.action(async (flags: RerankFlags) => {
    await runRerank(flags);
  });
}

async function runRerank(flags: RerankFlags): Promise<void> {
  if (!(RANK_BY as readonly string[]).includes(flags.rankBy)) {
    throw new InputError(`--rank-by must be one of ${RANK_BY.join(', ')} (got "${flags.rankBy}")`);
  }
  const rankBy = flags.rankBy as RankBy;
  const hallucination = flags.hallucination === true || rankBy === 'omission-hallucination';
  refuseOutputOverInput(
    { '--turns': flags.turns, '-o/--output': reportFileFrom(flags), '--cache': flags.cache },
    { '--input': flags.input, '--dialogues': flags.dialogues, '--schema': flags.schema },
  );
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
  const items: RerankItem[] = [];
  for (const { line, item } of raw) {
    const resolved = collector.guard(() => resolveRerankItem(item, resolver, flags.input, line));
    if (resolved) items.push(resolved);
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
  const runner = await createNliRunner(nliOptionsFrom(flags));
  const bar = progressBar('rerank |{bar}| {value}/{total} items | ETA {eta_formatted}', {}, flags.progress);
  try {
    const signature = rerankSignature({
      model: runner.modelSignature,
      rulesHash: data.rulesHash,
      dataset: flags.dataset,
      context: flags.context,
      systems: systemOrder,
      hallucination,
      rankBy,
    });
    // --out is a resumable store, as score's: items already there (same configuration and input
    // file) are kept, the rest are computed and appended in chunks while a long input runs. A file
    // of another kind (the input itself, say) is refused rather than overwritten.
    const store = flags.turns
      ? RecordStore.open<RerankResult>(flags.turns, 'todeval-rerank', makeSignature({ ...signature, input: fileSignature(flags.input) }))
      : undefined;
    const todo = store ? items.filter((it) => !store.done.has(it.id)) : items;
    setInterruptNotice(savedTurnsNotice('items', flags.turns, () => items.filter((it) => store!.done.has(it.id)).length, items.length));
    if (store && todo.length < items.length) {
      process.stderr.write(`todeval: resuming ${flags.turns}: ${items.length - todo.length} of ${items.length} items already reranked\n`);
    }
    const computed = new Map<string, RerankResult>();
    bar?.start(items.length, items.length - todo.length);
    const chunk = 64;
    for (let i = 0; i < todo.length; i += chunk) {
      const done = await rerank(todo.slice(i, i + chunk), { scorer: runner, context: flags.context, systemOrder, hallucination, rankBy });
      store?.append(done);
      for (const r of done) computed.set(r.id, r);
      bar?.update(items.length - todo.length + computed.size);
    }
    bar?.stop();
    const results: RerankResult[] = items.map((it) => computed.get(it.id) ?? store!.done.get(it.id)!);

    const summary = summarize(results, hallucination);
    const stats = runner.stats();
    const doc = {
      signature,
      signatureText: formatSignature(signature),
      summary,
      invalid: invalid.map((e) => e.oneLine()),
      nli: { requested: stats.requested, issued: stats.issued, cacheHits: stats.cacheHits },
      items: results,
    };
    const reportFile = reportFileFrom(flags);
    if (reportFile) writeJsonAtomic(reportFile, doc);
    if (jsonToStdout(flags)) {
      process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
    } else {
      process.stdout.write(formatSummary(summary, results.length));
      process.stdout.write(`signature: ${formatSignature(signature)}\n`);
    }
  } finally {
    bar?.stop();
    await runner.close();
  }
}

interface SystemSummary {
  chosen: number;
  /** Mean fidelity / number of actions over the items where the system had a candidate. */
  meanFidelityRate: number | null;
  /** Items where this candidate realised every action. */
  fullyFaithful: number;
  items: number;
  /** With hallucination: this system's candidates per four-way label (unscorable ones left out). */
  labels?: LabelCounts;
}

interface RerankSummary {
  chosenFullyFaithful: number;
  /** With hallucination: labels of the chosen candidates. */
  chosenLabels?: LabelCounts;
  bySystem: Record<string, SystemSummary>;
}

const noLabels = (): LabelCounts => ({ ok: 0, omission: 0, hallucination: 0, both: 0 });

function summarize(results: RerankResult[], hallucination: boolean): RerankSummary {
  const by = new Map<string, { chosen: number; rate: number; rated: number; full: number; items: number; labels: LabelCounts }>();
  let chosenFull = 0;
  const chosenLabels = noLabels();
  for (const r of results) {
    if (r.chosen.fidelity === r.actions) chosenFull++;
    if (r.chosen.label) chosenLabels[r.chosen.label]++;
    for (const c of r.candidates) {
      let s = by.get(c.system);
      if (!s) by.set(c.system, (s = { chosen: 0, rate: 0, rated: 0, full: 0, items: 0, labels: noLabels() }));
      if (c.label) s.labels[c.label]++;
      s.items++;
      if (r.actions > 0) {
        s.rate += c.fidelity / r.actions;
        s.rated++;
      }
      if (c.fidelity === r.actions) s.full++;
    }
    by.get(r.chosen.system)!.chosen++;
  }
  return {
    chosenFullyFaithful: chosenFull,
    ...(hallucination ? { chosenLabels } : {}),
    bySystem: Object.fromEntries(
      [...by.entries()].map(([k, s]) => [
        k,
        {
          chosen: s.chosen,
          meanFidelityRate: s.rated ? s.rate / s.rated : null,
          fullyFaithful: s.full,
          items: s.items,
          ...(hallucination ? { labels: s.labels } : {}),
        },
      ]),
    ),
  };
}

function formatSummary(s: RerankSummary, n: number): string {
  const lines = [`rerank: ${n} items, chosen candidate realises every action in ${s.chosenFullyFaithful}`];
  const l = (x: LabelCounts) => `${x.ok}/${x.omission}/${x.hallucination}/${x.both}`;
  if (s.chosenLabels) lines.push(`chosen candidates ok/omission/hallucination/both: ${l(s.chosenLabels)}`);
  lines.push(`${'system'.padEnd(20)} chosen  all-actions  mean fidelity${s.chosenLabels ? '  ok/om/hal/both' : ''}`);
  for (const [k, v] of Object.entries(s.bySystem)) {
    const rate = v.meanFidelityRate === null ? '-' : (100 * v.meanFidelityRate).toFixed(1) + '%';
    lines.push(
      `${k.padEnd(20)} ${String(v.chosen).padStart(6)}  ${String(v.fullyFaithful).padStart(11)}  ${rate.padStart(13)}${v.labels ? `  ${l(v.labels)}` : ''}`,
    );
  }
  return lines.join('\n') + '\n';
}
