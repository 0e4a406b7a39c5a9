import { resolveDataDir } from '../data/data-dir.js';
import type { EvaluationText } from '../report/text/evaluate-text.js';
import { chrfOptionsOf, type EvaluatorOptions } from '../metrics/mwz/evaluator.js';
import { checkRepeatedDialogues, type ValidatedPredictions } from '../metrics/mwz/input.js';
import { mwzItemStats, type MwzItems } from '../metrics/mwz/item-stats.js';
import { shardDialogues } from '../metrics/mwz/sgsacc-merge.js';
import { runConfidence, type ResampleUnit } from '../metrics/significance/confidence.js';
import type { Seed } from '../metrics/significance/pcg64.js';
import { evaluateSgsaccSignature } from '../metrics/sgsacc/signature.js';
import type { NliRunnerOptions } from '../nli/runner.js';
import { itemsFileJson } from '../report/stats/item-files.js';
import type { EvaluateShardReport } from '../shard/evaluate-merge.js';
import { shardBlock, shardLabel, type ShardSpec } from '../shard/spec.js';
import { writeFileAtomic, writeJsonAtomic } from '../util/atomic-write.js';
import { whileSynchronous } from '../util/sync-signals.js';
import { parseJsonText, readTextFile } from '../util/json-file.js';
import { extendSignature, fileSignature } from '../util/signature.js';
import type { EvaluateSgsaccSettings } from './evaluate-sgsacc.js';
import { InputError } from '../util/errors.js';
import { mwzEvaluator, type MwzHooks, type MwzReadOptions } from './mwz-evaluator.js';

export type EvaluateResult = EvaluationText;

export interface EvaluatePipelineOptions extends MwzReadOptions {
  /** The mwzeval-format predictions file. */
  input: string;
  /** The metrics; none given: BLEU, Inform & Success and richness, as mwzeval's main three. */
  bleu?: boolean;
  success?: boolean;
  richness?: boolean;
  dst?: boolean;
  /** sacreBLEU's chrF (true: chrF2; or its options) and TER over BLEU's strings, beside mwzeval's metrics. */
  chrf?: EvaluatorOptions['chrf'];
  ter?: boolean;
  dataDir?: string;
  /** The first N dialogues of the input. */
  limit?: number;
  /** SGSAcc and SER of the lexicalized turns (`--sgsacc`), with these NLI options and SGSAcc settings (evaluateSgsacc resolves them). */
  sgsacc?: EvaluateSgsaccSettings & { nli: NliRunnerOptions; shard?: ShardSpec; skipDelexicalized?: boolean };
  /** Write the report here (JSON, atomically). */
  output?: string;
  /** Write every metric's per-item statistics here (`--items`). */
  itemsFile?: string;
  confidence?: { samples?: number; seed?: Seed; unit?: ResampleUnit };
  hooks?: EvaluateHooks;
}

export interface EvaluateHooks extends MwzHooks {
  /** SGSAcc progress: `done` of `total` lexicalized turns. */
  progress?(done: number, total: number): void;
}

/** --limit: the first N dialogues of an mwzeval input object (anything else is left for validation to name). */
function limitDialogues(input: unknown, limit: number | undefined): unknown {
  if (limit === undefined || typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  return Object.fromEntries(Object.entries(input).slice(0, limit));
}

/** The metrics asked for; none given: mwzeval's three main ones (mwzeval refuses to run without one). */
function metricsOf(o: EvaluatePipelineOptions): Pick<EvaluatorOptions, 'bleu' | 'success' | 'richness' | 'dst' | 'chrf' | 'ter'> {
  const { bleu, success, richness, dst, chrf, ter } = o;
  if (!bleu && !success && !richness && !dst && !chrf && !ter) return { bleu: true, success: true, richness: true, dst, chrf, ter };
  return { bleu, success, richness, dst, chrf, ter };
}

/** `--sgsacc`: the SGSAcc section of the lexicalized turns, and the model's fields in the signature. */
async function addSgsacc(result: EvaluateResult, predictions: ValidatedPredictions, o: EvaluatePipelineOptions, dataDir: string, wantItems: boolean): Promise<void> {
  const sg = o.sgsacc!;
  // Loaded here, not at the top (see checkDelexicalized's call).
  const { evaluateSgsacc } = await import('./evaluate-sgsacc.js');
  result.sgsacc = await evaluateSgsacc(predictions.dialogues, {
    ...sg,
    dataDir,
    confidence: o.confidence,
    source: o.input,
    items: wantItems,
    onProgress: ({ turnsDone, turnsTotal }) => o.hooks?.progress?.(turnsDone, turnsTotal),
  });
  if (!result.sgsacc) {
    const where = sg.shard ? ` in the dialogues of shard ${shardLabel(sg.shard)}` : '';
    o.hooks?.warn?.(`--sgsacc: no turn${where} carries lexicalized text ("utterance", or a response without placeholders)`);
    return;
  }
  const { signed } = result.sgsacc;
  delete result.sgsacc.signed;
  result.signature = evaluateSgsaccSignature(result.signature, { ...result.sgsacc, signed });
}

/** Per-item statistics: the intervals of --confidence, the file of --items; never in the report itself. */
function useItems(result: EvaluateResult, mwzItems: MwzItems | undefined, o: EvaluatePipelineOptions, wantItems: boolean, dataDir: string): void {
  const sgsaccItems = result.sgsacc?.items;
  if (result.sgsacc) delete result.sgsacc.items;
  if (!wantItems) return;
  const items = { ...mwzItemStats(mwzItems!, { chrf: chrfOptionsOf(o.chrf) }), ...(sgsaccItems ?? {}) };
  // One line: a machine file of thousands of rows (pretty-printed it would be three times the size).
  // The predictions by path relative to the data directory when they lie in it (docs/cli-conventions.md).
  if (o.itemsFile) writeFileAtomic(o.itemsFile, JSON.stringify(itemsFileJson(extendSignature(result.signature, { predictions: fileSignature(o.input, dataDir) }), items)) + '\n');
  if (o.confidence) result.confidence = runConfidence(items, o.confidence);
}

/** A shard's report: its part of the SGSAcc section travels as counts, which todeval merge adds up exactly. */
function makeShardReport(result: EvaluateResult, predictions: ValidatedPredictions, shard: ShardSpec, output: string): void {
  const tally = result.sgsacc?.tally ?? null;
  const sentences = result.sgsacc?.sentenceTally;
  if (result.sgsacc) {
    delete result.sgsacc.tally;
    delete result.sgsacc.sentenceTally;
  }
  result.signature = extendSignature(result.signature, { shard: shardLabel(shard) });
  const turns = result.sgsacc
    ? { lexicalized: result.sgsacc.counts.lexicalizedTurns, delexicalized: result.sgsacc.counts.delexicalizedTurns }
    : { lexicalized: 0, delexicalized: Object.values(shardDialogues(predictions.dialogues, shard)).reduce((n, d) => n + d.length, 0) };
  (result as EvaluateShardReport).shard = { ...shardBlock(shard, output, {}), positions: [], tally, turns, ...(sentences ? { sentences } : {}) };
}

/**
 * `todeval evaluate` as a library call: mwzeval's metrics of an input file (BLEU, Inform & Success,
 * richness, DST), with `sgsacc` SGSAcc and SER of its lexicalized turns, per-item statistics and
 * intervals; a shard's report (sgsacc.shard) carries the counts `todeval merge` adds up.
 */
export async function runEvaluatePipeline(o: EvaluatePipelineOptions): Promise<EvaluateResult> {
  // Intervals and items of one shard's turns are not the run's: refused for a library call as for the CLI.
  if (o.sgsacc?.shard && (o.confidence || o.itemsFile)) throw new InputError(`${o.confidence ? '--confidence' : '--items'} needs the whole run in one process: drop --shard`);
  const data = resolveDataDir(o.dataDir);
  const text = readTextFile(o.input);
  const parsed = parseJsonText<unknown>(text, o.input);
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) checkRepeatedDialogues(text, o.input);
  const input = limitDialogues(parsed, o.limit);
  const evaluator = mwzEvaluator(o, data, o.hooks, metricsOf(o));
  // Synchronous for seconds: a signal must still end the run at once (src/util/sync-signals.ts).
  const predictions = whileSynchronous(() => evaluator.validate(input, o.input));
  // Before the mwzeval metrics and the model load: a delexicalized input is refused at once.
  // evaluate-sgsacc.js (the NLI runner, ONNX Runtime) is loaded for --sgsacc only: mwzeval's
  // metrics without it start in a fraction of the time (the Python Evaluator's calls).
  if (o.sgsacc) (await import('./evaluate-sgsacc.js')).checkDelexicalized(predictions.dialogues, { skipDelexicalized: o.sgsacc.skipDelexicalized, source: o.input });
  const wantItems = o.confidence !== undefined || o.itemsFile !== undefined;
  const { items: mwzItems, ...evaluation } = whileSynchronous(() => evaluator.evaluateValidated(predictions, o.input, { items: wantItems }));
  const result: EvaluateResult = evaluation;
  if (o.sgsacc) await addSgsacc(result, predictions, o, data.dir, wantItems);
  whileSynchronous(() => useItems(result, mwzItems, o, wantItems, data.dir));
  const shard = o.sgsacc?.shard;
  if (shard && o.output) makeShardReport(result, predictions, shard, o.output);
  if (o.output) writeJsonAtomic(o.output, result);
  return result;
}
