/**
 * `todeval sacrebleu` as a library call: sacreBLEU 2.6's command line on local files, from its
 * parsed arguments to what it prints on stdout and stderr and its exit code. The inputs are read as
 * sacreBLEU reads them (line ends, tab-separated references and systems, encodings), the checks
 * come in its order with its exit codes (1, or 17 for a malformed line), and the metrics are
 * todeval's (src/metrics/text), resampled by todeval's tests (src/metrics/significance).
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { resampleSpec, signatureWithTest, type ResampleSpec } from '../metrics/significance/spec.js';
import { runStepsAsync } from '../metrics/significance/steps.js';
import type { SmoothMethod } from '../metrics/text/bleu.js';
import type { BleuTokenizerName } from '../metrics/text/bleu-tokenizers.js';
import { resampleSystemsSteps } from '../metrics/text/bleu-significance.js';
import { pyRstrip } from '../metrics/text/py-string.js';
import { segmentRow, textMetric, TEXT_METRICS, type TextMetric, type TextMetricKey } from '../metrics/text/text-metric.js';
import { formatResultsTable, formatSacrebleuScore, formatSacrebleuSignature, formatSingleResults, type PairedCell, type ResultsTable, type SacrebleuField } from '../report/text/sacrebleu-text.js';
import type { SignatureField } from '../util/signature.js';
import { TODEVAL_VERSION } from '../util/version.js';

/** sacreBLEU's arguments (its argparse namespace), as `todeval sacrebleu` parses them. */
export interface SacrebleuArgs {
  refs: string[];
  /** -i files; null: the systems come from stdin (tab-separated columns). */
  input: string[] | null;
  numRefs: number;
  encoding: string;
  metrics: TextMetricKey[];
  sentenceLevel: boolean;
  smoothMethod: SmoothMethod;
  smoothValue: number | null;
  tokenize: BleuTokenizerName | null;
  lowercase: boolean;
  force: boolean;
  chrfCharOrder: number;
  chrfWordOrder: number;
  chrfBeta: number;
  chrfWhitespace: boolean;
  chrfLowercase: boolean;
  chrfEpsSmoothing: boolean;
  terCaseSensitive: boolean;
  terAsianSupport: boolean;
  terNoPunct: boolean;
  terNormalized: boolean;
  confidence: boolean;
  confidenceN: number;
  pairedAr: boolean;
  pairedBs: boolean;
  pairedArN: number;
  pairedBsN: number;
  pairedJobs: number;
  quiet: boolean;
  short: boolean;
  scoreOnly: boolean;
  width: number;
  detail: boolean;
  format: 'json' | 'text' | 'latex';
}

export interface SacrebleuIo {
  /** The bytes of stdin (read only when the systems come from it). */
  stdin: () => Buffer;
  /** SACREBLEU_FORMAT and SACREBLEU_SEED, as sacreBLEU reads them. */
  env: NodeJS.ProcessEnv;
}

export interface SacrebleuOutcome {
  stdout: string;
  stderr: string;
  code: number;
}

/** What the signature's version field says: todeval's own version, not sacreBLEU's (docs/text-metrics.md). */
export const SACREBLEU_DROPIN_VERSION = `todeval-${TODEVAL_VERSION}`;

/** A stop with sacreBLEU's exit code, its lines already logged. */
class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** Python codecs by the names sacreBLEU's `-e` takes; decoding is strict, as Python's. */
function decoder(encoding: string): (bytes: Buffer) => string {
  const name = encoding.toLowerCase().replace(/_/g, '-');
  if (['utf-8', 'utf8', 'u8', 'utf'].includes(name)) {
    const d = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    return (b) => d.decode(b);
  }
  if (['utf-8-sig', 'utf8-sig'].includes(name)) {
    const d = new TextDecoder('utf-8', { fatal: true });
    return (b) => d.decode(b);
  }
  if (['latin-1', 'latin1', 'iso-8859-1', 'iso8859-1', 'l1'].includes(name)) return (b) => b.toString('latin1');
  if (['ascii', 'us-ascii'].includes(name)) {
    return (b) => {
      const bad = b.findIndex((x) => x > 0x7f);
      if (bad >= 0) throw new Error(`'ascii' codec can't decode byte 0x${b[bad].toString(16)} in position ${bad}`);
      return b.toString('latin1');
    };
  }
  if (['utf-16', 'utf16', 'utf-16-le', 'utf-16le', 'utf-16-be', 'utf-16be'].includes(name)) {
    const d = new TextDecoder(name.replace('utf16', 'utf-16').replace('-le', 'le').replace('-be', 'be'), { fatal: true });
    return (b) => d.decode(b);
  }
  throw new Error(`unknown encoding: ${encoding} (todeval's sacrebleu reads utf-8, utf-8-sig, utf-16, latin-1 and ascii)`);
}

/** Lines as Python iterates a file opened with newline="\n": split after each \n, the last kept if not empty. */
function fileLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Lines as Python's universal newlines read stdin: \n, \r\n and \r all end a line. */
function universalLines(text: string): string[] {
  const lines = text.split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function readText(file: string, decode: (b: Buffer) => string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new Error(err.code === 'ENOENT' ? `[Errno 2] No such file or directory: '${file}'` : `${file}: ${err.message}`);
  }
  return decode(file.endsWith('.gz') ? gunzipSync(bytes) : bytes);
}

/** The signature fields as sacreBLEU writes them: its version's value replaced by ours. */
function withVersion(fields: readonly SignatureField[]): SacrebleuField[] {
  return fields.filter(([, v]) => v !== undefined).map(([k, v]) => [k, k === 'version' ? SACREBLEU_DROPIN_VERSION : (v as string | number)] as const);
}

/** Fields of a test's signature (nrefs, bs, ar, seed, then the metric's), with sacreBLEU's seed label. */
function fieldsWithTest(metric: TextMetric, spec: ResampleSpec | null, seedLabel: string): SacrebleuField[] {
  const text = signatureWithTest(metric.signatureFields, spec);
  return withVersion(
    text.split('|').map((kv) => {
      const at = kv.indexOf(':');
      const k = kv.slice(0, at);
      return [k, k === 'seed' ? seedLabel : kv.slice(at + 1)] as const;
    }),
  );
}

const family = (m: TextMetric) => (m.key === 'bleu' ? 'BLEU' : m.key === 'chrf' ? 'chrF' : 'TER');

/** Runs sacreBLEU's command line on parsed arguments: what it prints and its exit code. */
export async function runSacrebleu(args: SacrebleuArgs, io: SacrebleuIo): Promise<SacrebleuOutcome> {
  let stdout = '';
  let stderr = '';
  const info = (msg: string) => {
    if (!args.quiet) stderr += `sacreBLEU: ${msg}\n`;
  };
  const error = (...lines: string[]): never => {
    for (const l of lines) stderr += `sacreBLEU: ${l}\n`;
    throw new Exit(1);
  };
  try {
    stdout = await score(args, io, info, error, (s) => (stderr += s));
    return { stdout, stderr, code: 0 };
  } catch (e) {
    if (e instanceof Exit) return { stdout, stderr, code: e.code };
    // What sacreBLEU raises as a Python exception (a file missing, bytes not in the encoding): one line, exit 1.
    return { stdout, stderr: stderr + `todeval sacrebleu: ${(e as Error).message}\n`, code: 1 };
  }
}

async function score(
  args: SacrebleuArgs,
  io: SacrebleuIo,
  info: (m: string) => void,
  error: (...lines: string[]) => never,
  warn: (s: string) => void,
): Promise<string> {
  const format = (['json', 'text', 'latex'] as const).find((f) => f === io.env.SACREBLEU_FORMAT?.toLowerCase()) ?? args.format;
  const paired = args.pairedBs || args.pairedAr;
  // sacreBLEU builds one metric per name: a name given twice is one metric, in first-given order.
  const asked = [...new Set(args.metrics)];
  if (args.sentenceLevel && asked.length > 1) error('Only one metric can be used in sentence-level mode.');
  if (args.numRefs !== 1 && args.refs.length > 1) {
    error(
      'The --num-refs argument allows you to provide any number of tab-delimited references in a single file.',
      'You can only use it with externally provided references, however (i.e., not with `-t`),',
      'and you cannot then provide multiple reference files.',
    );
  }
  if (args.refs.length === 0) {
    error('If manual references given, make sure to provide them before the -i/--input argument to avoid confusion.', 'Otherwise, I need a predefined test set (-t): todeval does not download test sets.');
  }
  const decode = decoder(args.encoding);

  // References: one stream per file, or --num-refs tab-separated streams in one file.
  const refs: string[][] = Array.from({ length: Math.max(args.refs.length, args.numRefs) }, () => []);
  for (const [k, file] of args.refs.entries()) {
    for (const [n, raw] of fileLines(readText(file, decode)).entries()) {
      const line = pyRstrip(raw);
      if (args.numRefs === 1) {
        refs[k].push(line);
        continue;
      }
      const fields = splitMax(line, '\t', args.numRefs - 1);
      if (fields.length !== args.numRefs) {
        warn(`sacreBLEU: FATAL: line ${n + 1}: expected ${args.numRefs} fields, but found ${fields.length}.\n`);
        throw new Exit(17);
      }
      fields.forEach((f, j) => refs[j].push(f));
    }
  }

  // Systems: one per -i file, or stdin's tab-separated columns.
  let systems: string[][] = [];
  let names: string[] = [];
  if (args.input === null) {
    const lines = universalLines(decode(io.stdin()));
    const first = pyRstrip(lines[0] ?? '').split('\t');
    systems = first.map((s) => [s]);
    for (const line of lines.slice(1)) {
      const fields = pyRstrip(line).split('\t');
      if (fields.length !== first.length) {
        warn('sacreBLEU: FATAL: the number of tab-delimited fields in the input stream differ across lines.\n');
        throw new Exit(17);
      }
      fields.forEach((f, j) => systems[j].push(pyRstrip(f)));
    }
    names = first.map((_, j) => `System ${j + 1}`);
  } else {
    for (const file of args.input) {
      if (names.includes(file)) {
        if (paired && file === names[0]) {
          info(`Ignoring ${pyQuote(file)} as it was also given as the baseline.`);
          continue;
        }
        error(`${pyQuote(file)} already used to name a system.`, 'Make sure to have a different basename for each system.');
      }
      systems.push(fileLines(readText(file, decode)).map(pyRstrip));
      names.push(file);
    }
  }
  if (paired) names = args.input === null ? ['Baseline', ...names.slice(1).map((_, j) => `System ${j + 1}`)] : [`Baseline: ${names[0]}`, ...names.slice(1)];

  if (args.sentenceLevel) {
    if (systems.length > 1) error('Only one system can be evaluated in sentence-level mode.');
    if (args.confidence || paired) error('Statistical tests are unavailable in sentence-level mode.');
  }
  if (paired && systems.length === 1) error('Paired tests require multiple input systems given to --input (-i).');
  if (systems.length > 1 && args.confidence) error('Use paired tests (--paired) for multiple systems.');
  for (const system of systems) {
    if (system.length === 0) error('Test set None contains no sentence');
    if (refs.some((r) => r.length !== system.length)) error('System and reference streams have different lengths.');
  }

  const metrics = new Map<TextMetricKey, TextMetric>();
  for (const key of asked) {
    metrics.set(
      key,
      textMetric(key, refs, {
        bleu: { tokenize: args.tokenize ?? '13a', lowercase: args.lowercase, smoothMethod: args.smoothMethod, smoothValue: args.smoothValue ?? undefined, effectiveOrder: args.sentenceLevel, correctlyRounded: true },
        chrf: { charOrder: args.chrfCharOrder, wordOrder: args.chrfWordOrder, beta: args.chrfBeta, whitespace: args.chrfWhitespace, lowercase: args.chrfLowercase, epsSmoothing: args.chrfEpsSmoothing },
        ter: { caseSensitive: args.terCaseSensitive, asianSupport: args.terAsianSupport, noPunct: args.terNoPunct, normalized: args.terNormalized },
      }),
    );
  }
  const statsOf = (m: TextMetric, system: readonly string[]) => {
    // sacreBLEU's warning for BLEU of text that looks tokenized (lines ending in ' .'), unless --force.
    if (m.key === 'bleu' && !args.force && system.filter((h) => h.endsWith(' .')).length >= 100) {
      warn(
        "sacreBLEU: That's 100 lines that end in a tokenized period ('.')\nsacreBLEU: It looks like you forgot to detokenize your test data, which may hurt your score.\nsacreBLEU: If you insist your data is detokenized, or don't care, you can suppress this message with the `force` parameter.\n",
      );
    }
    return m.segmentStats(system);
  };

  // Seeds as sacreBLEU takes them (SACREBLEU_SEED, default 12345; 'none': drawn) and signs them.
  const seedText = io.env.SACREBLEU_SEED ?? '12345';
  const seedNone = seedText.toLowerCase() === 'none';
  if (!seedNone && !/^\s*[+-]?\d+\s*$/.test(seedText)) throw new Error(`invalid literal for int() with base 10: ${pyQuote(seedText)}`);
  const seed = seedNone ? null : Number(seedText.trim());
  const seedLabel = seedNone ? 'none' : String(seed);

  if (args.sentenceLevel) {
    const m = [...metrics.values()][0];
    const stats = statsOf(m, systems[0]);
    const fields = withVersion(m.signatureFields);
    const sig = formatSacrebleuSignature(fields, family(m), args.short);
    let out = '';
    for (let i = 0; i < systems[0].length; i++) {
      const s = m.scoreOf(segmentRow(stats, m.width, i));
      out += formatSacrebleuScore({ ...s, mean: null, ci: null }, { width: args.width, scoreOnly: args.scoreOnly, signature: sig, fields, json: false }) + '\n';
    }
    return out;
  }

  const shown = format === 'json' && args.detail ? 'text' : format;
  // sacreBLEU prints sorted metric names for one system and without a test; a test keeps the order given.
  const sorted = TEXT_METRICS.filter((k) => metrics.has(k)).map((k) => metrics.get(k)!);
  if (systems.length === 1) {
    const results: string[] = [];
    for (const m of sorted) {
      const stats = statsOf(m, systems[0]);
      const s = m.scoreOf(stats);
      let mean: number | null = null;
      let ci: number | null = null;
      let spec: ResampleSpec | null = null;
      if (args.confidence && args.confidenceN > 1) {
        spec = resampleSpec({ confidence: true, confidenceSamples: args.confidenceN, seed });
        const r = (await runStepsAsync(resampleSystemsSteps([stats], m.stat, spec))).results[0];
        mean = r.mean;
        ci = r.ci;
      }
      const fields = fieldsWithTest(m, spec, seedLabel);
      const sig = formatSacrebleuSignature(fields, family(m), shown !== 'json' && args.short);
      results.push(formatSacrebleuScore({ ...s, mean, ci }, { width: args.width, scoreOnly: args.scoreOnly, signature: sig, fields, json: shown === 'json' }));
    }
    let out = formatSingleResults(results, shown);
    if (args.detail) out += 'No subset information found. Consider using --origlang argument.\n';
    return out;
  }

  info(`Found ${systems.length} systems.`);
  const table: ResultsTable = { systems: names, columns: [], signatures: [], paired: null };
  if (!paired) {
    for (const m of sorted) {
      const cells = systems.map((s) => pyFixedScore(m, statsOf(m, s), args.width));
      table.columns.push({ name: m.name, cells });
      table.signatures.push({ name: m.name, signature: formatSacrebleuSignature(withVersion(m.signatureFields), family(m), args.short) });
    }
  } else {
    const test = args.pairedBs ? 'bs' : 'ar';
    const given = args.pairedBs ? args.pairedBsN : args.pairedArN;
    // sacreBLEU's PairedTest takes 0 (or less) for its default count; its header prints the count given.
    const samples = given > 0 ? given : test === 'bs' ? 1000 : 10000;
    const spec = resampleSpec({ test, samples, seed });
    for (const m of metrics.values()) {
      info(`Pre-computing ${m.key.toUpperCase()} statistics for ${pyQuote(names[0])}`);
      const stats = systems.map((s) => statsOf(m, s));
      const { results } = await runStepsAsync(resampleSystemsSteps(stats, m.stat, spec, { asSacrebleu: true }));
      const cells: PairedCell[] = results.map((r) => ({ score: r.score, pValue: r.pValue, mean: r.mean, ci: r.ci }));
      table.columns.push({ name: m.name, cells });
      table.signatures.push({ name: m.name, signature: formatSacrebleuSignature(fieldsWithTest(m, spec, seedLabel), family(m), args.short) });
    }
    table.paired = { test, n: given };
  }
  return formatResultsTable(table, shown, args.width);
}

/** A score of a system as sacreBLEU's table holds it without a test: formatted to the width. */
function pyFixedScore(m: TextMetric, stats: ArrayLike<number>, width: number): string {
  return formatSacrebleuScore({ ...m.scoreOf(stats), mean: null, ci: null }, { width, scoreOnly: true, signature: '', fields: [], json: false });
}

/** Python's `str.split(sep, maxsplit)` (maxsplit < 0: no limit). */
function splitMax(s: string, sep: string, maxsplit: number): string[] {
  const parts = s.split(sep);
  if (maxsplit < 0 || parts.length <= maxsplit + 1) return parts;
  return [...parts.slice(0, maxsplit), parts.slice(maxsplit).join(sep)];
}

/** Python's `repr(str)` for the plain names sacreBLEU quotes in its messages. */
function pyQuote(s: string): string {
  return s.includes("'") && !s.includes('"') ? `"${s}"` : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
