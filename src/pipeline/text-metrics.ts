import path from 'node:path';
import { runStepsAsync } from '../metrics/significance/steps.js';
import { pyRstrip } from '../metrics/text/py-string.js';
import { compareTextMetricsSteps, type TextCompareOptions, type TextMetricComparison } from '../metrics/text/text-compare.js';
import { InputError } from '../util/errors.js';
import { preloadStdin, STDIN } from '../util/json-file.js';
import { readTextLines } from '../util/text-lines.js';

export interface TextMetricsPipelineOptions extends TextCompareOptions {
  /** Reference files, one segment per line (several: multiple references); `-` reads stdin. */
  references: readonly string[];
  /**
   * System output files, one segment per line, the first the baseline of a paired test; `-` reads
   * stdin. Undefined: stdin, whose tab-separated columns are systems (sacreBLEU's way of piping several).
   */
  systems?: readonly string[];
}

/**
 * The systems: one per file; from stdin without files, one per tab-separated column (named
 * System 1, System 2, ... as sacreBLEU names them).
 */
function readSystems(files: readonly string[] | undefined, segments: number): { name: string; lines: string[] }[] {
  if (files === undefined) {
    const rows = readTextLines(STDIN, 'system output').map((l) => pyRstrip(l).split('\t'));
    const width = rows[0]?.length ?? 1;
    rows.forEach((r, k) => {
      if (r.length !== width) {
        throw new InputError(`line ${k + 1} has ${r.length} tab-separated systems, line 1 has ${width} (without -i, stdin's tab-separated columns are systems, as in sacreBLEU; -i - reads one system with tabs in it)`, { file: 'stdin' });
      }
    });
    if (rows.length !== segments) throw new InputError(`${rows.length} lines, the references have ${segments}`, { file: 'stdin' });
    if (width === 1) return [{ name: 'stdin', lines: rows.map((r) => r[0]) }];
    return Array.from({ length: width }, (_, j) => ({ name: `System ${j + 1}`, lines: rows.map((r) => pyRstrip(r[j])) }));
  }
  const names = new Set<string>();
  return files.map((file) => {
    const name = file === STDIN ? 'stdin' : file;
    if (names.has(name)) throw new InputError('given twice: each system needs its own file', { file });
    names.add(name);
    const lines = readTextLines(file, 'system output').map(pyRstrip);
    if (lines.length !== segments) throw new InputError(`${lines.length} lines, the references have ${segments}`, { file });
    return { name: file === STDIN ? 'stdin' : path.normalize(file), lines };
  });
}

/**
 * `todeval bleu` (sacreBLEU's command line) as a library call: the text files read as sacreBLEU
 * reads them (line ends stripped, stdin columns as systems), then BLEU, chrF and TER of each system
 * with the paired test or intervals asked for. The resampling yields to the event loop
 * (runStepsAsync), so a signal handler (Ctrl-C, SIGTERM) still runs within a second.
 */
export async function runTextMetricsPipeline(o: TextMetricsPipelineOptions): Promise<TextMetricComparison[]> {
  if (o.references.length === 0) throw new InputError('no reference file: give at least one');
  // Read before anything else, without blocking: a silent pipe must not make the command deaf to signals.
  if ([...o.references, ...(o.systems ?? [STDIN])].includes(STDIN)) await preloadStdin();
  // sacreBLEU strips the end of every line it reads, references and systems alike.
  const references = o.references.map((f) => readTextLines(f, 'reference').map(pyRstrip));
  // sacreBLEU scores an empty corpus as 0.0; a score of nothing is a mistake in the input, not a result.
  if (references[0].length === 0) throw new InputError('the reference has no lines: there is nothing to score', { file: o.references[0] });
  references.forEach((ref, k) => {
    if (ref.length !== references[0].length) throw new InputError(`${ref.length} lines, the first reference has ${references[0].length}`, { file: o.references[k] });
  });
  const systems = readSystems(o.systems, references[0].length);
  if (o.test && systems.length < 2) throw new InputError(`--paired-${o.test} compares systems with the first one: give at least two -i files`);
  const { metrics, bleu, chrf, ter, test, samples, confidence, confidenceSamples, seed } = o;
  return runStepsAsync(compareTextMetricsSteps(references, systems, { metrics, bleu, chrf, ter, test, samples, confidence, confidenceSamples, seed }));
}
