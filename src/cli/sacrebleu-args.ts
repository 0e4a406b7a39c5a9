/**
 * sacreBLEU's command line parsed as its argparse parser parses it: the same option names (long,
 * short and unique prefixes of long ones), `-w2` and `--width=2`, `-i` and `-m` taking every word
 * up to the next option, references as the words before the first option, the last of a repeated
 * option winning, and argparse's exit code 2 for what it refuses. Commander cannot be bent to all
 * of that (`-tok`, `-nr`, nargs='*'), so `todeval sacrebleu` parses its argv here.
 */
import type { SacrebleuArgs } from '../pipeline/sacrebleu.js';
import { BLEU_TOKENIZERS } from '../metrics/text/bleu-tokenizers.js';
import { TEXT_METRICS } from '../metrics/text/text-metric.js';
import { TODEVAL_VERSION } from '../util/version.js';

type Kind = 'flag' | 'int' | 'float' | 'str' | 'list*' | 'list+';

interface Spec {
  dest: keyof SacrebleuArgs | 'help' | 'version' | 'noColor' | 'refused';
  names: string[];
  kind: Kind;
  choices?: readonly string[];
}

// sacreBLEU's tokenizers: the ones todeval has, and the ones it names in one line as absent.
const SACREBLEU_TOKENIZERS = ['none', 'zh', '13a', 'char', 'intl', 'ja-mecab', 'ko-mecab', 'spm', 'flores101', 'flores200', 'spBLEU-1K'];

const SPECS: Spec[] = [
  { dest: 'help', names: ['-h', '--help'], kind: 'flag' },
  { dest: 'version', names: ['-V', '--version'], kind: 'flag' },
  { dest: 'refused', names: ['--citation', '--cite', '--list'], kind: 'flag' },
  { dest: 'refused', names: ['--test-set', '-t', '--language-pair', '-l', '--origlang', '-ol', '--subset', '--download'], kind: 'str' },
  { dest: 'refused', names: ['--echo'], kind: 'list+' },
  { dest: 'input', names: ['--input', '-i'], kind: 'list*' },
  { dest: 'numRefs', names: ['--num-refs', '-nr'], kind: 'int' },
  { dest: 'encoding', names: ['--encoding', '-e'], kind: 'str' },
  { dest: 'metrics', names: ['--metrics', '-m'], kind: 'list+', choices: TEXT_METRICS },
  { dest: 'sentenceLevel', names: ['--sentence-level', '-sl'], kind: 'flag' },
  { dest: 'smoothMethod', names: ['--smooth-method', '-s'], kind: 'str', choices: ['exp', 'floor', 'add-k', 'none'] },
  { dest: 'smoothValue', names: ['--smooth-value', '-sv'], kind: 'float' },
  { dest: 'tokenize', names: ['--tokenize', '-tok'], kind: 'str', choices: SACREBLEU_TOKENIZERS },
  { dest: 'lowercase', names: ['--lowercase', '-lc'], kind: 'flag' },
  { dest: 'force', names: ['--force'], kind: 'flag' },
  { dest: 'chrfCharOrder', names: ['--chrf-char-order', '-cc'], kind: 'int' },
  { dest: 'chrfWordOrder', names: ['--chrf-word-order', '-cw'], kind: 'int' },
  { dest: 'chrfBeta', names: ['--chrf-beta'], kind: 'int' },
  { dest: 'chrfWhitespace', names: ['--chrf-whitespace'], kind: 'flag' },
  { dest: 'chrfLowercase', names: ['--chrf-lowercase'], kind: 'flag' },
  { dest: 'chrfEpsSmoothing', names: ['--chrf-eps-smoothing'], kind: 'flag' },
  { dest: 'terCaseSensitive', names: ['--ter-case-sensitive'], kind: 'flag' },
  { dest: 'terAsianSupport', names: ['--ter-asian-support'], kind: 'flag' },
  { dest: 'terNoPunct', names: ['--ter-no-punct'], kind: 'flag' },
  { dest: 'terNormalized', names: ['--ter-normalized'], kind: 'flag' },
  { dest: 'confidence', names: ['--confidence', '-ci'], kind: 'flag' },
  { dest: 'confidenceN', names: ['--confidence-n', '-cin'], kind: 'int' },
  { dest: 'pairedAr', names: ['--paired-ar', '-par'], kind: 'flag' },
  { dest: 'pairedBs', names: ['--paired-bs', '-pbs'], kind: 'flag' },
  { dest: 'pairedArN', names: ['--paired-ar-n', '-parn'], kind: 'int' },
  { dest: 'pairedBsN', names: ['--paired-bs-n', '-pbsn'], kind: 'int' },
  { dest: 'pairedJobs', names: ['--paired-jobs', '-j'], kind: 'int' },
  { dest: 'quiet', names: ['--quiet', '-q'], kind: 'flag' },
  { dest: 'short', names: ['--short', '-sh'], kind: 'flag' },
  { dest: 'scoreOnly', names: ['--score-only', '-b'], kind: 'flag' },
  { dest: 'width', names: ['--width', '-w'], kind: 'int' },
  { dest: 'detail', names: ['--detail', '-d'], kind: 'flag' },
  { dest: 'noColor', names: ['--no-color', '-nc'], kind: 'flag' },
  { dest: 'format', names: ['--format', '-f'], kind: 'str', choices: ['json', 'text', 'latex'] },
];

export const SACREBLEU_DEFAULTS: SacrebleuArgs = {
  refs: [],
  input: null,
  numRefs: 1,
  encoding: 'utf-8',
  metrics: ['bleu'],
  sentenceLevel: false,
  smoothMethod: 'exp',
  smoothValue: null,
  tokenize: null,
  lowercase: false,
  force: false,
  chrfCharOrder: 6,
  chrfWordOrder: 0,
  chrfBeta: 2,
  chrfWhitespace: false,
  chrfLowercase: false,
  chrfEpsSmoothing: false,
  terCaseSensitive: false,
  terAsianSupport: false,
  terNoPunct: false,
  terNormalized: false,
  confidence: false,
  confidenceN: 1000,
  pairedAr: false,
  pairedBs: false,
  pairedArN: 10000,
  pairedBsN: 1000,
  pairedJobs: 1,
  quiet: false,
  short: false,
  scoreOnly: false,
  width: 1,
  detail: false,
  format: 'json',
};

/** What parsing gives: the arguments, or what to print instead (help, version, a refusal) and the exit code. */
export type ParsedSacrebleu = { args: SacrebleuArgs; noColor: boolean } | { exit: number; stdout?: string; stderr?: string };

const byName = new Map(SPECS.flatMap((s) => s.names.map((n) => [n, s] as const)));
const longNames = SPECS.flatMap((s) => s.names.filter((n) => n.startsWith('--')));

// argparse: a word starting with '-' is an option, unless it is '-' alone, a negative number, or has a space.
const NEGATIVE = /^-\d+$|^-\d*\.\d+$/;
const isOptionLike = (a: string) => a.startsWith('-') && a !== '-' && !NEGATIVE.test(a) && !(a.includes(' ') && !byName.has(a.split('=')[0]));

class ArgError extends Error {}

/** The option a word names (exact, `--name=value`, a unique long prefix, or `-xVALUE`), with an attached value. */
function lookup(word: string): { spec: Spec; name: string; attached?: string } {
  const exact = byName.get(word);
  if (exact) return { spec: exact, name: word };
  if (word.startsWith('--')) {
    const eq = word.indexOf('=');
    const key = eq >= 0 ? word.slice(0, eq) : word;
    const attached = eq >= 0 ? word.slice(eq + 1) : undefined;
    const hit = byName.get(key);
    if (hit) return { spec: hit, name: key, attached };
    const prefixed = longNames.filter((n) => n.startsWith(key));
    if (prefixed.length === 1) return { spec: byName.get(prefixed[0])!, name: prefixed[0], attached };
    if (prefixed.length > 1) throw new ArgError(`ambiguous option: ${key} could match ${prefixed.join(', ')}`);
    throw new ArgError(`unrecognized arguments: ${word}`);
  }
  // -w=2 and -tok=intl, then -w2: a one-letter option with its value attached.
  const eq = word.indexOf('=');
  const named = eq > 0 ? byName.get(word.slice(0, eq)) : undefined;
  if (named) return { spec: named, name: word.slice(0, eq), attached: word.slice(eq + 1) };
  const short = byName.get(word.slice(0, 2));
  if (short && short.kind !== 'flag') return { spec: short, name: word.slice(0, 2), attached: word.slice(2) };
  throw new ArgError(`unrecognized arguments: ${word}`);
}

function convert(spec: Spec, name: string, v: string): string | number {
  const label = spec.names.join('/');
  if (spec.kind === 'int') {
    if (!/^\s*[+-]?\d+\s*$/.test(v)) throw new ArgError(`argument ${label}: invalid int value: '${v}'`);
    return Number(v.trim());
  }
  if (spec.kind === 'float') {
    const n = Number(v.trim());
    if (v.trim() === '' || Number.isNaN(n)) throw new ArgError(`argument ${label}: invalid float value: '${v}'`);
    return n;
  }
  if (spec.choices && !spec.choices.includes(v)) throw new ArgError(`argument ${label}: invalid choice: '${v}' (choose from ${spec.choices.map((c) => `'${c}'`).join(', ')})`);
  void name;
  return v;
}

/** Parses sacreBLEU's argv (what follows `todeval sacrebleu`). */
export function parseSacrebleuArgs(argv: readonly string[], usage: string): ParsedSacrebleu {
  const args: SacrebleuArgs = { ...SACREBLEU_DEFAULTS, refs: [], metrics: [...SACREBLEU_DEFAULTS.metrics] };
  let noColor = false;
  const fail = (msg: string) => ({ exit: 2, stderr: `usage: todeval sacrebleu [options] [REFS ...] [-i SYSTEM ...]\ntodeval sacrebleu: error: ${msg}\n` });
  const refused: string[] = [];
  let refsTaken = false;
  let pairedGiven: string | null = null;
  const extras: string[] = [];
  try {
    let i = 0;
    while (i < argv.length) {
      const word = argv[i];
      if (word === '--') {
        extras.push(...argv.slice(i + 1));
        break;
      }
      if (!isOptionLike(word)) {
        // argparse gives the references every word before the next option, once; later stray words are errors.
        const end = argv.findIndex((a, k) => k > i && isOptionLike(a));
        const words = argv.slice(i, end < 0 ? argv.length : end);
        if (refsTaken) extras.push(...words);
        else args.refs = [...words];
        refsTaken = true;
        i += words.length;
        continue;
      }
      const { spec, name, attached } = lookup(word);
      i++;
      if (spec.kind === 'flag') {
        if (attached !== undefined) throw new ArgError(`argument ${spec.names.join('/')}: ignored explicit argument '${attached}'`);
        if (spec.dest === 'help') return { exit: 0, stdout: usage };
        if (spec.dest === 'version') return { exit: 0, stdout: `todeval sacrebleu ${TODEVAL_VERSION}\n` };
        if (spec.dest === 'pairedAr' || spec.dest === 'pairedBs') {
          const other = spec.dest === 'pairedAr' ? '--paired-bs/-pbs' : '--paired-ar/-par';
          if (pairedGiven && pairedGiven !== spec.dest) throw new ArgError(`argument ${spec.names.join('/')}: not allowed with argument ${other}`);
          pairedGiven = spec.dest;
        }
        if (spec.dest === 'noColor') noColor = true;
        else if (spec.dest === 'refused') refused.push(name);
        else (args as unknown as Record<string, unknown>)[spec.dest] = true;
        continue;
      }
      const values: string[] = [];
      if (attached !== undefined) values.push(attached);
      else if (spec.kind === 'list*' || spec.kind === 'list+') {
        while (i < argv.length && !isOptionLike(argv[i]) && argv[i] !== '--') values.push(argv[i++]);
      } else if (i < argv.length && !isOptionLike(argv[i])) values.push(argv[i++]);
      if (values.length === 0 && spec.kind !== 'list*') throw new ArgError(`argument ${spec.names.join('/')}: expected ${spec.kind === 'list+' ? 'at least one argument' : 'one argument'}`);
      const converted = values.map((v) => convert(spec, name, v));
      if (spec.dest === 'refused') refused.push(name);
      else (args as unknown as Record<string, unknown>)[spec.dest] = spec.kind.startsWith('list') ? converted : converted[0];
    }
  } catch (e) {
    if (e instanceof ArgError) return fail(e.message);
    throw e;
  }
  if (extras.length > 0) return fail(`unrecognized arguments: ${extras.join(' ')}`);
  if (refused.length > 0) {
    return { exit: 2, stderr: `todeval sacrebleu: ${refused[0]}: todeval does not download test sets (nor list, cite or echo them); give the reference file(s): todeval sacrebleu REF.txt -i SYSTEM.txt\n` };
  }
  const tok = args.tokenize;
  if (tok !== null && !(BLEU_TOKENIZERS as readonly string[]).includes(tok)) {
    return { exit: 2, stderr: `todeval sacrebleu: --tokenize ${tok}: todeval has the tokenizers ${BLEU_TOKENIZERS.join(', ')}; ${tok} (MeCab, SentencePiece) is not ported\n` };
  }
  return { args, noColor };
}
