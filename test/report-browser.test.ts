import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHtmlReport } from '../src/report/html/index.js';
import { HAS_BUILT_CLI, runBuiltCli } from './helpers/cli.js';
import { scoreExampleRuns, scoreFullSgdRuns, type ExampleRuns, type FullSgdRuns } from './helpers/report-fixture.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';

// The HTML report opened in Debian's Chromium (headless, no network), as a reader sees it: the
// bundled example, and the whole SGD test set (two runs, ~10,000 listed turns), each at 1,400 px
// and at 420 px (a phone), with JavaScript on and off.
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[skip] ${CHROMIUM} is absent: browser tests of the HTML report are skipped (apt-get install -y chromium; .ci/run installs it)`);
const SCREENSHOT = path.join(REPO_ROOT, 'out', 'report-screenshot.png');
const WIDTHS = [1400, 420] as const;
const canRun = hasChromium && HAS_BUILT_CLI;

/**
 * One Chromium for the whole file, launched by the first suite that needs it (each launch costs a
 * few CPU seconds), closed after the file's last test, however it ended.
 */
let launched: Promise<Browser> | undefined;
const sharedBrowser = (): Promise<Browser> => (launched ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] }));
afterAll(async () => {
  await (await launched?.catch(() => undefined))?.close();
});

interface Opened {
  page: Page;
  problems: string[];
}

/**
 * The file's three tabs, each kept from its first load to the file's end: `suite` holds the page a
 * suite's own tests use, `width` the page of the other width's checks, `off` (in a context with
 * JavaScript off) the page of the no-script checks. Every open is a new load of a report into one of
 * them: a new document, laid out afresh at the width set before it, with nothing of the last one
 * (script state, listeners, layout) left over; the report keeps nothing in storage. A new tab per
 * open cost Chromium a renderer process and its start each time (8 opens: ~1.5 of ~12 CPU seconds).
 */
type TabName = 'suite' | 'width' | 'off';
interface Tab {
  page: Page;
  /** What the current load reported: a fresh list at each load. */
  problems: string[];
}
const contexts = new Map<boolean, Promise<BrowserContext>>();
const tabs = new Map<TabName, Promise<Tab>>();

function context(javaScript: boolean): Promise<BrowserContext> {
  let c = contexts.get(javaScript);
  if (c === undefined) {
    c = sharedBrowser().then((b) => b.newContext({ javaScriptEnabled: javaScript, acceptDownloads: true }));
    contexts.set(javaScript, c);
  }
  return c;
}

function tab(name: TabName): Promise<Tab> {
  let t = tabs.get(name);
  if (t === undefined) {
    t = context(name !== 'off').then(async (ctx) => {
      const opened: Tab = { page: await ctx.newPage(), problems: [] };
      const { page } = opened;
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') opened.problems.push(`${m.type()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => opened.problems.push(`page error: ${e.message}`));
      // Self-contained means no request leaves the file (blob: URLs are the page's own downloads).
      page.on('request', (r) => {
        if (!r.url().startsWith('file:') && !r.url().startsWith('blob:')) opened.problems.push(`request: ${r.url()}`);
      });
      return opened;
    });
    tabs.set(name, t);
  }
  return t;
}

/** `file` loaded afresh in tab `name` at `width` (JavaScript on except in `off`), once its script says it is ready. */
async function open(name: TabName, file: string, width: number): Promise<Opened> {
  const t = await tab(name);
  t.problems = [];
  await t.page.setViewportSize({ width, height: 900 });
  await t.page.goto(`file://${file}`);
  if (name !== 'off') await t.page.waitForSelector('body[data-ready="1"]', { timeout: 120_000 });
  return { page: t.page, problems: t.problems };
}

/** Elements whose box reaches past the right edge of the viewport (clipped, or scrolling the page sideways). */
function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const w = window.innerWidth;
    const out: string[] = [];
    if (document.documentElement.scrollWidth > w) out.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${w}`);
    for (const el of Array.from(document.querySelectorAll('body *'))) {
      const b = el.getBoundingClientRect();
      if (b.width > 0 && b.right > w + 0.5) out.push(`${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''} ends at ${Math.round(b.right)}: ${(el.textContent ?? '').slice(0, 40)}`);
    }
    return out.slice(0, 10);
  });
}

const cardIds = (page: Page) => page.$$eval('#turn-list article.turn', (a) => a.map((t) => t.getAttribute('data-turn')));

/** Distinct turn ids of a CSV the page wrote, in order (the first column; ids never need quoting). */
function csvTurnIds(csv: string): string[] {
  return [...new Set(csv.trim().split('\r\n').slice(1).map((row) => row.split(',')[0]))];
}

async function downloadCsv(page: Page): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  return readFileSync((await download.path())!, 'utf8');
}

/** The labels the chart draws on its y axis (services, acts or runs), with their horizontal extent. */
function axisLabels(page: Page, chart: string): Promise<{ text: string; left: number; right: number }[]> {
  return page.$$eval(`#chart-${chart} svg .role-axis-label text`, (ts) => ts.map((t) => ({ text: t.textContent ?? '', left: t.getBoundingClientRect().left, right: t.getBoundingClientRect().right })));
}

/**
 * The checks every report passes at every width: what "reads at full scale" means here. At
 * SUITE_WIDTH they use the page the calling suite opened (`suitePage`, still untouched: these checks
 * run before the suite's own tests, which then use it), so that a report of 10,000 turns is laid
 * out once less (about 2.5 CPU seconds in Chromium each time); at the other width, a load in the
 * `width` tab.
 */
const SUITE_WIDTH = 1400;
function readsAtEveryWidth(name: string, report: () => { file: string; runs: string[]; perService: string[]; perAct: string[] }, suitePage: () => Opened | undefined) {
  for (const width of WIDTHS) {
    describe(`${name} at ${width} px`, () => {
      let on: Opened;
      beforeAll(async () => {
        on = (width === SUITE_WIDTH ? suitePage() : undefined) ?? (await open('width', report().file, width));
      }, 180_000);

      it('opens without console errors or warnings, and makes no network request', () => {
        expect(on.problems).toEqual([]);
      });

      it('nothing is clipped or scrolls the page sideways; the runs table fits 1,280 px', async () => {
        expect(await overflowing(on.page)).toEqual([]);
        const table = await on.page.$eval('#runs', (t) => ({ width: t.getBoundingClientRect().width, scroll: t.scrollWidth, client: t.clientWidth }));
        expect(table.width).toBeLessThanOrEqual(1280);
        expect(table.scroll).toBeLessThanOrEqual(table.client);
        expect(await on.page.$$eval('#runs tr.run', (rows) => rows.map((r) => r.getAttribute('data-run')))).toHaveLength(report().runs.length);
      });

      it('every service and every act is in its chart, labelled inside the page', async () => {
        for (const [chart, groups] of [['per-service', report().perService], ['per-act', report().perAct]] as const) {
          const labels = await axisLabels(on.page, chart);
          for (const g of groups) {
            const label = labels.find((l) => l.text === g);
            expect(label, `${chart}: ${g}`).toBeDefined();
            expect(label!.left).toBeGreaterThanOrEqual(0);
            expect(label!.right).toBeLessThanOrEqual(width);
          }
        }
      });

      it('with JavaScript off, the runs, the warnings and the first page of failing turns are in the HTML, the same turns the script shows', async () => {
        const off = await open('off', report().file, width);
        expect(await off.page.$$eval('#runs tr.run', (r) => r.length)).toBe(report().runs.length);
        expect(await off.page.textContent('#warning-banner')).toMatch(/stand-in NLI model .*NOT SGSAcc/);
        const ids = await cardIds(off.page);
        expect(ids.length).toBeGreaterThan(0);
        expect(ids.length).toBeLessThanOrEqual(25);
        expect(ids).toEqual(await cardIds(on.page));
        expect(await off.page.isVisible('#filters')).toBe(false); // controls that need the script are hidden
        expect(off.problems).toEqual([]);
        expect(await overflowing(off.page)).toEqual([]);
      });
    });
  }
}

describe.skipIf(!canRun)('the HTML report in Chromium: the bundled example', () => {
  let runs: ExampleRuns;
  let file = '';
  let opened: Opened | undefined;
  let page: Page;
  const perService = () => Object.keys((JSON.parse(readFileSync(runs.system.report, 'utf8')) as { sgsacc: { perService: object } }).sgsacc.perService);
  const perAct = () => Object.keys((JSON.parse(readFileSync(runs.system.report, 'utf8')) as { sgsacc: { perAct: object } }).sgsacc.perAct);

  beforeAll(async () => {
    runs = await scoreExampleRuns();
    file = path.join(runs.dir, 'report.html');
    const cli = await runBuiltCli(['report', runs.system.report, runs.gold.report, '--turns', runs.system.turns, runs.gold.turns, '-o', file, '--csv', path.join(runs.dir, 'failing.csv')]);
    expect(cli.code).toBe(0);
    opened = await open('suite', file, SUITE_WIDTH);
    page = opened.page;
  }, 120_000);

  readsAtEveryWidth('the example', () => ({ file, runs: [runs.system.report, runs.gold.report], perService: perService(), perAct: perAct() }), () => opened);

  it('lists acts without validated actions as such (GOODBYE, INFORM, NOTIFY_FAILURE), not dropped', async () => {
    const report = JSON.parse(readFileSync(runs.system.report, 'utf8')) as { sgsacc: { perAct: Record<string, { validatedN: number }> } };
    const none = Object.entries(report.sgsacc.perAct).filter(([, g]) => g.validatedN === 0).map(([a]) => a);
    expect(none).toEqual(expect.arrayContaining(['GOODBYE', 'INFORM', 'NOTIFY_FAILURE']));
    expect(await page.$$eval('#chart-per-act svg text', (t) => t.filter((x) => x.textContent === 'no validated actions').length)).toBe(2 * none.length);
  });

  it('has one table row per run, and the columns sort', async () => {
    const names = () => page.$$eval('#runs tbody tr.run', (rows) => rows.map((r) => r.getAttribute('data-run')));
    expect(await names()).toEqual(['predictions', 'ground-truth']);
    // predictions: validated 83.33 (one unfaithful turn); ground truth: 100.
    await page.click('#runs thead button[data-key="validated"]');
    expect(await names()).toEqual(['predictions', 'ground-truth']);
    await page.click('#runs thead button[data-key="validated"]');
    expect(await names()).toEqual(['ground-truth', 'predictions']);
    // Each run keeps its detail row (model, counts, the control) under it.
    expect(await page.$$eval('#runs tbody tr', (rows) => rows.map((r) => `${r.className}:${r.getAttribute('data-run')}`))).toEqual([
      'run standin:ground-truth',
      'detail:ground-truth',
      'run standin:predictions',
      'detail:predictions',
    ]);
    // The significance columns are redrawn with the rows: the baseline (the first run given) says
    // so, the other run has its p-value (test/report-significance.test.ts checks the numbers).
    const vs = () => page.$$eval('#runs tbody tr.run td[data-label="vs baseline"]', (tds) => tds.map((t) => t.textContent));
    // The example has three dialogues: too few for a bootstrap interval, so its cells carry † (lowUnits).
    expect(await vs()).toEqual([expect.stringMatching(/^[01]\.\d{4}( \*)? †$/), 'baseline']);
    await page.click('#runs thead button[data-key="pValue"]');
    expect(await names()).toEqual(['ground-truth', 'predictions']);
    expect(await page.$$eval('#runs tbody tr.run td[data-label="± 95%"]', (tds) => tds.map((t) => t.textContent))).toEqual([
      expect.stringMatching(/^± \d+\.\d\d †$/),
      expect.stringMatching(/^± \d+\.\d\d †$/),
    ]);
  });

  it('draws every chart, the outcome mix with its context-only share', async () => {
    const charts = await page.$$eval('figure.chart', (figs) => figs.map((f) => ({ id: f.id, marks: f.querySelectorAll('svg path, svg rect').length })));
    expect(charts.map((c) => c.id)).toEqual(['chart-outcomes', 'chart-per-service', 'chart-per-act', 'chart-agreement']);
    for (const c of charts) expect(c.marks).toBeGreaterThan(5);
    const legend = await page.$$eval('#chart-outcomes svg .role-legend-label text', (t) => t.map((x) => x.textContent));
    expect(legend).toEqual(expect.arrayContaining(['faithful', 'context-only', 'unfaithful']));
  });

  it('with two runs it opens on the turns they disagree on; "both fail" and "failing" are the other lists; the counts add up in one sentence', async () => {
    const files = [runs.system.turns, runs.gold.turns].map((f) =>
      readFileSync(f, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as { id: string; faithful: boolean | null }),
    );
    const fails = files.map((ts) => new Set(ts.filter((t) => t.faithful === false).map((t) => t.id)));
    const ids = [...new Set(files.flatMap((ts) => ts.map((t) => t.id)))];
    const disagree = ids.filter((id) => fails[0].has(id) !== fails[1].has(id));
    const both = ids.filter((id) => fails[0].has(id) && fails[1].has(id));
    // The example's system fails turns the ground truth passes: there is something to disagree on.
    expect(disagree.length).toBeGreaterThan(0);
    expect(await page.$eval('#f-show', (s) => (s as HTMLSelectElement).value)).toBe('disagree');
    expect(await cardIds(page)).toEqual(expect.arrayContaining(disagree));
    expect(new Set(await cardIds(page))).toEqual(new Set(disagree));
    // The status and the sentence above the list: listed = disagree + both fail + the rest, each run's failing turns.
    const listed = Number((await page.textContent('#turn-status'))!.match(/ of ([\d,]+) listed turns match/)![1].replace(/,/g, ''));
    expect(await page.textContent('#turn-status')).toMatch(new RegExp(`^${disagree.length} of ${listed} listed turns match`));
    expect(await page.textContent('#turn-counts')).toBe(
      `${listed} of the ${files[0].length} turns are listed because some run fails, excludes or rescues them: the runs disagree on ${disagree.length}, ` +
        `both fail ${both.length}, and no run fails the other ${listed - disagree.length - both.length} (excluded or rescued only). ` +
        `Failing turns per run: predictions ${fails[0].size}, ground-truth ${fails[1].size}.`,
    );
    await page.selectOption('#f-show', 'both-fail');
    expect(new Set(await cardIds(page))).toEqual(new Set(both));
    // A MultiWOZ-free example still has services and acts to filter by: those filters are drawn.
    expect(await page.isVisible('#f-service')).toBe(true);
    await page.selectOption('#f-show', 'disagree');
  });

  it('failing turns are turns some run fails; rescued and context-only turns are their own filters; badges do not contradict', async () => {
    const files = [runs.system.turns, runs.gold.turns].map((f) =>
      readFileSync(f, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as { id: string; faithful: boolean | null; actions: { contextUsed: boolean; entailed: boolean }[] }),
    );
    const failing = new Set(files.flatMap((ts) => ts.filter((t) => t.faithful === false).map((t) => t.id)));
    await page.selectOption('#f-show', 'failing');
    expect(new Set(await cardIds(page))).toEqual(failing);
    await page.selectOption('#f-show', 'rescued');
    const rescued = new Set(files.flatMap((ts) => ts.filter((t) => t.actions.some((a) => a.contextUsed && a.entailed)).map((t) => t.id)));
    expect(new Set(await cardIds(page))).toEqual(rescued);
    // A turn both runs find faithful, only through the context: not failing.
    expect([...rescued].some((id) => !failing.has(id))).toBe(true);
    await page.selectOption('#f-show', 'failing');
    // mini_001/5: excluded by validation; the badge says so and what it scored unvalidated, nothing else.
    await page.selectOption('#f-show', 'excluded');
    const badge = await page.textContent('article.turn[data-turn="mini_001/5"] section[data-run="ground-truth"] .badge');
    expect(badge).toBe('excluded from validated SGSAcc (negative entailed); scored unvalidated: faithful');
    await page.selectOption('#f-show', 'failing');
  });

  it('filters by service, run and reason; the same turn shows each run side by side', async () => {
    await page.selectOption('#f-show', 'failing');
    const visible = () => page.$$eval('#turn-list article.turn', (a) => a.map((t) => ({ id: t.getAttribute('data-turn'), services: t.getAttribute('data-services') })));
    const all = await visible();
    expect(new Set(all.map((t) => t.services))).toEqual(new Set(['Bakery_1', 'Bikes_1']));
    await page.selectOption('#f-service', 'Bikes_1');
    const bikes = await visible();
    expect(bikes.length).toBeGreaterThan(0);
    expect(bikes.length).toBeLessThan(all.length);
    expect(bikes.every((t) => t.services === 'Bikes_1')).toBe(true);
    await page.selectOption('#f-service', '');
    await page.selectOption('#f-run', { label: 'predictions' });
    expect((await visible()).map((t) => t.id)).toContain('mini_001/3');
    const sides = await page.$$eval('article.turn[data-turn="mini_001/3"] .run-view h4', (h) => h.map((x) => x.textContent));
    expect(sides).toHaveLength(2);
    expect(sides[0]).toMatch(/^predictions.*unfaithful/);
    expect(sides[1]).toMatch(/^ground-truth.*faithful/);
    await page.selectOption('#f-run', '');
  });

  it('the CSV button exports the filtered list, and todeval report --csv the unfiltered one, byte for byte', async () => {
    await page.selectOption('#f-show', 'failing');
    expect(await downloadCsv(page)).toBe(readFileSync(path.join(runs.dir, 'failing.csv'), 'utf8'));
    await page.selectOption('#f-service', 'Bikes_1');
    const csv = await downloadCsv(page);
    expect(csvTurnIds(csv)).toEqual(await cardIds(page));
    expect(csv.split('\r\n')[0]).toMatch(/^turn,services,acts,previous_user_turn,run,verdict,/);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-jsonl')]);
    const lines = readFileSync((await download.path())!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; runs: unknown[] });
    expect(lines.map((l) => l.id)).toEqual(await cardIds(page));
    expect(lines.every((l) => l.runs.length === 2)).toBe(true);
    await page.selectOption('#f-service', '');
  });

  it('writes a screenshot under out/', async () => {
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
  });
});

describe.skipIf(!canRun || !hasData('sgd', 'test', 'schema.json') || !hasData('sgd', 'train', 'schema.json'))(
  'the HTML report in Chromium: the whole SGD test set (lexical stand-in)',
  () => {
    let full: FullSgdRuns;
    let file = '';
    let groups: { perService: string[]; perAct: string[] } = { perService: [], perAct: [] };
    // Opened once: the checks at SUITE_WIDTH read it first, then the filters below change it.
    let opened: Opened | undefined;

    beforeAll(async () => {
      // Built once per run: the ground truth over 24,863 turns, and the same under the control (free).
      full = await scoreFullSgdRuns(DATA_DIR);
      file = path.join(full.dir, 'report.html');
      writeFileSync(file, buildHtmlReport({ runs: full.runs, turns: full.turns }).html);
      const doc = JSON.parse(readFileSync(full.runs[0], 'utf8')) as { dataset: { turns: number }; sgsacc: { perService: object; perAct: object } };
      expect(doc.dataset.turns).toBe(24_863);
      groups = { perService: Object.keys(doc.sgsacc.perService), perAct: Object.keys(doc.sgsacc.perAct) };
      expect(groups.perService).toHaveLength(21);
      opened = await open('suite', file, SUITE_WIDTH);
    }, 600_000);
    readsAtEveryWidth('the full SGD report', () => ({ file, runs: full.runs, ...groups }), () => opened);

    describe('filters and exports at full scale', () => {
      let page: Page;
      beforeAll(() => {
        page = opened!.page;
      });

      it('the context-only filter lists the turns the control changes, and the CSV holds exactly the filtered turns', async () => {
        await page.selectOption('#f-show', 'context-only');
        await page.selectOption('#f-act', 'REQUEST');
        const status = (await page.textContent('#turn-status'))!;
        const matching = Number(/^([\d,]+) of/.exec(status)![1].replace(/,/g, ''));
        expect(matching).toBeGreaterThan(25); // more than a page: the export is the whole filtered list, not the page
        const ids = csvTurnIds(await downloadCsv(page));
        expect(ids).toHaveLength(matching);
        expect(ids.slice(0, 25)).toEqual(await cardIds(page));
        // Each listed turn has a REQUEST and a rescue the context alone entails, in one run or the other.
        const cards = await page.$$eval('#turn-list article.turn', (a) => a.map((t) => t.querySelectorAll('tr.alone').length));
        expect(cards.every((n) => n > 0)).toBe(true);
      });
    });
  },
);
