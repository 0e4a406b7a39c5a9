import { writeFileAtomic, writeJsonAtomic } from '../../util/atomic-write.js';
import { Option, type Command } from 'commander';
import { resolveDataDir } from '../../data/data-dir.js';
import { Evaluator, type MwzEvaluation } from '../../metrics/mwz/evaluator.js';
import { mergeSgsacc, shardDialogues, type SgsaccMergeResult } from '../../metrics/mwz/sgsacc-merge.js';
import { progressBar, progressOption, type ProgressMode } from '../../report/progress.js';
import { readJsonFile } from '../../util/json-file.js';
import { fileSignature, formatSignature, makeSignature } from '../../util/signature.js';
import { itemsFileJson } from '../../report/item-files.js';
import { mwzItemStats } from '../../metrics/mwz/item-stats.js';
import { formatConfidence, runConfidence, type ConfidenceBlock } from '../../metrics/significance/confidence.js';
import { addRunConfidenceOptions, runConfidenceFrom, type RunConfidenceFlags } from '../significance-options.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { addDataDirOption, addInputOption, addLimitOption, reportSkipped } from '../options.js';
import { contextControlSignature, type ReferenceSelection } from '../../metrics/sgsacc/index.js';
import { addContextControlOptions, referenceSelectionOption } from '../sgsacc-options.js';
import { addMwzInputOptions, GROUND_TRUTH_SOURCES } from '../mwz-options.js';
import { refuseOutputOverInput } from '../output-guard.js';
import { InputError } from '../../util/errors.js';
import { addShardOptions, applySlurmArrayShard, shardBlock, type ShardFlags } from '../shard-options.js';
import { shardLabel } from '../../shard/spec.js';
import type { EvaluateShardReport } from '../../shard/evaluate-merge.js';

interface EvaluateFlags extends NliCliFlags, ShardFlags, RunConfidenceFlags {
  items?: string;
  input: string;
  output?: string;
  bleu?: boolean;
  success?: boolean;
  richness?: boolean;
  dst?: boolean;
  sgsacc?: boolean;
  dataDir?: string;
  groundTruth: 'auto' | 'mwz21' | 'mwz22';
  strict?: boolean;
  skipInvalid?: boolean;
  rebuildGroundTruth?: boolean;
  json?: boolean;
  limit?: number;
  domainsFromSlots?: boolean;
  referenceSelection: ReferenceSelection;
  contextControl: boolean;
  progress: ProgressMode;
}


export function register(program: Command): void {
  const cmd = program
    .command('evaluate')
    .description('MultiWOZ context-to-response metrics with mwzeval parity: BLEU, Inform & Success, lexical richness, DST');
  addInputOption(cmd, "predictions in mwzeval's format: dialogue id -> [{response, state?, active_domains?}]", { required: true, predictionsAlias: true })
    .option('-o, --output <file>', 'write the full results (mwzeval structure plus details and signature) as JSON')
    .option('-b, --bleu', 'BLEU against the delexicalized MultiWOZ references')
    .option('-s, --success', 'Inform and Success rates (standard and optimistic)')
    .option('-r, --richness', 'lexical richness (unique n-grams, entropies, MSTTR, length)')
    .option('--dst', 'dialogue state tracking: joint accuracy, slot precision/recall/F1')
    .option('--sgsacc', 'also SGSAcc and SER for turns with lexicalized text ("utterance", or a response without placeholders)');
  addMwzInputOptions(addDataDirOption(cmd))
    .option('--rebuild-ground-truth', 'rebuild the ground truth instead of reading the cached copy')
    .option('--json', 'print the report as JSON on stdout instead of the tables')
    .option('--items <file>', "write every metric's per-item sufficient statistics (JSON) for todeval compare and report");
  addRunConfidenceOptions(cmd);
  addLimitOption(cmd, 'dialogues of the input');
  // Only the SGSAcc scoring is split: the mwzeval metrics are cheap and every shard computes them whole.
  addShardOptions(cmd, 'dialogues scored for --sgsacc', { workers: false });
  cmd.addOption(referenceSelectionOption());
  addContextControlOptions(cmd, false).addOption(progressOption());
  addNliOptions(cmd); // model flags for --sgsacc
  cmd.action(async (flags: EvaluateFlags) => {
    // In a Slurm array task with no --shard, the task's shard (src/shard/spec.ts shardFromSlurmArray).
    applySlurmArrayShard(flags);
    await runEvaluate(flags);
  });
}

export type EvaluateResult = MwzEvaluation & { sgsacc?: SgsaccMergeResult | null; confidence?: ConfidenceBlock };

export async function runEvaluate(flags: EvaluateFlags): Promise<EvaluateResult> {
  refuseOutputOverInput({ '-o/--output': flags.output, '--items': flags.items, '--cache': flags.cache }, { '--input': flags.input });
  if (flags.shard && (flags.confidence || flags.items)) throw new InputError(`${flags.confidence ? '--confidence' : '--items'} needs the whole run in one process: drop --shard`);
  if (flags.shard && !flags.sgsacc) throw new InputError('--shard splits the SGSAcc scoring of --sgsacc: give --sgsacc (the other metrics are not split)');
  if (flags.shard && !flags.output) throw new InputError('--shard needs -o/--output: todeval merge joins the shard reports');
  let { bleu, success, richness, dst } = flags;
  if (!bleu && !success && !richness && !dst) {
    // mwzeval refuses to run without a metric; defaulting to its three main ones is friendlier
    bleu = success = richness = true;
  }
  const data = resolveDataDir(flags.dataDir);
  const input = limitDialogues(readJsonFile(flags.input), flags.limit);
  const evaluator = new Evaluator({
    bleu,
    success,
    richness,
    dst,
    dataDir: data.dir,
    dataDirSource: data.source,
    groundTruth: GROUND_TRUTH_SOURCES[flags.groundTruth],
    strict: flags.strict,
    skipInvalid: flags.skipInvalid,
    noCache: flags.rebuildGroundTruth,
    domainsFromSlots: flags.domainsFromSlots,
    onWarning: (m) => process.stderr.write(`todeval: warning: ${m}\n`),
    onSkipped: (e) => reportSkipped('input', [e]),
  });
  const predictions = evaluator.validate(input, flags.input);
  const wantItems = flags.confidence === true || flags.items !== undefined;
  const { items: mwzItems, ...evaluation } = evaluator.evaluateValidated(predictions, flags.input, { items: wantItems });
  const result: EvaluateResult = evaluation;
  if (flags.sgsacc) {
    // NLI scoring can take long on CPU: a progress bar on a terminal only
    const bar = progressBar('sgsacc |{bar}| {value}/{total} turns | ETA {eta_formatted}', {}, flags.progress);
    try {
      result.sgsacc = await mergeSgsacc(predictions.dialogues, {
        dataDir: data.dir,
        nli: nliOptionsFrom(flags),
        referenceSelection: flags.referenceSelection,
        contextControl: flags.contextControl,
        shard: flags.shard,
        items: wantItems,
        // Only mergeSgsacc knows how many turns are lexicalized, so the bar starts on its first report.
        onProgress: ({ turnsDone, turnsTotal }) => {
          if (bar?.isActive) bar.update(turnsDone);
          else bar?.start(turnsTotal, turnsDone);
        },
      });
    } finally {
      bar?.stop();
    }
    if (!result.sgsacc) {
      const where = flags.shard ? ` in the dialogues of shard ${shardLabel(flags.shard)}` : '';
      process.stderr.write(`todeval: warning: --sgsacc: no turn${where} carries lexicalized text ("utterance", or a response without placeholders)\n`);
    } else {
      result.signature = makeSignature({
        ...result.signature,
        model: result.sgsacc.model.modelId,
        revision: result.sgsacc.model.revision,
        dtype: result.sgsacc.model.dtype,
        referenceSelection: result.sgsacc.referenceSelection,
        contextControl: contextControlSignature(result.sgsacc.contextControl),
      });
    }
  }
  // Per-item statistics: the intervals of --confidence, the file of --items; never in the report itself.
  const sgsaccItems = result.sgsacc?.items;
  if (result.sgsacc) delete result.sgsacc.items;
  if (wantItems) {
    const items = { ...mwzItemStats(mwzItems!), ...(sgsaccItems ?? {}) };
    // One line: a machine file of thousands of rows (pretty-printed it would be three times the size).
    if (flags.items) writeFileAtomic(flags.items, JSON.stringify(itemsFileJson(makeSignature({ ...result.signature, predictions: fileSignature(flags.input) }), items)) + '\n');
    const confidence = runConfidenceFrom(flags);
    if (confidence) result.confidence = runConfidence(items, confidence);
  }
  if (flags.shard && flags.output) {
    // The shard's part of the SGSAcc section travels as counts, which todeval merge adds up exactly.
    const tally = result.sgsacc?.tally ?? null;
    if (result.sgsacc) delete result.sgsacc.tally;
    result.signature = makeSignature({ ...result.signature, shard: shardLabel(flags.shard) });
    const turns = result.sgsacc
      ? { lexicalized: result.sgsacc.counts.lexicalizedTurns, delexicalized: result.sgsacc.counts.delexicalizedTurns }
      : { lexicalized: 0, delexicalized: Object.values(shardDialogues(predictions.dialogues, flags.shard)).reduce((n, d) => n + d.length, 0) };
    (result as EvaluateShardReport).shard = { ...shardBlock(flags.shard, flags.output, {}), positions: [], tally, turns };
  }
  if (flags.output) {
    writeJsonAtomic(flags.output, result);
  }
  process.stdout.write(flags.json ? JSON.stringify(result, null, 2) + '\n' : formatEvaluation(result));
  return result;
}

/** --limit: the first N dialogues of an mwzeval input object (anything else is left for validation to name). */
function limitDialogues(input: unknown, limit: number | undefined): unknown {
  if (limit === undefined || typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  return Object.fromEntries(Object.entries(input).slice(0, limit));
}

const fmt = (v: unknown): string => (typeof v === 'number' ? String(Math.round(v * 1e4) / 1e4) : String(v));

/** mwzeval's console layout: one block per metric, keys padded to 15 characters. */
export function formatEvaluation(r: MwzEvaluation): string {
  const lines: string[] = [];
  const block = (title: string, rows: [string, unknown][]): void => {
    lines.push(`====== ${title} ======`);
    for (const [k, v] of rows) lines.push(`${k.padEnd(15)}${fmt(v)}`);
    lines.push('');
  };
  if (r.bleu) block('BLEU', Object.entries(r.bleu));
  if (r.success) {
    // `total` last, after the domains (the JSON keeps mwzeval's key order).
    const domains = Object.keys(r.success.inform).sort((a, b) => Number(a === 'total') - Number(b === 'total'));
    block(
      `INFORM & SUCCESS (state: ${r.success.state_source}, domains: ${r.success.domain_source})`,
      domains.map((d) => [d, `inform ${r.success!.inform[d]}  success ${r.success!.success[d]}`]),
    );
    block(
      'INFORM & SUCCESS, OPTIMISTIC',
      domains.map((d) => [d, `inform ${r.success!.optimistic.inform[d]}  success ${r.success!.optimistic.success[d]}`]),
    );
  }
  if (r.richness) block('RICHNESS', Object.entries(r.richness));
  if (r.dst) block('DST', Object.entries(r.dst));
  const sg = (r as EvaluateResult).sgsacc;
  if (sg) {
    block('SGSACC & SER (lexicalized turns)', [
      ['sgsacc', sg.sgsacc.validated?.all ?? 'n/a'],
      ['sgsacc_unval', sg.sgsacc.unvalidated.all ?? 'n/a'],
      ['ser', sg.ser.ser],
      ['turns', `${sg.counts.lexicalizedTurns} lexicalized, ${sg.counts.delexicalizedTurns} delexicalized (left out)`],
    ]);
  }
  const confidence = (r as EvaluateResult).confidence;
  if (confidence) lines.push(formatConfidence(confidence).trimEnd(), '');
  lines.push(`${r.details.dialogues} dialogues, ${r.details.turns} turns`);
  if (r.details.invalid.length > 0) lines.push(`${r.details.invalid.length} invalid dialogues skipped`);
  if (r.details.unknown_placeholders.length > 0) {
    lines.push(`${r.details.unknown_placeholders.length} turns had unknown slot placeholders (dropped)`);
  }
  lines.push(`signature: ${formatSignature(r.signature)}`);
  return lines.join('\n') + '\n';
}
