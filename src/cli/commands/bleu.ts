import { Option, type Command } from 'commander';
import { lowSegmentsWarning } from '../../metrics/text/bleu-significance.js';
import { BLEU_TOKENIZERS, type BleuTokenizerName } from '../../metrics/text/bleu-tokenizers.js';
import { formatTextComparisons, TEXT_METRICS, type TextMetricKey } from '../../metrics/text/text-compare.js';
import { InputError } from '../../util/errors.js';
import { runTextMetricsPipeline } from '../../pipeline/text-metrics.js';
import { addConfidenceOptions, addPairedTestOptions, pairedTestFrom, seedFrom, type SignificanceFlags } from '../significance-options.js';
import { positiveInt } from '../options.js';

interface BleuFlags extends SignificanceFlags {
  reference: string[];
  input?: string[];
  metrics: TextMetricKey[];
  tokenize: BleuTokenizerName;
  lowercase?: boolean;
  chrfCharOrder: number;
  chrfWordOrder: number;
  chrfBeta: number;
  chrfWhitespace?: boolean;
  chrfLowercase?: boolean;
  chrfEpsSmoothing?: boolean;
  terCaseSensitive?: boolean;
  terAsianSupport?: boolean;
  terNoPunct?: boolean;
  terNormalized?: boolean;
  scoreOnly?: boolean;
  format?: 'json' | 'text';
  json?: boolean;
  width: number;
  testSet?: string;
  languagePair?: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('bleu')
    .description("sacreBLEU's BLEU, chrF/chrF++ and TER of plain-text system outputs, with its statistical tests (paired bootstrap, approximate randomization, confidence); takes sacreBLEU's command line for local files, printed todeval's way (todeval sacrebleu prints what sacreBLEU prints)")
    .argument('[refs...]', 'reference file(s), one segment per line, before -i (as sacreBLEU takes them)')
    .option('-r, --reference <file>', 'reference file, one segment per line (repeat for more references)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('-i, --input <files...>', 'system output file(s), one segment per line; the first is the baseline of a paired test; - or none: stdin (tab-separated columns are systems, as in sacreBLEU)')
    .addOption(new Option('-m, --metrics <names...>', 'metrics to compute, printed and signed each').choices([...TEXT_METRICS]).default(['bleu']))
    .addOption(new Option('--tokenize <name>', "BLEU's tokenizer (sacreBLEU -tok)").choices([...BLEU_TOKENIZERS]).default('13a'))
    .option('--lowercase', 'case-insensitive BLEU (sacreBLEU -lc)')
    .option('--chrf-char-order <n>', 'chrF character n-gram order (-cc)', positiveInt('--chrf-char-order', true), 6)
    .option('--chrf-word-order <n>', 'chrF word n-gram order (-cw); 2 is chrF++', positiveInt('--chrf-word-order', true), 0)
    .option('--chrf-beta <n>', "chrF's weight of recall against precision", positiveInt('--chrf-beta', true), 2)
    .option('--chrf-whitespace', 'keep whitespace in chrF character n-grams')
    .option('--chrf-lowercase', 'case-insensitive chrF')
    .option('--chrf-eps-smoothing', "chrF++.py's epsilon smoothing instead of the effective order")
    .option('--ter-case-sensitive', 'case-sensitive TER')
    .option('--ter-asian-support', 'TER: split CJK characters (with --ter-normalized), remove CJK punctuation (with --ter-no-punct)')
    .option('--ter-no-punct', 'TER: remove punctuation')
    .option('--ter-normalized', "TER: Tercom's normalization and tokenization")
    .option('-b, --score-only', 'print only the scores, one a line')
    .addOption(new Option('-f, --format <format>', 'output format (sacreBLEU prints JSON for one system by default; we print text)').choices(['json', 'text']))
    .option('--json', 'the same as --format json: {metric, test, n, seed, segments, signature, systems}, a list of them for several metrics')
    .option('-w, --width <n>', 'decimals of the scores printed (as sacreBLEU)', positiveInt('--width', true), 1)
    // sacreBLEU's test-set download, taken only to say what to do instead.
    .addOption(new Option('-t, --test-set <name>').hideHelp())
    .addOption(new Option('-l, --language-pair <pair>').hideHelp());
  addPairedTestOptions(addConfidenceOptions(cmd, 'bootstrap 95% intervals of each system (with --paired-ar: of the systems compared too)'));
  cmd.action((refs: string[], flags: BleuFlags) => runBleu(refs, flags));
}

/** Flags -> the text-metrics pipeline -> sacreBLEU's lines (or JSON) on stdout. */
async function runBleu(positional: string[], flags: BleuFlags): Promise<void> {
  if (flags.testSet !== undefined || flags.languagePair !== undefined) {
    const flag = flags.testSet !== undefined ? '-t/--test-set' : '-l/--language-pair';
    throw new InputError(`${flag}: todeval does not download test sets; pass the reference file(s) instead: todeval bleu REF.txt -i SYSTEM.txt`);
  }
  const references = [...positional, ...flags.reference];
  if (references.length === 0) throw new InputError('give at least one reference file: todeval bleu REF.txt -i SYSTEM.txt (or -r REF.txt)');
  if (flags.format !== undefined && flags.json && flags.format !== 'json') throw new InputError('--json and --format text disagree: give one');
  const { test, samples } = pairedTestFrom(flags);
  const results = await runTextMetricsPipeline({
    references,
    systems: flags.input,
    metrics: TEXT_METRICS.filter((m) => flags.metrics.includes(m)),
    bleu: { tokenize: flags.tokenize, lowercase: flags.lowercase === true },
    chrf: { charOrder: flags.chrfCharOrder, wordOrder: flags.chrfWordOrder, beta: flags.chrfBeta, whitespace: flags.chrfWhitespace === true, lowercase: flags.chrfLowercase === true, epsSmoothing: flags.chrfEpsSmoothing === true },
    ter: { caseSensitive: flags.terCaseSensitive === true, asianSupport: flags.terAsianSupport === true, noPunct: flags.terNoPunct === true, normalized: flags.terNormalized === true },
    test,
    samples,
    confidence: flags.confidence === true,
    confidenceSamples: flags.confidenceN,
    // A drawn seed is said before the inputs are read, so that it is on screen whatever follows.
    seed: test !== null || flags.confidence === true ? seedFrom(flags.seed) : undefined,
  });
  if (flags.json === true || flags.format === 'json') {
    if (results[0].lowUnits) process.stderr.write(`todeval: ${lowSegmentsWarning(results[0].segments)}\n`);
    // One metric: its object (the shape `bleu --json` always had); several: a list, as sacreBLEU's JSON.
    process.stdout.write(JSON.stringify(results.length === 1 ? results[0] : results, null, 2) + '\n');
    return;
  }
  process.stdout.write(formatTextComparisons(results, { width: flags.width, alpha: flags.alpha, scoreOnly: flags.scoreOnly === true }));
}
