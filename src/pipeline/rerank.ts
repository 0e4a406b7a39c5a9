import { InvalidCollector } from '../adapters/collect.js';
import type { DatasetName, LoadDatasetOptions } from '../adapters/load.js';
import type { Turn } from '../adapters/types.js';
import { loadSgsaccData, type SgsaccData } from '../metrics/sgsacc/dataset.js';
import { RecordStore } from '../metrics/sgsacc/store.js';
import { createNliRunner, type NliRunner, type NliRunnerOptions } from '../nli/runner.js';
import { reportToParent } from '../util/progress/worker-ipc.js';
import { invalidTurnReasons, readRerankInput, rerankSignature, rerankWith, resolveRerankConfig, resolveRerankItem, type RerankConfig, type RerankItem, type RerankResult, type RerankSettings } from '../rerank/index.js';
import { summarizeRerank } from '../rerank/summary.js';
import type { RerankReport, RerankShardReport } from '../shard/rerank-merge.js';
import { shardBlock, shardLabel, shardPositions, type ShardSpec } from '../shard/spec.js';
import { writeJsonAtomic } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import { savedTurnsNotice, setInterruptNotice } from '../util/interrupt-notice.js';
import { extendSignature, fileSignature, formatSignature, type Signature } from '../util/signature.js';

/** Rerank settings as given (`systems` is the tie-break order): resolved once, by the pipeline, under RERANK_DEFAULTS. */
export interface RerankPipelineOptions extends Omit<RerankSettings, 'systemOrder'> {
  /** JSONL items (schemas/rerank-input.schema.json). */
  input: string;
  /** Schema, rules and turns the items' actions and dataset ids resolve against (`loadSgsaccData`), loaded once the input is read. */
  loadData?: () => SgsaccData;
  /** Or where to load them from (`dataset` is this option's): the data dir, or your own --dialogues/--schema. One of the two is needed. */
  load?: Omit<LoadDatasetOptions, 'dataset' | 'limit' | 'skipInvalid'>;
  dataset: DatasetName;
  /** The data dir the input's signature is taken relative to. */
  dataDir?: string;
  limit?: number;
  skipInvalid?: boolean;
  /** Tie-break order of systems (default: item order). */
  systems?: string[];
  shard?: ShardSpec;
  /** Per-item results (JSONL): items already there are resumed, the rest appended as chunks finish. */
  itemsFile?: string;
  /** The report (JSON, written atomically). */
  reportFile?: string;
  nli: NliRunnerOptions;
  hooks?: RerankHooks;
}

export interface RerankHooks {
  /** Invalid items skipped (`skipInvalid`), one line each. */
  skipped?(invalid: { oneLine(): string }[]): void;
  notice?(message: string): void;
  /** `done` of `total` items reranked (resumed ones included); first call: the start. */
  progress?(done: number, total: number): void;
}

/** The data of `o.load`: a data dir, or the user's own schema (and dialogues, which the generic dataset needs). */
function loadRerankData(o: RerankPipelineOptions): SgsaccData {
  const load = o.load ?? {};
  if (!load.dataDir && !(load.schemaFile && (load.input || o.dataset === 'generic'))) {
    throw new InputError('no data directory: pass --data-dir, set TODEVAL_DATA, or give --schema (and --dialogues)');
  }
  if (o.dataset === 'generic' && !load.input) throw new InputError('--dataset generic needs --dialogues <turns.jsonl> and --schema <schema.json>');
  // Invalid dataset turns only matter if an item points at them: resolveItems refuses that item with the turn's reason.
  return loadSgsaccData({ ...load, dataset: o.dataset, skipInvalid: true });
}

/** Items of the input resolved against the data, invalid ones collected, then --limit and the shard's part. */
function resolveItems(o: RerankPipelineOptions, data: SgsaccData, read: ReturnType<typeof readRerankInput>): { items: RerankItem[]; invalid: { oneLine(): string }[]; positions?: number[] } {
  const { items: all, invalid } = read;
  const raw = o.limit !== undefined ? all.slice(0, o.limit) : all;
  const turnsById = new Map<string, Turn>(data.loaded.turns.map((t) => [t.id, t]));
  // An item naming a turn the data load skipped as invalid is refused for that reason (loadRerankData).
  const invalidTurns = invalidTurnReasons(data.loaded.invalid);
  const resolver = { schema: data.schema, dataset: o.dataset, expand: (turn: Turn) => data.expand([turn])[0].actions, turnsById, invalidTurns };
  const collector = new InvalidCollector(o.skipInvalid === true);
  let items: RerankItem[] = [];
  // An item's dialogue: the dataset turn's for dataset_id items; an inline item stands alone.
  const dialogueOf: string[] = [];
  for (const { line, item } of raw) {
    const resolved = collector.guard(() => resolveRerankItem(item, resolver, o.input, line));
    if (resolved) {
      items.push(resolved);
      dialogueOf.push(item.dataset_id !== undefined ? `dialogue:${turnsById.get(item.dataset_id)!.dialogueId}` : `item:${item.id}`);
    }
  }
  invalid.push(...collector.invalid);
  o.hooks?.skipped?.(invalid);
  if (items.length === 0) {
    const why = invalid.length > 0 ? `all ${invalid.length} invalid items were skipped` : 'no items in the file';
    throw new InputError(`nothing to rerank: ${why}`, { file: o.input });
  }
  // A misspelt name would silently leave the tie-break to item order while the signature claims it.
  const seen = new Set(items.flatMap((it) => it.candidates.map((c) => c.system)));
  const unknown = o.systems?.filter((s) => !seen.has(s)) ?? [];
  if (unknown.length > 0) {
    throw new InputError(`--systems names ${unknown.map((s) => `"${s}"`).join(', ')}, not a system of any candidate (systems: ${[...seen].join(', ')})`);
  }
  // Every shard validates the whole input (cheap, no NLI) so all report the same invalid items;
  // the split comes after, on the valid items (after --limit).
  const positions = o.shard ? shardPositions(items, (_, i) => dialogueOf[i], o.shard) : undefined;
  if (positions) items = positions.map((i) => items[i]);
  return { items, invalid, positions };
}

/** The items reranked in chunks, resuming from and appending to the per-item store. */
async function rerankItems(o: RerankPipelineOptions, config: RerankConfig, items: RerankItem[], runner: NliRunner, signature: Signature): Promise<RerankResult[]> {
  // The per-item file is a resumable store, as score's: items already there (same configuration
  // and input file) are kept, the rest computed and appended in chunks. A file of another kind
  // (the input itself, say) is refused rather than overwritten.
  const store = o.itemsFile ? RecordStore.open<RerankResult>(o.itemsFile, 'todeval-rerank', extendSignature(signature, { input: fileSignature(o.input, o.dataDir) })) : undefined;
  const todo = store ? items.filter((it) => !store.done.has(it.id)) : items;
  setInterruptNotice(savedTurnsNotice('items', o.itemsFile, () => items.filter((it) => store!.done.has(it.id)).length, items.length));
  if (store && todo.length < items.length) o.hooks?.notice?.(`resuming ${o.itemsFile}: ${items.length - todo.length} of ${items.length} items already reranked`);
  const computed = new Map<string, RerankResult>();
  const progress = () => {
    o.hooks?.progress?.(items.length - todo.length + computed.size, items.length);
    reportToParent(items.length - todo.length + computed.size, items.length);
  };
  progress();
  const chunk = 64;
  for (let i = 0; i < todo.length; i += chunk) {
    const done = await rerankWith(todo.slice(i, i + chunk), runner, config);
    store?.append(done);
    for (const r of done) computed.set(r.id, r);
    progress();
  }
  return items.map((it) => computed.get(it.id) ?? store!.done.get(it.id)!);
}

/**
 * `todeval rerank` as a library call: per item, the candidate that realises the most dialogue
 * actions (SGSAcc fidelity), with a summary and signature; a shard's report carries what `todeval
 * merge` joins. Opens its NLI runner once the input is checked, and closes it whatever happens.
 */
export async function runRerankPipeline(o: RerankPipelineOptions): Promise<RerankReport | RerankShardReport> {
  // The library edge of rerank: the one place its settings become the config the passes run with and the signature records.
  const config = resolveRerankConfig({ context: o.context, contextControl: o.contextControl, hallucination: o.hallucination, rankBy: o.rankBy, systemOrder: o.systems });
  const read = readRerankInput(o.input, { skipInvalid: o.skipInvalid });
  // Loaded once the input is read: its errors come first, as they are the cheaper to fix.
  const data = o.loadData ? o.loadData() : loadRerankData(o);
  const { items, invalid, positions } = resolveItems(o, data, read);
  const runner = await createNliRunner(o.nli);
  try {
    const runSig = rerankSignature(config, { model: runner.modelSignature, rulesHash: data.rulesHash, dataset: o.dataset, schema: data.loaded.schemaLabel });
    // A shard's report and per-item file carry the shard; todeval merge writes the run's without it.
    const signature = o.shard ? extendSignature(runSig, { shard: shardLabel(o.shard) }) : runSig;
    const results = await rerankItems(o, config, items, runner, signature);
    const stats = runner.stats();
    const doc: RerankReport | RerankShardReport = {
      signature,
      signatureText: formatSignature(signature),
      summary: summarizeRerank(results, config.hallucination),
      invalid: invalid.map((e) => e.oneLine()),
      nli: { requested: stats.requested, issued: stats.issued, cacheHits: stats.cacheHits },
      items: results,
    };
    if (o.shard && o.reportFile) (doc as RerankShardReport).shard = { ...shardBlock(o.shard, o.reportFile, { turns: o.itemsFile }), positions: positions! };
    if (o.reportFile) writeJsonAtomic(o.reportFile, doc);
    return doc;
  } finally {
    await runner.close();
  }
}
