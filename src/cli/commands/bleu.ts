import path from 'node:path';
import { Option, type Command } from 'commander';
import { BLEU_TOKENIZERS, type BleuTokenizerName } from '../../metrics/text/bleu-tokenizers.js';
import { runStepsAsync } from '../../metrics/significance/steps.js';
import { compareBleuSteps, formatBleuComparison, lowSegmentsWarning } from '../../metrics/text/bleu-significance.js';
import { pyRstrip } from '../../metrics/text/py-string.js';
import { InputError } from '../../util/errors.js';
import { preloadStdin, STDIN } from '../../util/json-file.js';
import { readTextLines } from '../../util/text-lines.js';
import { addConfidenceOptions, addPairedTestOptions, pairedTestFrom, seedFrom, type SignificanceFlags } from '../significance-options.js';
import { positiveInt } from '../options.js';

interface BleuFlags extends SignificanceFlags {
  reference: string[];
  input: string[];
  tokenize: BleuTokenizerName;
  lowercase?: boolean;
  json?: boolean;
  width: number;
}

export function register(program: Command): void {
  const cmd = program
    .command('bleu')
    .description("corpus BLEU of plain-text system outputs, sacreBLEU's scores and statistical tests (paired bootstrap, approximate randomization, confidence)")
    .option('-r, --reference <file>', 'reference file, one segment per line (repeat for more references)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .requiredOption('-i, --input <files...>', 'system output file(s), one segment per line; the first is the baseline of a paired test; - reads stdin')
    .addOption(new Option('--tokenize <name>', "sacreBLEU's tokenizer").choices([...BLEU_TOKENIZERS]).default('13a'))
    .option('--lowercase', 'case-insensitive BLEU')
    .option('--json', 'print {metric, test, n, seed, segments, signature, systems} as JSON (exact, lowUnits when true)')
    .option('-w, --width <n>', 'decimals of the scores printed (as sacreBLEU)', positiveInt('--width', true), 1);
  addPairedTestOptions(addConfidenceOptions(cmd, 'bootstrap 95% intervals of each system (with --paired-ar: of the systems compared too)'));
  cmd.action((flags: BleuFlags) => runBleu(flags));
}

async function runBleu(flags: BleuFlags): Promise<void> {
  if (flags.reference.length === 0) throw new InputError('give at least one reference file: -r REF.txt');
  const { test, samples } = pairedTestFrom(flags);
  const resampled = test !== null || flags.confidence === true;
  // A drawn seed is said before the inputs are read, so that it is on screen whatever follows.
  const seed = resampled ? seedFrom(flags.seed) : undefined;
  // Read before anything else, without blocking: a silent pipe must not make the command deaf to signals.
  if ([...flags.reference, ...flags.input].includes(STDIN)) await preloadStdin();
  // sacreBLEU strips the end of every line it reads, references and systems alike.
  const references = flags.reference.map((f) => readTextLines(f, 'reference').map(pyRstrip));
  // sacreBLEU scores an empty corpus as 0.0; a score of nothing is a mistake in the input, not a result.
  if (references[0].length === 0) throw new InputError('the reference has no lines: there is nothing to score', { file: flags.reference[0] });
  references.forEach((ref, k) => {
    if (ref.length !== references[0].length) {
      throw new InputError(`${ref.length} lines, the first reference has ${references[0].length}`, { file: flags.reference[k] });
    }
  });
  const names = new Set<string>();
  const systems = flags.input.map((file) => {
    const name = file === STDIN ? 'stdin' : file;
    if (names.has(name)) throw new InputError('given twice: each system needs its own file', { file });
    names.add(name);
    const lines = readTextLines(file, 'system output').map(pyRstrip);
    if (lines.length !== references[0].length) {
      throw new InputError(`${lines.length} lines, the references have ${references[0].length}`, { file });
    }
    return { name: file === STDIN ? 'stdin' : path.normalize(file), lines };
  });
  if (test && systems.length < 2) throw new InputError(`--paired-${test} compares systems with the first one: give at least two -i files`);
  // Resampled between turns of the event loop: Ctrl-C or SIGTERM ends the run within a second.
  const result = await runStepsAsync(
    compareBleuSteps(references, systems, {
      tokenize: flags.tokenize,
      lowercase: flags.lowercase === true,
      test,
      samples,
      confidence: flags.confidence === true,
      confidenceSamples: flags.confidenceN,
      seed,
    }),
  );
  if (result.lowUnits && flags.json) process.stderr.write(`todeval: ${lowSegmentsWarning(result.segments)}\n`);
  process.stdout.write(flags.json ? JSON.stringify(result, null, 2) + '\n' : formatBleuComparison(result, { width: flags.width, alpha: flags.alpha }));
}
