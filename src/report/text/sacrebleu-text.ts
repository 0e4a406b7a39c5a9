/**
 * What `sacrebleu` prints, to the byte: its score lines and JSON objects for one system, its
 * tables for several (text as tabulate's fancy_grid, latex as latex_booktabs, json as a list), the
 * paired tests' explanation and the signature list. Written from sacreBLEU 2.6.0's behaviour (and
 * tabulate 0.8's layout rules for the two table formats it uses); checked byte for byte against
 * it by test/sacrebleu-dropin.test.ts.
 */
import { pyFixed } from '../../metrics/text/py-string.js';

/** Python's `repr(float)`: the shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = x.toExponential().split('e');
  const e = Number(expText);
  if (e < -4 || e >= 16) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  const s = String(x);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

/** A JSON value as Python's json holds it: every number a float (as sacreBLEU's are). */
export type PyJson = string | number | null | PyJson[] | { [key: string]: PyJson };

/** Python's `json.dumps(value, indent=indent, ensure_ascii=False)`. */
export function pyJsonDumps(value: PyJson, indent: number, depth = 0): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : Number.isFinite(value) ? pyFloatRepr(value) : value > 0 ? 'Infinity' : '-Infinity';
  if (typeof value === 'string') return JSON.stringify(value);
  const pad = ' '.repeat(indent * (depth + 1));
  const end = ' '.repeat(indent * depth);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => pad + pyJsonDumps(v, indent, depth + 1)).join(',\n')}\n${end}]`;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${pad}${JSON.stringify(k)}: ${pyJsonDumps(v, indent, depth + 1)}`).join(',\n')}\n${end}}`;
}

/** One signature field: its key, sacreBLEU's short key (`--short`) and value. */
export type SacrebleuField = readonly [key: string, value: string | number];

// sacreBLEU's abbreviations for --short: the shared keys, then each metric's own.
const SHORT_KEYS: Record<string, Record<string, string>> = {
  '*': { version: 'v', nrefs: '#', test: 't', lang: 'l', subset: 'S', origlang: 'o', bs: 'bs', ar: 'ar', seed: 'rs' },
  BLEU: { case: 'c', eff: 'e', tok: 'tok', smooth: 's' },
  chrF: { case: 'c', eff: 'e', nc: 'nc', nw: 'nw', space: 's' },
  TER: { case: 'c', tok: 't', norm: 'nr', punct: 'pn', asian: 'as' },
};

/** A signature as sacreBLEU formats it, full or `--short` (metricFamily: BLEU, chrF or TER). */
export function formatSacrebleuSignature(fields: readonly SacrebleuField[], metricFamily: string, short: boolean): string {
  const abbr = { ...SHORT_KEYS['*'], ...(SHORT_KEYS[metricFamily] ?? {}) };
  return fields.map(([k, v]) => `${short ? (abbr[k] ?? k) : k}:${v}`).join('|');
}

/** A score and its bootstrap estimate, as sacreBLEU's Score holds it. */
export interface SacrebleuScore {
  name: string;
  score: number;
  verbose: string;
  /** Bootstrap mean and half-interval (--confidence); null without. */
  mean: number | null;
  ci: number | null;
}

/** sacreBLEU's `Score.format(width, score_only, signature, is_json)`. */
export function formatSacrebleuScore(s: SacrebleuScore, o: { width: number; scoreOnly: boolean; signature: string; fields: readonly SacrebleuField[]; json: boolean }): string {
  const w = o.width;
  const plain = pyFixed(s.score, w);
  let sc = plain;
  let confidence: { mean: string; ci: string; text: string } | undefined;
  if (s.mean !== null && s.mean > 0 && s.ci !== null) {
    const mean = pyFixed(s.mean, w);
    const ci = pyFixed(s.ci, w);
    confidence = { mean, ci, text: `μ = ${mean} ± ${ci}` };
    sc += ` (${confidence.text})`;
  }
  if (o.scoreOnly) return sc;
  if (o.json) {
    const d: Record<string, PyJson> = { name: s.name, score: Number(plain), signature: o.signature };
    if (confidence) Object.assign(d, { confidence_mean: Number(confidence.mean), confidence_var: Number(confidence.ci), confidence: confidence.text });
    if (s.verbose) d.verbose_score = s.verbose;
    for (const [k, v] of o.fields) d[k] = String(v);
    return pyJsonDumps(d, 1);
  }
  // The text line only: a sentence-level run formats one a segment.
  return `${o.signature ? `${s.name}|${o.signature}` : s.name} = ${sc}${s.verbose ? ` ${s.verbose}` : ''}`;
}

/** Python's `len`: code points. */
const width = (s: string) => [...s].length;
const padLeft = (s: string, w: number) => ' '.repeat(Math.max(0, w - width(s))) + s;
const center = (s: string, w: number) => {
  const free = Math.max(0, w - width(s));
  return ' '.repeat(Math.floor(free / 2)) + s + ' '.repeat(free - Math.floor(free / 2));
};

/**
 * sacreBLEU's lines for one system (print_single_results): JSON objects alone or in a list; text
 * lines right-aligned on their first `=` (lines without one, as `-b` prints, first and as they are).
 */
export function formatSingleResults(results: readonly string[], format: string): string {
  if (format === 'json') return (results.length > 1 ? `[\n${results.join(',\n')}\n]` : results[0]) + '\n';
  if (results.length === 1) return results[0] + '\n';
  const out: string[] = [];
  const aligned: { cut: number; line: string }[] = [];
  for (const line of results) {
    const at = line.indexOf('=');
    if (at < 0) out.push(line);
    else aligned.push({ cut: width(line.slice(0, at)) - 1, line });
  }
  if (aligned.length > 0) {
    const w = Math.max(...aligned.map((a) => a.cut));
    for (const { cut, line } of aligned) {
      const cps = [...line];
      out.push(padLeft(cps.slice(0, Math.max(0, cut)).join(''), w) + cps.slice(Math.max(0, cut)).join(''));
    }
  }
  return out.map((l) => l + '\n').join('');
}

/** One cell of a multi-system table: a score already formatted, or a paired test's result. */
export interface PairedCell {
  score: number;
  pValue: number | null;
  mean: number | null;
  ci: number | null;
}

export interface ResultsTable {
  /** System names, in order (the baseline's prefixed `Baseline: `). */
  systems: string[];
  /** Per metric name (in sacreBLEU's order): one cell per system. */
  columns: { name: string; cells: (string | PairedCell)[] }[];
  /** Per metric name, its signature as printed. */
  signatures: { name: string; signature: string }[];
  /** The paired test, if one ran: its kind and the samples the command line gave. */
  paired: { test: 'bs' | 'ar'; n: number } | null;
}

const LATEX_ESCAPES: Record<string, string> = {
  '&': '\\&',
  '%': '\\%',
  $: '\\$',
  '#': '\\#',
  _: '\\_',
  '^': '\\^{}',
  '{': '\\{',
  '}': '\\}',
  '~': '\\textasciitilde{}',
  '\\': '\\textbackslash{}',
  '<': '\\ensuremath{<}',
  '>': '\\ensuremath{>}',
};

/**
 * A table as tabulate draws it with sacreBLEU's settings (first column right-aligned, the others
 * centred, cells of several lines in fancy_grid): each column as wide as its widest line or its
 * header plus two, one space of padding each side.
 */
function tabulate(headers: string[], columns: string[][], format: 'fancy_grid' | 'latex_booktabs'): string {
  const cellLines = columns.map((col) => col.map((c) => c.split('\n')));
  const widths = headers.map((h, j) => Math.max(width(h) + 2, ...cellLines[j].flat().map(width)));
  const align = (s: string, j: number) => (j === 0 ? padLeft(s, widths[j]) : center(s, widths[j]));
  const header = headers.map(align);
  const rows = columns[0].map((_, i) => {
    const lines = Math.max(...cellLines.map((col) => col[i].length));
    return Array.from({ length: lines }, (_, l) => cellLines.map((col, j) => (l < col[i].length ? align(col[i][l], j) : ' '.repeat(widths[j]))));
  });
  if (format === 'latex_booktabs') {
    const escape = (s: string) => [...s].map((c) => LATEX_ESCAPES[c] ?? c).join('');
    const row = (cells: string[]) => cells.map((c) => escape(` ${c} `)).join('&') + '\\\\';
    return [`\\begin{tabular}{r${'c'.repeat(headers.length - 1)}}`, '\\toprule', row(header), '\\midrule', ...rows.flatMap((r) => r.map(row)), '\\bottomrule', '\\end{tabular}'].join('\n');
  }
  const line = (l: string, fill: string, sep: string, r: string) => l + widths.map((w) => fill.repeat(w + 2)).join(sep) + r;
  const row = (cells: string[]) => '│' + cells.map((c) => ` ${c} `).join('│') + '│';
  const out = [line('╒', '═', '╤', '╕'), row(header), line('╞', '═', '╪', '╡')];
  rows.forEach((r, i) => {
    if (i > 0) out.push(line('├', '─', '┼', '┤'));
    out.push(...r.map(row));
  });
  out.push(line('╘', '═', '╧', '╛'));
  return out.join('\n');
}

/** The explanation sacreBLEU prints under a paired test's table. */
function pairedExplanation(paired: NonNullable<ResultsTable['paired']>, baseline: string): string[] {
  const bs = paired.test === 'bs';
  const msg = `Paired ${bs ? 'bootstrap resampling' : 'approximate randomization'} test with ${paired.n} ${bs ? 'resampling trials' : 'trials'}`;
  const rule = '-'.repeat(width(msg));
  return [
    rule,
    msg,
    rule,
    ` - Each system is pairwise compared to ${baseline}.`,
    bs ? '   Actual system score / bootstrap estimated true mean / 95% CI are provided for each metric.' : '   Actual system score is provided for each metric.',
    '',
    ' - Null hypothesis: the system and the baseline translations are essentially',
    '   generated by the same underlying process. For a given system and the baseline,',
    '   the p-value is roughly the probability of the absolute score difference (delta)',
    '   or higher occurring due to chance, under the assumption that the null hypothesis is correct.',
    '',
    ' - Assuming a significance threshold of 0.05, the null hypothesis can be rejected',
    '   for p-values < 0.05 (marked with "*"). This means that the delta is unlikely to be attributed',
    '   to chance, hence the system is significantly "different" than the baseline.',
    '   Otherwise, the p-values are highlighted in red.',
    '',
    ' - NOTE: Significance does not tell whether a system is "better" than the baseline but rather',
    '   emphasizes the "difference" of the systems in terms of the replicability of the delta.',
    '',
  ];
}

/** sacreBLEU's multi-system output (print_results_table) in `format`: json, text or latex. */
export function formatResultsTable(t: ResultsTable, format: string, w: number): string {
  if (format === 'json') {
    const list: PyJson[] = t.systems.map((system, i) => {
      const o: Record<string, PyJson> = { system };
      for (const c of t.columns) {
        const cell = c.cells[i];
        o[c.name] = typeof cell === 'string' ? cell : { score: cell.score, p_value: cell.pValue, mean: cell.mean, ci: cell.ci };
      }
      return o;
    });
    return pyJsonDumps(list, 4) + '\n';
  }
  const multiline = format === 'text';
  // sacreBLEU's flag is not reset between metrics: once one metric has a mean, every later title says so.
  let bootstrap = false;
  const headers = ['System'];
  const columns: string[][] = [t.systems];
  for (const c of t.columns) {
    columns.push(
      c.cells.map((cell) => {
        if (typeof cell === 'string') return cell;
        let s = pyFixed(cell.score, w);
        if (cell.mean !== null && cell.ci !== null) {
          bootstrap = true;
          s += ` (${pyFixed(cell.mean, w)} ± ${pyFixed(cell.ci, w)})`;
        }
        if (cell.pValue !== null) s += (multiline ? '\n' : ' ') + `(p = ${pyFixed(cell.pValue, 4)})` + (cell.pValue > 0.05 ? '' : '*');
        return s;
      }),
    );
    headers.push(bootstrap ? `${c.name} (μ ± 95% CI)` : c.name);
  }
  const lines = [tabulate(headers, columns, multiline ? 'fancy_grid' : 'latex_booktabs'), ''];
  if (t.paired) lines.push(...pairedExplanation(t.paired, t.systems.find((s) => s.startsWith('Baseline:')) ?? ''));
  lines.push('-----------------', 'Metric signatures', '-----------------');
  for (const s of t.signatures) lines.push(` - ${s.name.padEnd(10)} ${s.signature}`);
  return lines.join('\n') + '\n';
}
