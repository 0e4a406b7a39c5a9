import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { resolveDataDir } from '../../data/data-dir.js';
import { Evaluator, type MwzEvaluation } from '../../metrics/mwz/evaluator.js';
import type { GroundTruthSource } from '../../metrics/mwz/ground-truth.js';
import { readPredictionsFile } from '../../metrics/mwz/input.js';
import { formatSignature } from '../../report/signature.js';
import { InputError } from '../../util/errors.js';

interface EvaluateFlags {
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
  cache: boolean;
  json?: boolean;
  domainsFromSlots?: boolean;
}

const SOURCES: Record<string, GroundTruthSource | undefined> = {
  auto: undefined,
  mwz21: 'multiwoz21-convlab',
  mwz22: 'multiwoz22',
};

export function register(program: Command): void {
  program
    .command('evaluate')
    .description('MultiWOZ context-to-response metrics with mwzeval parity: BLEU, Inform & Success, lexical richness, DST')
    .requiredOption('-i, --input <file>', "predictions in mwzeval's format: dialogue id -> [{response, state?, active_domains?}]")
    .option('-o, --output <file>', 'write the full results (mwzeval structure plus details and signature) as JSON')
    .option('-b, --bleu', 'BLEU against the delexicalized MultiWOZ references')
    .option('-s, --success', 'Inform and Success rates (standard and optimistic)')
    .option('-r, --richness', 'lexical richness (unique n-grams, entropies, MSTTR, length)')
    .option('--dst', 'dialogue state tracking: joint accuracy, slot precision/recall/F1')
    .option('--sgsacc', 'also SGSAcc and SER for turns with lexicalized text')
    .option('--data-dir <dir>', 'data directory (default: $TODEVAL_DATA, ./data, ../shared/data)')
    .addOption(
      new Option('--ground-truth <source>', 'ground truth: MultiWOZ 2.2 files when present (auto), or force one')
        .choices(['auto', 'mwz21', 'mwz22'])
        .default('auto'),
    )
    .option('--strict', 'unknown slot placeholders are errors (default: warn and drop them, as mwzeval)')
    .option('--skip-invalid', 'list invalid dialogues (unknown ids, wrong turn counts) and evaluate the rest')
    .option('--domains-from-slots', "active domains from placeholder names like [hotel_name] (mwzeval's add_slot_domains.py)")
    .option('--no-cache', 'rebuild the ground truth instead of reading the cached copy')
    .option('--json', 'print the results as JSON instead of tables')
    .action((flags: EvaluateFlags) => {
      runEvaluate(flags);
    });
}

export function runEvaluate(flags: EvaluateFlags): MwzEvaluation {
  if (flags.sgsacc) {
    throw new InputError('--sgsacc is not available in this build of `todeval evaluate` (use `todeval score --dataset multiwoz`)');
  }
  let { bleu, success, richness, dst } = flags;
  if (!bleu && !success && !richness && !dst) {
    // mwzeval refuses to run without a metric; defaulting to its three main ones is friendlier
    bleu = success = richness = true;
  }
  const data = resolveDataDir(flags.dataDir);
  const input = readPredictionsFile(flags.input);
  const evaluator = new Evaluator({
    bleu,
    success,
    richness,
    dst,
    dataDir: data.dir,
    dataDirSource: data.source,
    groundTruth: SOURCES[flags.groundTruth],
    strict: flags.strict,
    skipInvalid: flags.skipInvalid,
    noCache: !flags.cache,
    domainsFromSlots: flags.domainsFromSlots,
    onWarning: (m) => process.stderr.write(`todeval: warning: ${m}\n`),
  });
  const result = evaluator.evaluate(input, flags.input);
  if (flags.output) {
    writeFileSync(path.resolve(flags.output), JSON.stringify(result, null, 2) + '\n');
  }
  process.stdout.write(flags.json ? JSON.stringify(result, null, 2) + '\n' : formatEvaluation(result));
  return result;
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
    const domains = Object.keys(r.success.inform);
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
  lines.push(`${r.details.dialogues} dialogues, ${r.details.turns} turns`);
  if (r.details.invalid.length > 0) lines.push(`${r.details.invalid.length} invalid dialogues skipped`);
  if (r.details.unknown_placeholders.length > 0) {
    lines.push(`${r.details.unknown_placeholders.length} turns had unknown slot placeholders (dropped)`);
  }
  lines.push(`signature: ${formatSignature(r.signature)}`);
  return lines.join('\n') + '\n';
}
