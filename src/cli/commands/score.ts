import { createHash } from 'node:crypto';
import { writeJsonAtomic } from '../../util/atomic-write.js';
import path from 'node:path';
import type { Command } from 'commander';
import type { DatasetName } from '../../adapters/load.js';
import { corpusBleu } from '../../metrics/bleu.js';
import { comparePredictionIds } from '../../metrics/predictions.js';
import { computeSer } from '../../metrics/ser.js';
import {
  aggregateHallucination,
  aggregateSgsacc,
  tallyHallucination,
  tallySgsacc,
  bleuSummary,
  formatSgsaccReport,
  loadSgsaccData,
  RecordStore,
  referencesSignature,
  runSgsacc,
  type ReferenceSelection,
  type SgsaccReport,
  type TurnReferences,
  type TurnScore,
} from '../../metrics/sgsacc/index.js';
import { createNliRunner } from '../../nli/runner.js';
import { progressBar, progressOption, type ProgressMode } from '../../report/progress.js';
import { formatSignature, makeSignature, type Signature } from '../../report/signature.js';
import { addNliOptions, nliOptionsFrom, type NliCliFlags } from '../nli-options.js';
import { addPredictionsOptions, checkPredictionIds, readPredictionsFlag } from '../predictions.js';
import { addDatasetOptions, addLimitOption, addReportFileOption, addTurnsOption, datasetDataDir, datasetLoadOptions, jsonToStdout, positiveInt, reportFileFrom, reportSkipped, type DatasetFlags } from '../options.js';
import { refuseOutputOverInput } from '../output-guard.js';
import { referenceSelectionOption } from '../sgsacc-options.js';
import { savedTurnsNotice, setInterruptNotice } from '../interrupt.js';
import { InputError } from '../../util/errors.js';
import { reportToParent } from '../../report/worker-progress.js';
import { addShardOptions, shardBlock, type ShardFlags } from '../shard-options.js';
import { runCommandInWorkers } from '../workers-run.js';
import { shardLabel, shardPositions } from '../../shard/spec.js';
import type { ScoreShardReport } from '../../shard/score-merge.js';

interface ScoreFlags extends NliCliFlags, DatasetFlags, ShardFlags {
  dataset: DatasetName;
  input?: string;
  system?: string;
  limit?: number;
  references?: string;
  turns?: string;
  output?: string;
  json?: string | boolean;
  validation: boolean;
  context: boolean;
  referenceSelection: ReferenceSelection;
  hallucination?: boolean;
  chunk: number;
  progress: ProgressMode;
  allowMissing?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('score')
    .description('SGSAcc (with and without validation, seen/unseen), SER and BLEU of a system, or of the ground truth');
  addDatasetOptions(cmd, { skipInvalidHelp: 'list invalid dialogues/predictions on stderr and go on', inputAlias: false });
  addPredictionsOptions(cmd)
    .option('--system <name>', 'name of the system in the report (default: predictions file name)')
    .option('--references <file>', 'stored references (JSONL): reused when present, extended with missing turns');
  addLimitOption(cmd, 'system turns');
  addTurnsOption(cmd, 'per-turn results (JSONL), written as chunks finish; re-running resumes');
  addReportFileOption(cmd, 'write the report as JSON')
    .option('--no-validation', 'keep turns whose ground truth fails validation (skips negative references)')
    .option('--no-context', 'do not retry with previous user turn + slot description in the premise')
    .addOption(referenceSelectionOption())
    .option('--hallucination', 'also check facts => text (references entail the utterance): hallucination rate and a four-way label per turn')
    .option('--chunk <n>', 'turns per NLI call (larger batches on GPU)', positiveInt('--chunk'), 256);
  addShardOptions(cmd, 'turns');
  cmd.addOption(progressOption());
  addNliOptions(cmd);
  cmd.action(async (flags: ScoreFlags) => {
    if (flags.workers !== undefined) await runScoreInWorkers(flags);
    else await runScore(flags);
  });
}

/** `score --workers N`: the same command as N shards in child processes, merged (src/shard/workers.ts). */
async function runScoreInWorkers(flags: ScoreFlags): Promise<void> {
  const merged = await runCommandInWorkers(flags, { flag: '-i/--input', file: flags.input }, { file: flags.references });
  if (merged.kind !== 'score') return;
  process.stdout.write(jsonToStdout(flags) ? JSON.stringify(merged.report, null, 2) + '\n' : formatSgsaccReport(merged.report));
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

async function runScore(flags: ScoreFlags): Promise<void> {
  refuseOutputOverInput(
    { '--turns': flags.turns, '-o/--output': reportFileFrom(flags), '--references': flags.references, '--cache': flags.cache },
    { '-i/--input': flags.input, '--dialogues': flags.dialogues, '--schema': flags.schema },
  );
  const reportFile = reportFileFrom(flags);
  if (flags.shard && !reportFile) throw new InputError('--shard needs -o/--output: todeval merge joins the shard reports');
  const data = loadSgsaccData(datasetLoadOptions(flags, datasetDataDir(flags)));
  reportSkipped('input', data.loaded.invalid);
  const allTurns = data.loaded.turns;
  let turns = flags.limit ? allTurns.slice(0, flags.limit) : allTurns;
  // --limit picks the same turns with or without --shard; the shard is then cut from them, by dialogue.
  const positionOf = new Map(turns.map((t, i) => [t.id, i]));
  if (flags.shard) turns = shardPositions(turns, (t) => t.dialogueId, flags.shard).map((i) => turns[i]);
  const shard = flags.shard ? shardLabel(flags.shard) : undefined;

  // Predictions: extra ids are judged against the whole dataset, missing ones against the slice.
  let predictions: Map<string, string> | undefined;
  let missing: string[] = [];
  let extra: string[] = [];
  if (flags.input) {
    predictions = readPredictionsFlag(flags.input, flags.skipInvalid);
    extra = comparePredictionIds(predictions, allTurns.map((t) => t.id)).extra;
    missing = comparePredictionIds(predictions, turns.map((t) => t.id)).missing;
    checkPredictionIds({
      file: flags.input,
      missing,
      extra,
      source: data.loaded.source,
      validIds: allTurns.map((t) => t.id),
      allowMissing: flags.allowMissing,
      skipInvalid: flags.skipInvalid,
    });
    if (missing.length > 0) {
      process.stderr.write(`todeval: ${missing.length} turns have no prediction and are not scored (listed in the JSON report)\n`);
      const has = predictions;
      turns = turns.filter((t) => has.has(t.id));
    }
  }
  const system = flags.system ?? (flags.input ? path.basename(flags.input).replace(/\.(jsonl?|json)$/, '') : 'ground-truth');
  const sgsTurns = data.expand(turns);
  const utterances = new Map(turns.map((t) => [t.id, predictions ? predictions.get(t.id)! : t.utterance]));

  const bar = progressBar('score |{bar}| {value}/{total} turns | {pairs} pairs | {rate} pairs/s | ETA {eta_formatted}', { etaBuffer: 50 }, flags.progress);
  const started = Date.now();
  let lastDone = 0;
  const runner = await createNliRunner(nliOptionsFrom(flags));
  const updateBar = (turnsDone?: number) => {
    if (!bar) return;
    const issued = runner.stats().issued;
    const secs = Math.max(0.001, (Date.now() - started) / 1000);
    lastDone = turnsDone ?? lastDone;
    bar.update(lastDone, { pairs: issued, rate: (issued / secs).toFixed(1) });
  };
  let ticker: NodeJS.Timeout | undefined;

  try {
    const options = {
      validation: flags.validation,
      context: flags.context,
      referenceSelection: flags.referenceSelection,
      hallucination: flags.hallucination === true,
    };
    // The references are shared by both directions: referencesSignature leaves hallucination out.
    const refsSig: Signature = referencesSignature({
      model: runner.modelSignature,
      rulesHash: data.rulesHash,
      dataset: flags.dataset,
      source: data.loaded.source,
      ...options,
    });
    const predictionsDigest = predictions ? digest(JSON.stringify([...predictions.entries()].sort())) : 'gold';
    // The references are shared by both modes (a record gains its hallucination premise when first
    // needed); per-turn results and reports are not, so the direction is part of their signatures.
    const hallucinationSig = options.hallucination ? true : undefined;
    // A shard's records carry the shard, like its report; todeval merge writes them under the run's signature.
    const turnsSig = makeSignature({ ...refsSig, metric: 'sgsacc-turns', system, predictions: predictionsDigest, hallucination: hallucinationSig, shard });
    const references = flags.references ? RecordStore.open<TurnReferences>(flags.references, 'todeval-sgsacc-references', refsSig) : undefined;
    const results = flags.turns ? RecordStore.open<TurnScore>(flags.turns, 'todeval-sgsacc-turns', turnsSig) : undefined;
    const resumed = results ? turns.filter((t) => results.done.has(t.id)).length : 0;
    setInterruptNotice(savedTurnsNotice('turns', flags.turns, () => turns.filter((t) => results!.done.has(t.id)).length, turns.length));
    if (resumed > 0) process.stderr.write(`todeval: resuming ${flags.turns}: ${resumed} of ${turns.length} turns already scored\n`);
    // Started only now: a notice or a refused store above would otherwise print into the bar's line.
    lastDone = resumed;
    bar?.start(turns.length, resumed, { pairs: 0, rate: '0.0' });
    reportToParent(resumed, turns.length);
    ticker = bar ? setInterval(() => updateBar(), 1000) : undefined;

    const run = await runSgsacc(sgsTurns, utterances, {
      ...options,
      scorer: runner,
      chunkTurns: flags.chunk,
      references,
      results,
      groundTruthSystem: !predictions,
      onChunk: ({ turnsDone }) => {
        updateBar(turnsDone);
        reportToParent(turnsDone, turns.length);
      },
    });
    if (ticker) clearInterval(ticker);
    bar?.stop();

    const aggregateOptions = { validation: options.validation, isUnseen: data.isUnseen };
    const summary = aggregateSgsacc(run.scores, aggregateOptions);
    const gold = run.references.map((r) => r?.groundTruth).filter((x): x is TurnScore => x !== undefined);
    if (gold.length < turns.length) {
      // Only when resuming --turns without --references: those turns' references were never stored.
      process.stderr.write(
        `todeval: warning: the ground-truth section covers ${gold.length} of ${turns.length} turns ` +
          `(${turns.length - gold.length} were resumed from ${flags.turns} without stored references; pass --references FILE to keep them)\n`,
      );
    }
    const goldSummary = gold.length > 0 ? aggregateSgsacc(gold, { validation: options.validation, isUnseen: data.isUnseen }) : null;
    const hallucination = options.hallucination ? aggregateHallucination(run.scores, { validation: options.validation, isUnseen: data.isUnseen }) : undefined;
    // Gold turns resumed from --out without their references carry no premise check: left out, as above.
    const goldChecked = gold.filter((g) => g.hallucination !== undefined);
    const goldHallucination =
      options.hallucination && goldChecked.length > 0 ? aggregateHallucination(goldChecked, { validation: options.validation, isUnseen: data.isUnseen }) : undefined;

    const ser = computeSer(turns, { predictions, isCategorical: data.isCategorical });
    const withGold = turns.filter((t) => t.utterance.trim() !== '');
    const bleu = withGold.length > 0 ? corpusBleu(withGold.map((t) => utterances.get(t.id) ?? ''), [withGold.map((t) => t.utterance)]) : undefined;

    const { counts, ...scores } = summary;
    // The references' configuration, then what makes this system's scores its own.
    const signature = makeSignature({
      ...refsSig,
      metric: 'sgsacc',
      limit: flags.limit ?? null,
      system,
      predictions: predictionsDigest,
      hallucination: hallucinationSig,
      // --allow-missing scores a subset: not comparable with a full run, whatever the digest says.
      missingPredictions: missing.length > 0 ? missing.length : undefined,
      shard,
    });
    const stats = runner.stats();
    const report: SgsaccReport | ScoreShardReport = {
      signature,
      signatureText: '',
      system,
      dataset: { name: flags.dataset, source: data.loaded.source, turns: turns.length, limit: flags.limit ?? null },
      sgsacc: scores,
      counts: { ...counts, missingPredictions: missing.length },
      groundTruth: goldSummary
        ? {
            sgsacc: { validated: goldSummary.validated, unvalidated: goldSummary.unvalidated },
            counts: goldSummary.counts,
            ...(goldHallucination ? { hallucination: goldHallucination } : {}),
            coverage: { turns: gold.length, of: turns.length, complete: gold.length === turns.length },
          }
        : null,
      ...(hallucination ? { hallucination } : {}),
      ser: {
        ser: ser.ser,
        errors: ser.errors,
        utterancesWithValues: ser.utterancesWithValues,
        perService: ser.perService,
        turnsScored: ser.turnsScored,
        // Which turns SER flags, so `todeval report` can set them against the turns SGSAcc flags.
        erroneousTurns: [...new Set(ser.erroneous.map((e) => e.id))],
      },
      bleu: bleu ? bleuSummary(bleu) : null,
      predictions: { file: flags.input ?? null, missing, extra },
      references: {
        file: flags.references ?? null,
        reused: run.counts.referencesReused,
        computed: run.counts.referencesComputed,
        missing: run.counts.referencesMissing,
      },
      resumed: run.counts.resumed,
      nli: { requested: stats.requested, issued: stats.issued, cacheHits: stats.cacheHits, batches: stats.batches },
    };
    report.signatureText = formatSignature(signature);
    if (flags.shard && reportFile) {
      // What todeval merge needs to give the unsharded numbers exactly: counts, not percentages.
      (report as ScoreShardReport).shard = {
        ...shardBlock(flags.shard, reportFile, { turns: flags.turns, references: flags.references }),
        positions: missing.map((id) => positionOf.get(id)!),
        erroneousAt: (report.ser.erroneousTurns ?? []).map((id) => positionOf.get(id)!),
        tallies: {
          sgsacc: tallySgsacc(run.scores, aggregateOptions),
          groundTruth: gold.length > 0 ? tallySgsacc(gold, aggregateOptions) : null,
          ...(options.hallucination ? { hallucination: tallyHallucination(run.scores, aggregateOptions) } : {}),
          ...(options.hallucination && goldChecked.length > 0 ? { groundTruthHallucination: tallyHallucination(goldChecked, aggregateOptions) } : {}),
          bleu: bleu ? { counts: bleu.counts, totals: bleu.totals, sysLen: bleu.sysLen, refLen: bleu.refLen } : null,
        },
      };
    }
    if (reportFile) writeJsonAtomic(reportFile, report);
    process.stdout.write(jsonToStdout(flags) ? JSON.stringify(report, null, 2) + '\n' : formatSgsaccReport(report));
  } finally {
    if (ticker) clearInterval(ticker);
    bar?.stop();
    await runner.close();
  }
}
