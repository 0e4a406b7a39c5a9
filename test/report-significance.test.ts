import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildHtmlReport, type PageData } from '../src/report/html/index.js';
import type { CompareResult } from '../src/report/stats/compare.js';
import { HAS_BUILT_CLI, runBuiltCli } from './helpers/cli.js';
import { runInProcess } from './helpers/in-process-cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { scoreExampleRuns, type ExampleRuns } from './helpers/report-fixture.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';

// The ± and "vs baseline" columns of `todeval report` against what `todeval compare --json` and
// `score/evaluate --confidence` print for the same runs and seed (the report reuses their code; these
// tests hold it to their numbers), and the marking of significant p-values.

interface Cell {
  text: string;
  cls: string | null;
  title: string | null;
}

/** The static first paint's cells of one run's row, by column label (the HTML as written, no script run). */
function rowCells(html: string, run: string): Record<string, Cell> {
  const table = html.slice(html.indexOf('<table id="runs">'), html.indexOf('</table>'));
  const row = new RegExp(`<tr class="run[^"]*" data-run="${run.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}">(.*?)</tr>`).exec(table);
  if (!row) throw new Error(`no row for ${run}`);
  const cells: Record<string, Cell> = {};
  for (const m of row[1].matchAll(/<td data-label="([^"]*)"(?: class="([^"]*)")?(?: title="([^"]*)")?>([^<]*)<\/td>/g)) {
    cells[m[1]] = { text: m[4], cls: m[2] ?? null, title: m[3] ?? null };
  }
  return cells;
}

function embeddedData(html: string): PageData {
  const m = /<script type="text\/plain" id="todeval-data">([^<]*)<\/script>/.exec(html);
  if (!m) throw new Error('no embedded data');
  return JSON.parse(gunzipSync(Buffer.from(m[1], 'base64')).toString('utf8')) as PageData;
}

async function compareJson(args: string[]): Promise<CompareResult> {
  const r = await runBuiltCli(['compare', ...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as CompareResult;
}

async function reportHtml(args: string[], out: string): Promise<{ html: string; stdout: string }> {
  const r = await runBuiltCli(['report', ...args, '-o', out]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return { html: readFileSync(out, 'utf8'), stdout: r.stdout };
}

type Json = Record<string, unknown>;

/**
 * A constructed run (a fake, for the marking tests): `from`'s report and per-turn file under another
 * system name, each turn's verdict changed by `verdict`.
 */
function variantRun(dir: string, from: { report: string; turns: string }, system: string, verdict: (faithful: boolean | null) => boolean | null): { report: string; turns: string } {
  const report = JSON.parse(readFileSync(from.report, 'utf8')) as Json & { signature: Json };
  report.system = system;
  report.signature.system = system;
  const [header, ...lines] = readFileSync(from.turns, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
  (header.signature as Json).system = system;
  const turns = lines.map((t) => ({ ...t, faithful: verdict(t.faithful as boolean | null) }));
  const f = { report: path.join(dir, `${system}.json`), turns: path.join(dir, `${system}.turns.jsonl`) };
  writeFileSync(f.report, JSON.stringify(report));
  writeFileSync(f.turns, [header, ...turns].map((l) => JSON.stringify(l)).join('\n') + '\n');
  return f;
}

const fixed = (x: number, d = 2) => x.toFixed(d);

describe.skipIf(!HAS_BUILT_CLI)('todeval report: the ± and vs-baseline columns', () => {
  let runs: ExampleRuns;
  beforeAll(async () => {
    runs = await scoreExampleRuns();
  }, 120_000);

  it("the cells are todeval compare's p-values and the runs' --confidence intervals, for the default settings and for others", async () => {
    const out = path.join(runs.dir, 'sig.html');
    const settings: [report: string[], compare: string[], confidence: string[]][] = [
      [[], [], []],
      [['--seed', '7', '--paired-bs-n', '300', '--confidence-n', '300', '--unit', 'turn'], ['--seed', '7', '--paired-bs-n', '300', '--unit', 'turn'], ['--seed', '7', '--confidence-n', '300', '--unit', 'turn']],
      // Randomization gives p-values only: the ± stays the bootstrap's.
      [['--paired-ar', '--paired-ar-n', '2000'], ['--paired-ar', '--paired-ar-n', '2000'], []],
    ];
    for (const [reportFlags, compareFlags, confidenceFlags] of settings) {
      const { html, stdout } = await reportHtml([runs.system.report, runs.gold.report, '--turns', runs.system.turns, runs.gold.turns, ...reportFlags], out);
      const cmp = await compareJson([runs.system.turns, runs.gold.turns, ...compareFlags]);
      const data = embeddedData(html);
      // The headline metric is the table's first with statistics: validated SGSAcc (of a stand-in model here).
      const sgsacc = cmp.comparisons.find((c) => c.id === 'sgsacc')!;
      expect(data.runs[1].values.pValue).toBe(sgsacc.systems[1].pValue);
      expect(data.runs[0].values.pValue).toBeNull();
      const base = rowCells(html, 'predictions');
      const other = rowCells(html, 'ground-truth');
      expect(base['vs baseline'].text).toBe('baseline');
      const p = sgsacc.systems[1].pValue!;
      // † where compare flags the bootstrap's units as too few (issue 31); randomization is exact here.
      expect(other['vs baseline'].text).toBe(`${p.toFixed(4)}${p <= 0.05 ? ' *' : ''}${(sgsacc as { lowUnits?: boolean }).lowUnits ? ' †' : ''}`);

      // ±: each run's own --confidence interval, as score prints it with the same flags.
      for (const [k, run] of [runs.system, runs.gold].entries()) {
        // In this process (the same command, parsed and run as the CLI does): six score runs that only
        // resume a finished per-turn file and print its intervals, each ~0.5 CPU-s as a process start.
        const conf = await runInProcess(['score', ...scoreArgs(run.turns), '--confidence', ...confidenceFlags, '--json']);
        const block = (JSON.parse(conf) as { confidence: { metrics: Record<string, { ci: number; mean: number; low: number; high: number; lowUnits?: boolean }> } }).confidence;
        expect(data.runs[k].values.ci).toBe(block.metrics.sgsacc.ci);
        expect(rowCells(html, data.runs[k].name)['± 95%'].text).toBe(`± ${fixed(block.metrics.sgsacc.ci)}${block.metrics.sgsacc.lowUnits ? ' †' : ''}`);
        // Every metric in the detail row: its interval, and against the baseline its p-value.
        for (const c of cmp.comparisons) {
          const m = block.metrics[c.id];
          const detail = data.runs[k].values[`sig:${c.id}`] as string;
          expect(detail).toContain(`μ = ${fixed(m.mean)} ± ${fixed(m.ci)} (95% [${fixed(m.low)}, ${fixed(m.high)}])`);
          if (k === 0) expect(detail).toContain('baseline');
          else expect(detail).toContain(`p = ${c.systems[1].pValue!.toFixed(4)}`);
        }
      }
      // The page says which test, n, seed and unit; so does the command's output.
      const caption = /<p class="sub" id="significance">([^<]*)<\/p>/.exec(html)![1];
      expect(caption).toContain(cmp.test === 'bs' ? `paired bootstrap resampling, n = ${cmp.n} resamples` : `paired approximate randomization, n = ${cmp.n} trials`);
      expect(caption).toContain(`Seed ${cmp.seed}; unit resampled: ${cmp.unit === 'dialogue' ? 'dialogues' : 'turns'}`);
      expect(caption).toContain('± and vs baseline are for SGSAcc validated');
      expect(caption).toContain('For runs with a stand-in model these are not SGSAcc figures.');
      expect(stdout).toMatch(/\nsignificance: sgsacc \(a stand-in model's: not SGSAcc\): ± of 2 of 2 runs, p-values of 1 of 1 against the first/);
    }
  }, 240_000);

  /**
   * score's flags that rebuild a run of the fixture from a copy of its per-turn file: every turn is
   * resumed from it (nothing is re-scored), and the report is the run's.
   */
  function scoreArgs(turns: string): string[] {
    const example = path.join(REPO_ROOT, 'examples', 'sgd-mini');
    const predictions = turns === runs.system.turns ? ['--predictions', path.join(example, 'predictions.jsonl')] : [];
    const copy = path.join(runs.dir, `resume-${path.basename(turns)}`);
    copyFileSync(turns, copy);
    return [
      '--dataset', 'sgd', '--dialogues', path.join(example, 'dialogues.json'), '--schema', path.join(example, 'schema.json'),
      '--model', getLexicalStandinDir(), '--device', 'cpu', '--references', path.join(runs.dir, 'refs.jsonl'), ...predictions, '--out', copy,
    ];
  }

  it('marks a significant difference and not a non-significant one, at the level --alpha sets', async () => {
    const dir = runs.dir;
    // The same verdicts: p = 1 (identical statistics), never significant.
    const copy = variantRun(dir, runs.gold, 'gold-copy', (f) => f);
    // Every scorable turn unfaithful against a baseline that has faithful turns: every resample's
    // difference is the whole score, so none exceeds the observed one after centring: p = 1/1001.
    const wrong = variantRun(dir, runs.gold, 'all-unfaithful', (f) => (f === null ? null : false));
    const args = [runs.gold.report, copy.report, wrong.report, '--turns', runs.gold.turns, copy.turns, wrong.turns];
    const out = path.join(dir, 'marks.html');
    const cmp = await compareJson([runs.gold.turns, copy.turns, wrong.turns]);
    const sgsacc = cmp.comparisons.find((c) => c.id === 'sgsacc')!;
    expect(sgsacc.systems[1].pValue).toBe(1);
    expect(sgsacc.systems[2].pValue).toBe(1 / 1001);

    const { html, stdout } = await reportHtml(args, out);
    // The command says the same, run by run.
    // Three dialogues: the bootstrap's p-values and ± are marked † as resting on too few units (issue 31).
    expect(stdout).toMatch(/\n  ground-truth +[\d.]+ ± [\d.]+  baseline †\n  gold-copy +[\d.]+ ± [\d.]+  p = 1\.0000 †\n  all-unfaithful +0\.00 ± 0\.00  p = 0\.0010 \* †\nsignificance: † 3 dialogues: too few for a bootstrap \(fewer than 18\)[^\n]*\n$/);
    const low = '3 dialogues: too few units for a bootstrap (fewer than 18): it claims more than it shows (docs/significance.md)';
    expect(rowCells(html, 'gold-copy')['vs baseline']).toEqual({ text: '1.0000 †', cls: 'nonsig', title: `stand-in model: not SGSAcc; not significant at α = 0.05; ${low}` });
    expect(rowCells(html, 'all-unfaithful')['vs baseline']).toEqual({ text: '0.0010 * †', cls: 'sig', title: `stand-in model: not SGSAcc; significant at α = 0.05; ${low}` });
    expect(rowCells(html, 'ground-truth')['vs baseline'].text).toBe('baseline');
    // The copy's interval is the baseline's.
    const data = embeddedData(html);
    expect(data.runs[1].values.ci).toBe(data.runs[0].values.ci);

    // Below p, nothing is marked.
    const strict = (await reportHtml([...args, '--alpha', '0.0005'], out)).html;
    expect(rowCells(strict, 'all-unfaithful')['vs baseline']).toMatchObject({ text: '0.0010 †', cls: 'nonsig' });
    expect(strict).toContain('* marks p ≤ 0.0005');
  }, 120_000);

  it('says why a run has no p-value, compares on common items when asked, and can be left out', async () => {
    const dir = runs.dir;
    // The system with its last turn missing: other items than the baseline's.
    const [header, ...lines] = readFileSync(runs.system.turns, 'utf8').trim().split('\n');
    const short = path.join(dir, 'short.turns.jsonl');
    writeFileSync(short, [header, ...lines.slice(0, -1)].join('\n') + '\n');
    const out = path.join(dir, 'why.html');
    // A per-turn file shorter than its run report is refused without --allow-partial (issue 31).
    const partialRefused = await runBuiltCli(['report', runs.gold.report, runs.system.report, '--turns', runs.gold.turns, short, '-o', out]);
    expect(partialRefused.code).toBe(2);
    expect(partialRefused.stderr).toMatch(/short\.turns\.jsonl: covers \d+ of the \d+ turns of its run report .*system\.json: pass the complete per-turn file, or --allow-partial/);
    const base = [runs.gold.report, runs.system.report, '--turns', runs.gold.turns, short, '--allow-partial'];

    const refused = await reportHtml(base, out);
    expect(embeddedData(refused.html).runs[1].values.pValue).toBeNull();
    expect(refused.html).toMatch(/<ul id="significance-notes"><li>predictions: no p-value: [^<]*pass --common-items to compare on the \d+ all runs have<\/li>/);
    expect(refused.stdout).toMatch(/\nsignificance: predictions: no p-value: .*--common-items/);
    expect(rowCells(refused.html, 'predictions')['vs baseline'].text).toBe('–');

    const common = await reportHtml([...base, '--common-items'], out);
    const cmp = await compareJson([runs.gold.turns, short, '--common-items']);
    expect(embeddedData(common.html).runs[1].values.pValue).toBe(cmp.comparisons.find((c) => c.id === 'sgsacc')!.systems[1].pValue);

    // A run without per-item statistics gets neither column, and the page says what to pass.
    const partial = await reportHtml([runs.gold.report, runs.system.report, '--turns', runs.gold.turns], out);
    expect(partial.html).toContain('predictions: no interval or p-value: no per-item statistics (pass its per-turn file with --turns');
    expect(rowCells(partial.html, 'predictions')['± 95%'].text).toBe('–');

    // One run: an interval, no baseline to compare with.
    const single = (await reportHtml([runs.gold.report, '--turns', runs.gold.turns], out)).html;
    expect(Object.keys(rowCells(single, 'ground-truth'))).toContain('± 95%');
    expect(Object.keys(rowCells(single, 'ground-truth'))).not.toContain('vs baseline');

    // --no-significance, or no per-item statistics at all: the table as before.
    for (const html of [(await reportHtml([...base, '--no-significance'], out)).html, buildHtmlReport({ runs: [runs.gold.report, runs.system.report] }).html]) {
      expect(Object.keys(rowCells(html, 'ground-truth'))).not.toContain('± 95%');
      expect(html).not.toContain('id="significance"');
    }

    const bad = async (args: string[], pattern: RegExp) => {
      const r = await runBuiltCli(['report', ...args, '-o', path.join(dir, 'never.html')]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(pattern);
    };
    await bad([...base, '--significance-metric', 'inform'], /--significance-metric inform: no run has statistics for it \(these runs have: sgsacc, sgsacc-all, ser, bleu\)/);
    await bad([runs.gold.report, '--items', runs.gold.turns], /gold\.turns\.jsonl: is a score-turns file: --items takes the files evaluate --items writes/);
    // An option's bad value: commander's line naming it (and its usual hint), exit 2.
    const alpha = await runBuiltCli(['report', ...base, '--alpha', '2', '-o', path.join(dir, 'never.html')]);
    expect(alpha.code).toBe(2);
    expect(alpha.stderr).toMatch(/--alpha must be a number in \(0, 1\]/);
    expect(existsSync(path.join(dir, 'never.html'))).toBe(false);
  }, 120_000);
});

describe.skipIf(!HAS_BUILT_CLI || !hasData('multiwoz', 'predictions', 'uniconv.json'))('todeval report: evaluate runs with --items (MultiWOZ, AuGPT and UniConv)', () => {
  const dir = suiteTempDir('report-significance-mwz');
  const f = (n: string) => path.join(dir, n);
  beforeAll(async () => {
    for (const system of ['augpt', 'uniconv']) {
      const r = await runBuiltCli(['evaluate', '-i', path.join(DATA_DIR, 'multiwoz', 'predictions', `${system}.json`), '--data-dir', DATA_DIR, '--bleu', '--success', '--items', f(`${system}.items.json`), '-o', f(`${system}.json`)]);
      if (r.code !== 0) throw new Error(`evaluate ${system}: ${r.stderr}`);
    }
  }, 180_000);

  it("BLEU's ± and p-value are compare's; Success's difference (p = 0.13) is not marked", async () => {
    // The items files in the other order: each goes to the run whose numbers it reproduces.
    const args = [f('augpt.json'), f('uniconv.json'), '--items', f('uniconv.items.json'), f('augpt.items.json')];
    const { html } = await reportHtml(args, f('report.html'));
    const cmp = await compareJson([f('augpt.items.json'), f('uniconv.items.json')]);
    const byId = Object.fromEntries(cmp.comparisons.map((c) => [c.id, c]));
    const data = embeddedData(html);
    expect(data.runs[1].values.pValue).toBe(byId.bleu.systems[1].pValue);
    expect(data.runs.map((r) => r.values.ci)).toEqual(byId.bleu.systems.map((s) => s.ci));
    expect(rowCells(html, 'uniconv')['vs baseline']).toMatchObject({ text: `${byId.bleu.systems[1].pValue!.toFixed(4)} *`, cls: 'sig' });
    expect(byId.success.systems[1].pValue).toBeGreaterThan(0.05);
    expect(data.runs[1].values['sig:success']).toContain(`p = ${byId.success.systems[1].pValue!.toFixed(4)}`);
    expect(data.runs[1].values['sig:success']).not.toContain('*');

    // The columns can follow another metric: Success, whose difference is not significant.
    const success = (await reportHtml([...args, '--significance-metric', 'success'], f('report.html'))).html;
    expect(rowCells(success, 'uniconv')['vs baseline']).toMatchObject({ text: byId.success.systems[1].pValue!.toFixed(4), cls: 'nonsig' });
    expect(success).toContain('± and vs baseline are for Success');

    // An items file of a system not in the report is refused, in one line.
    const r = await runBuiltCli(['report', f('uniconv.json'), '--items', f('augpt.items.json'), '-o', f('never.html')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/augpt\.items\.json: matches no evaluate run given/);
  }, 180_000);

  // Issue 45: a MultiWOZ-only report drew four SGSAcc chart lines reading "not shown ...: needs
  // --turns" and Service/Act filters with nothing in them.
  it('a MultiWOZ-only report draws no SGSAcc chart notes and hides the filters it has nothing for', async () => {
    const { html } = await reportHtml([f('augpt.json'), f('uniconv.json')], f('mwz-only.html'));
    expect(html).not.toMatch(/not shown for [^<]*needs/);
    expect(html).toMatch(/<label hidden>Service <select id="f-service">/);
    expect(html).toMatch(/<label hidden>Act <select id="f-act">/);
    expect(html).toMatch(/<label>Run <select id="f-run">/);
  }, 120_000);
});
