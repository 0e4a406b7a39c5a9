import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHtmlReport } from '../src/report/html/index.js';
import { HAS_BUILT_CLI } from './helpers/cli.js';
import { scoreExampleRuns } from './helpers/report-fixture.js';
import { REPO_ROOT } from './helpers/shared.js';

// The report of the example, opened in Debian's Chromium (headless, no network): what a reader sees.
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`[skip] ${CHROMIUM} is absent: browser tests of the HTML report are skipped (apt-get install -y chromium; .ci/run installs it)`);
const SCREENSHOT = path.join(REPO_ROOT, 'out', 'report-screenshot.png');

describe.skipIf(!hasChromium || !HAS_BUILT_CLI)('the HTML report in Chromium', () => {
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    const runs = scoreExampleRuns();
    const file = path.join(runs.dir, 'report.html');
    const { html } = buildHtmlReport({ runs: [runs.system.report, runs.gold.report], turns: [runs.system.turns, runs.gold.turns] });
    writeFileSync(file, html);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    // Self-contained means no request leaves the file.
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) problems.push(`request: ${r.url()}`);
    });
    await page.goto(`file://${file}`);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30_000 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('opens without console errors or network requests', () => {
    expect(problems).toEqual([]);
  });

  it('has one table row per run, and the columns sort', async () => {
    const names = () => page.$$eval('#runs tbody tr', (rows) => rows.map((r) => r.getAttribute('data-run')));
    expect(await names()).toEqual(['predictions', 'ground-truth']);
    // predictions: validated 83.33 (one unfaithful turn); ground truth: 100.
    await page.click('#runs thead button[data-key="validated"]');
    expect(await names()).toEqual(['predictions', 'ground-truth']);
    await page.click('#runs thead button[data-key="validated"]');
    expect(await names()).toEqual(['ground-truth', 'predictions']);
    expect(await page.textContent('#warning-banner')).toMatch(/stand-in NLI model .*NOT SGSAcc/);
  });

  it('renders every chart as a non-empty SVG', async () => {
    const charts = await page.$$eval('figure.chart', (figs) =>
      figs.map((f) => ({ id: f.id, marks: f.querySelectorAll('svg path, svg rect').length, width: f.querySelector('svg')?.getBoundingClientRect().width ?? 0 })),
    );
    expect(charts.map((c) => c.id)).toEqual(['chart-per-service', 'chart-per-act', 'chart-agreement']);
    for (const c of charts) {
      expect(c.width).toBeGreaterThan(100);
      expect(c.marks).toBeGreaterThan(5);
    }
  });

  it('filters the failing turns by service, run and reason; the same turn shows each run side by side', async () => {
    const visible = () => page.$$eval('#turn-list article.turn', (a) => a.map((t) => ({ id: t.getAttribute('data-turn'), services: t.getAttribute('data-services') })));
    const all = await visible();
    expect(new Set(all.map((t) => t.services))).toEqual(new Set(['Bakery_1', 'Bikes_1']));
    await page.selectOption('#f-service', 'Bikes_1');
    const bikes = await visible();
    expect(bikes.length).toBeGreaterThan(0);
    expect(bikes.length).toBeLessThan(all.length);
    expect(bikes.every((t) => t.services === 'Bikes_1')).toBe(true);
    await page.selectOption('#f-service', '');
    await page.selectOption('#f-reason', 'unfaithful');
    await page.selectOption('#f-run', { label: 'predictions' });
    const unfaithful = (await visible()).map((t) => t.id);
    expect(unfaithful).toContain('mini_001/3');
    const sides = await page.$$eval('article.turn[data-turn="mini_001/3"] .run-view h4', (h) => h.map((x) => x.textContent));
    expect(sides).toHaveLength(2);
    expect(sides[0]).toMatch(/^predictions.*unfaithful/);
    expect(sides[1]).toMatch(/^ground-truth.*faithful/);
    await page.selectOption('#f-reason', '');
    await page.selectOption('#f-run', '');
  });

  it('writes a screenshot under out/', async () => {
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
  });
});
