import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildHtmlReport, type PageData } from '../src/report/html/index.js';
import { HAS_BUILT_CLI, runBuiltCli } from './helpers/cli.js';
import { scoreExampleRuns, type ExampleRuns } from './helpers/report-fixture.js';


/** The data a report embeds (gzip + base64 in a text/plain script element). */
function embeddedData(html: string): PageData {
  const m = /<script type="text\/plain" id="todeval-data">([^<]*)<\/script>/.exec(html);
  if (!m) throw new Error('no embedded data');
  return JSON.parse(gunzipSync(Buffer.from(m[1], 'base64')).toString('utf8')) as PageData;
}

describe.skipIf(!HAS_BUILT_CLI)('todeval report (HTML)', () => {
  let runs: ExampleRuns;
  beforeAll(async () => {
    runs = await scoreExampleRuns();
  }, 120_000);

  it('is one self-contained file: inline scripts and styles, nothing fetched from the network', () => {
    const { html } = buildHtmlReport({ runs: [runs.system.report, runs.gold.report], turns: [runs.system.turns, runs.gold.turns] });
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=/i);
    expect(html).not.toMatch(/<img[^>]+src="?https?:/i);
    expect(html).toMatch(/vega 6\.\d+\.\d+, vega-lite 6\.\d+\.\d+, vega-embed 7\.\d+\.\d+ \(inlined\)/);
    // Every <script> closes where it should: no library text ended an element early.
    expect(html.match(/<script/g)!.length).toBe(html.match(/<\/script>/g)!.length);
  });

  it('embeds each run, its signature, and the turns any run lists, each run side by side', () => {
    const { html } = buildHtmlReport({ runs: [runs.system.report, runs.gold.report], turns: [runs.gold.turns, runs.system.turns] });
    const data = embeddedData(html);
    expect(data.runs.map((r) => r.name)).toEqual(['predictions', 'ground-truth']);
    expect(data.runs.every((r) => r.hasTurns && r.standin)).toBe(true);
    const sys = JSON.parse(readFileSync(runs.system.report, 'utf8')) as { signatureText: string; sgsacc: { validated: { all: number } } };
    expect(data.runs[0].signatureText).toBe(sys.signatureText);
    expect(data.runs[0].values.validated).toBe(sys.sgsacc.validated.all);
    // The turns file order does not matter: each file goes to the run with its signature.
    const sunday = data.turns.find((t) => t.id === 'mini_001/3')!;
    expect(sunday.runs.map((e) => e.r)).toEqual([0, 1]);
    expect(sunday.runs[0].why).toContain('failing');
    expect(sunday.runs[0].u).toContain('Sunday');
    expect(sunday.prev).toBe('Lemon, and it has to be gluten free.');
    const pickup = sunday.runs[0].a.find((a) => a[1] === 'pickup_date')!;
    expect(pickup[5]).toBe(0); // not entailed, with or without context
    expect(pickup[3]).toBeLessThan(0.5);
    // Every listed turn is listed for a reason by at least one run.
    expect(data.turns.every((t) => t.runs.some((e) => e.why.length > 0))).toBe(true);
    const turnLines = readFileSync(runs.system.turns, 'utf8').trim().split('\n').length - 1;
    expect(data.turnCounts[0]).toMatchObject({ run: 'predictions', total: turnLines });
  });

  it('paints the runs, the warnings and the first page of failing turns into the HTML itself, every piece of data escaped', () => {
    const { html, data } = buildHtmlReport({ runs: [runs.system.report, runs.gold.report], turns: [runs.system.turns, runs.gold.turns] });
    const before = html.slice(0, html.indexOf('<script'));
    expect(before.match(/<tr class="run standin" data-run="[^"]+">/g)).toHaveLength(2);
    expect(before).toContain('id="warning-banner"');
    // The static list is the page's default one: with two runs, the turns one fails and the other does not, in order.
    const fails = (e: { why: string[] }) => e.why.includes('failing');
    const disagree = data.turns.filter((t) => t.runs.some(fails) && !t.runs.every(fails)).map((t) => t.id);
    expect(disagree.length).toBeGreaterThan(0);
    expect([...before.matchAll(/<article class="turn" data-turn="([^"]+)"/g)].map((m) => m[1])).toEqual(disagree.slice(0, 25));
    expect(before).toContain('<option value="disagree" selected>');
    expect(before).toContain('Just to confirm: a lemon cake that you will pick up on Sunday?');
    // A turn the ground truth fails validation for says so, and what it scored unvalidated, in one badge.
    expect(before).toContain('excluded from validated SGSAcc (negative entailed); scored unvalidated: ');
    // Utterances are data: markup in them stays text.
    const sneaky = path.join(runs.dir, 'sneaky.turns.jsonl');
    const lines = readFileSync(runs.system.turns, 'utf8').trim().split('\n');
    const first = JSON.parse(lines[1]) as { utterance: string; faithful: boolean };
    first.utterance = '<img src=x onerror=alert(1)> & "quotes"';
    first.faithful = false;
    writeFileSync(sneaky, [lines[0], JSON.stringify(first), ...lines.slice(2)].join('\n') + '\n');
    const escaped = buildHtmlReport({ runs: [runs.system.report], turns: [sneaky] }).html;
    expect(escaped).not.toContain('<img src=x');
    expect(escaped).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;');
  });

  it('warns when runs differ in signature or use a stand-in model', () => {
    const other = path.join(runs.dir, 'other-model.json');
    const doc = JSON.parse(readFileSync(runs.gold.report, 'utf8')) as { signature: Record<string, unknown>; system: string };
    doc.signature.model = 'Xenova/roberta-large-mnli';
    doc.signature.revision = 'abc';
    doc.system = 'real-model';
    writeFileSync(other, JSON.stringify(doc));
    const { html } = buildHtmlReport({ runs: [runs.system.report, other] });
    const data = embeddedData(html);
    expect(data.runs[1].standin).toBe(false);
    expect(data.warnings.join('\n')).toMatch(/predictions uses a stand-in NLI model .*NOT SGSAcc/);
    expect(data.warnings.join('\n')).toMatch(/differ in signature \(model: \S+ vs Xenova\/roberta-large-mnli, revision: sha256:\S+ vs abc\)/);
    expect(html).toContain('id="warning-banner"');
    // The same configuration for two systems is comparable: no signature warning, only the stand-in one.
    const same = embeddedData(buildHtmlReport({ runs: [runs.system.report, runs.gold.report] }).html);
    expect(same.warnings.some((w) => w.includes('differ in signature'))).toBe(false);
  });

  it('CLI: writes the file and names it; bad inputs are one line and exit 2, before anything is written', async () => {
    const out = path.join(runs.dir, 'r.html');
    const ok = await runBuiltCli(['report', runs.system.report, runs.gold.report, '--turns', runs.system.turns, runs.gold.turns, '-o', out]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^report: .*r\.html \(\d+\.\d\d MiB; 2 runs, \d+ listed turns; [\d.]+ s\)\n/);
    // Both runs have per-turn files: the significance columns (test/report-significance.test.ts) are said in a line.
    expect(ok.stdout.split('\n').slice(1).join('\n')).toMatch(/^significance: sgsacc \(a stand-in model's: not SGSAcc\): ± of 2 of 2 runs, p-values of 1 of 1 against the first \(paired bootstrap, 1000 resamples, alpha 0\.05\); seed 12345, by dialogue\n  predictions +\d+\.\d\d ± \d+\.\d\d  baseline †\n  ground-truth +\d+\.\d\d ± \d+\.\d\d  p = [01]\.\d{4}( \*)? †\nsignificance: † 3 dialogues: too few for a bootstrap \(fewer than 18\)[^\n]*\n$/);
    expect(readFileSync(out, 'utf8')).toMatch(/^<!doctype html>/);
    // --csv: the failing turns (some run unfaithful), one row per turn and run, as the page's button gives them.
    const csvFile = path.join(runs.dir, 'failing.csv');
    const withCsv = await runBuiltCli(['report', runs.system.report, runs.gold.report, '--turns', runs.system.turns, runs.gold.turns, '-o', out, '--csv', csvFile]);
    expect(withCsv.code).toBe(0);
    const rows = readFileSync(csvFile, 'utf8').split('\r\n').filter((r) => r !== '');
    const failing = new Set(
      [runs.system.turns, runs.gold.turns].flatMap((f) => readFileSync(f, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as { id: string; faithful: boolean | null }).filter((t) => t.faithful === false).map((t) => t.id)),
    );
    expect(rows).toHaveLength(1 + 2 * failing.size);
    expect(new Set(rows.slice(1).map((r) => r.split(',')[0]))).toEqual(failing);
    expect(withCsv.stdout).toContain(`csv: ${csvFile} (${2 * failing.size} rows: failing turns, one row per turn and run)`);

    const bad = async (args: string[], pattern: RegExp) => {
      const r = await runBuiltCli(['report', ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(pattern);
    };
    const notRun = path.join(runs.dir, 'not-a-run.json');
    writeFileSync(notRun, '{"hello": 1}');
    await bad([notRun, '-o', path.join(runs.dir, 'x.html')], /not-a-run\.json: not a todeval run report/);
    await bad([runs.system.report, '--turns', runs.system.report, '-o', path.join(runs.dir, 'x.html')], /not a per-turn file/);
    await bad([runs.gold.report, '--turns', runs.system.turns, '-o', path.join(runs.dir, 'x.html')], /system\.turns\.jsonl: matches no run given/);
    await bad([runs.system.report, '-o', runs.system.report], /would overwrite/);
    await bad([runs.system.report, '-o', path.join(runs.dir, 'x.html'), '--csv', path.join(runs.dir, 'x.html')], /--csv and -o\/--output name the same file/);
    await bad([runs.system.report, '--turns', runs.system.turns, '-o', path.join(runs.dir, 'x.html'), '--csv', runs.system.turns], /would overwrite/);
    expect(existsSync(path.join(runs.dir, 'x.html'))).toBe(false);
  });
});
