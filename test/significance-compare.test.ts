// Paired tests over todeval's own per-item outputs (`todeval compare`, evaluate/score --confidence):
// the per-item sufficient statistics must reproduce each command's own figures exactly (a resample
// is only as right as its full sample), runs that are not comparable are refused, and the dialogue
// and turn units resample what they say.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gcdf1ItemStats } from '../src/metrics/gcdf1/item-stats.js';
import { mwzItemStats } from '../src/metrics/mwz/item-stats.js';
import { turnItemStats } from '../src/metrics/sgsacc/item-stats.js';
import type { TurnScore } from '../src/metrics/sgsacc/types.js';
import { runConfidence } from '../src/metrics/significance/confidence.js';
import { byDialogue, metricItems, ratioMetric, selectItems, type RunItems } from '../src/metrics/significance/items.js';
import { bootstrapConfidence, pairedBootstrap } from '../src/metrics/significance/paired.js';
import { rerankItemStats } from '../src/rerank/item-stats.js';
import type { RerankResult } from '../src/rerank/rerank.js';
import { compareRuns, formatComparison } from '../src/report/stats/compare.js';
import type { ItemSource } from '../src/report/stats/item-files.js';
import { makeSignature } from '../src/util/signature.js';
import { runCli } from './helpers/cli.js';
import { DATA_DIR, hasData } from './helpers/shared.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'todeval-compare-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A run of `dialogues` dialogues of `turns` turns each; turn k of dialogue d is faithful when ok(d, k). */
function sgsaccRun(name: string, ok: (d: number, k: number) => boolean, opts: { dialogues?: number; turns?: number; signature?: Record<string, unknown> } = {}): ItemSource {
  const scores: TurnScore[] = [];
  for (let d = 0; d < (opts.dialogues ?? 40); d++) {
    for (let k = 0; k < (opts.turns ?? 5); k++) {
      scores.push({ id: `dlg${d}/${2 * k + 1}`, services: ['Hotels_1'], validation: k === 4 ? 'excluded' : 'validated', faithful: ok(d, k), actions: [] });
    }
  }
  return {
    file: `${name}.turns.jsonl`,
    kind: 'score-turns',
    name,
    signature: makeSignature({ metric: 'sgsacc-turns', model: 'm', validation: true, system: name, predictions: name, ...opts.signature }),
    items: turnItemStats(scores, { validation: true }),
  };
}

describe('per-item statistics', () => {
  it('a rate is the sum of numerators over the sum of denominators; dialogues sum their turns', () => {
    const m = metricItems(ratioMetric('acc'), 'turn', ['a/1', 'a/3', 'b/1'], ['a', 'a', 'b'], [[1, 1], [0, 1], [1, 1]]);
    const d = byDialogue(m);
    expect(d.ids).toEqual(['a', 'b']);
    expect(Array.from(d.stats)).toEqual([1, 2, 1, 1]);
    expect(m.metric.score(Float64Array.of(2, 3), 0)).toBeCloseTo(200 / 3, 12);
    expect(ratioMetric('x').score(Float64Array.of(0, 0), 0)).toBe(0);
    expect(Array.from(selectItems(m, ['b/1', 'a/1']).stats)).toEqual([1, 1, 1, 1]);
  });

  it('score turns: validated SGSAcc counts validated turns only, unvalidated every scorable turn', () => {
    const run = sgsaccRun('a', (_d, k) => k !== 1);
    // 5 turns per dialogue, turn 4 excluded, turn 1 unfaithful: validated 3/4, all 4/5.
    const score = (id: string) => run.items[id].metric.score(Float64Array.from(sumColumns(run.items[id].stats, 2)), 0);
    expect(score('sgsacc')).toBeCloseTo(75, 12);
    expect(score('sgsacc-all')).toBeCloseTo(80, 12);
    expect(run.items.ser).toBeUndefined(); // records without slotError: an older per-turn file
  });

  it('rerank: the chosen candidate realised actions over actions; hallucination among checked choices', () => {
    const r = (id: string, fidelity: number, actions: number, hallucinated: boolean | null): RerankResult => ({
      id,
      chosen: { system: 's', text: id, fidelity },
      actions,
      candidates: [{ system: 's', text: id, fidelity, realised: [], hallucinated }],
    });
    const items = rerankItemStats([r('1', 2, 3, true), r('2', 1, 1, null), r('3', 0, 2, false)]);
    expect(Array.from(sumColumns(items.realised.stats, 2))).toEqual([3, 6]);
    expect(Array.from(sumColumns(items.hallucination.stats, 2))).toEqual([1, 2]);
    expect(items.realised.level).toBe('item');
  });

  it('gcdf1: a dialogue without a combined score counts in neither sum (the mean is over dialogues that have one)', () => {
    const f1 = (f: number) => ({ f1: f, precision: f, recall: f });
    const items = gcdf1ItemStats({ a: { scores: { igcd_f1: { combined: f1(0.5) }, rgcd_f1: {} } }, b: { scores: { igcd_f1: { combined: f1(1) }, rgcd_f1: { combined: f1(0.25) } } } });
    expect(Array.from(items.igcdf1.stats)).toEqual([0.5, 1, 1, 1]);
    expect(Array.from(items.rgcdf1.stats)).toEqual([0, 0, 0.25, 1]);
  });

  it('mwz: BLEU and JGA per turn, Inform and Success per dialogue; JGA keeps mwzeval\'s 1e-10', () => {
    const items = mwzItemStats({ d1: { inform: true, success: false, jointCorrect: [true, false] }, d2: { inform: false, success: false, jointCorrect: [true] } });
    expect(items.jga.level).toBe('turn');
    expect(items.jga.metric.score(Float64Array.of(2, 3), 0)).toBe((100 * 2) / (3 + 1e-10));
    expect(items.inform.level).toBe('dialogue');
    expect(items.bleu).toBeUndefined();
  });
});

function sumColumns(stats: Float64Array, w: number): number[] {
  const s = new Array<number>(w).fill(0);
  stats.forEach((v, i) => (s[i % w] += v));
  return s;
}

describe('compareRuns', () => {
  const base = sgsaccRun('base', (d, k) => (d + k) % 3 !== 0);
  const better = sgsaccRun('better', (d, k) => (d + k) % 7 !== 0);

  it('compares every metric both runs have, resampling dialogues by default', () => {
    const r = compareRuns([base, better]);
    expect(r.comparisons.map((c) => c.id)).toEqual(['sgsacc', 'sgsacc-all']);
    const c = r.comparisons[0];
    expect({ unit: c.unit, units: c.units, test: c.test, n: c.n, seed: c.seed }).toEqual({ unit: 'dialogue', units: 40, test: 'bs', n: 1000, seed: 12345 });
    // The same numbers as the tests run directly on the dialogue sums.
    const direct = pairedBootstrap(byDialogue(base.items.sgsacc).stats, [byDialogue(better.items.sgsacc).stats], base.items.sgsacc.metric);
    expect(c.systems[1].pValue).toBe(direct.systems[0].pValue);
    expect(c.systems[1].mean).toBe(direct.systems[0].mean);
    expect(formatComparison(r)).toMatch(/SGSAcc\s+40 dialogues\s+base/);
  });

  it('--unit turn resamples turns: more units, another interval', () => {
    const d = compareRuns([base, better]).comparisons[0];
    const t = compareRuns([base, better], { unit: 'turn' }).comparisons[0];
    expect(t.units).toBe(200);
    expect(t.unit).toBe('turn');
    expect(t.systems[0].score).toBe(d.systems[0].score);
    expect(t.systems[0].ci).not.toBe(d.systems[0].ci);
  });

  it('a run compared with itself: p = 1', () => {
    const r = compareRuns([base, { ...base, name: 'again' }], { test: 'ar', samples: 500 });
    expect(r.comparisons.every((c) => c.systems[1].pValue === 1)).toBe(true);
  });

  it('refuses another configuration, naming the key; the system\'s own keys may differ', () => {
    const other = sgsaccRun('x', () => true, { signature: { model: 'other-model' } });
    expect(() => compareRuns([base, other])).toThrow(/signature differs from the baseline's .* apart from the system: model: m vs other-model/);
    expect(() => compareRuns([base, { ...better, kind: 'gcdf1' }])).toThrow(/compare runs of the same command/);
  });

  it('refuses different items unless asked to keep the common ones, and says how many each run leaves out', () => {
    const fewer = sgsaccRun('fewer', () => true, { dialogues: 38 });
    expect(() => compareRuns([base, fewer])).toThrow(/sgsacc: 190 turns, the baseline base.turns.jsonl has 200 \(10 only in the baseline, 0 only here\): pass --common-items/);
    const r = compareRuns([base, fewer], { commonItems: true });
    expect(r.comparisons[0].units).toBe(38);
    expect(r.comparisons[0].dropped).toEqual({ base: 10, fewer: 0 });
    // The same items in another order are the same items.
    const shuffled: ItemSource = { ...better, items: Object.fromEntries(Object.entries(better.items).map(([k, m]) => [k, selectItems(m, [...m.ids].reverse())])) as RunItems };
    expect(compareRuns([base, shuffled]).comparisons[0].systems[1].pValue).toBe(compareRuns([base, better]).comparisons[0].systems[1].pValue);
  });

  it('--metric picks metrics, and refuses one the runs lack', () => {
    expect(compareRuns([base, better], { metrics: ['sgsacc-all'] }).comparisons.map((c) => c.id)).toEqual(['sgsacc-all']);
    expect(() => compareRuns([base, better], { metrics: ['bleu'] })).toThrow(/--metric bleu: not in every run \(these runs have: sgsacc, sgsacc-all\)/);
  });

  it('runConfidence gives each metric the bootstrap interval of its units', () => {
    const c = runConfidence(base.items, { samples: 300, seed: 3 });
    const direct = bootstrapConfidence(byDialogue(base.items.sgsacc).stats, base.items.sgsacc.metric, { samples: 300, seed: 3 });
    expect(c.metrics.sgsacc).toEqual({ metric: 'SGSAcc', ...direct, unit: 'dialogue', units: 40 });
  });
});

// ---- the commands, on the shared MultiWOZ and GCDF1 data ----

const PRED = path.join(DATA_DIR, 'multiwoz', 'predictions');
interface CompareJson {
  test: string;
  n: number;
  seed: number;
  unit: string;
  baseline: string;
  systems: string[];
  signature: string;
  comparisons: { metric: string; id: string; unit: string; units: number; dropped?: Record<string, number>; systems: { name: string; score: number; pValue: number | null; mean: number; ci: number }[] }[];
}
const json = <T,>(r: { code: number; stdout: string; stderr: string }): T => {
  expect(r.stderr.split('\n').filter((l) => l && !l.includes('warning')).join('\n')).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as T;
};

describe.skipIf(!hasData('multiwoz', 'predictions', 'augpt.json'))('todeval compare and evaluate --confidence on MultiWOZ predictions', () => {
  const dataDir = ['--data-dir', DATA_DIR];

  it('the statistics reproduce evaluate\'s figures, an --items file compares as its predictions do, and --confidence adds intervals', async () => {
    const items = path.join(tmp, 'augpt.items.json');
    const report = json<{ bleu: Record<string, number>; success: { inform: { total: number }; success: { total: number } }; dst: { joint_accuracy: number }; confidence: { n: number; seed: number; unit: string; metrics: Record<string, { score: number; mean: number; ci: number; units: number }> } }>(
      await runCli(['evaluate', '-i', path.join(PRED, 'augpt.json'), ...dataDir, '--bleu', '--success', '--dst', '--confidence', '--items', items, '--json']),
    );
    const byPredictions = json<CompareJson>(await runCli(['compare', path.join(PRED, 'augpt.json'), path.join(PRED, 'uniconv.json'), ...dataDir, '--json']));
    const uniconvItems = path.join(tmp, 'uniconv.items.json');
    json(await runCli(['evaluate', '-i', path.join(PRED, 'uniconv.json'), ...dataDir, '--bleu', '--success', '--dst', '--items', uniconvItems, '--json']));
    const byItems = json<CompareJson>(await runCli(['compare', items, uniconvItems, '--json']));
    expect(byItems).toEqual(byPredictions);

    const augpt = Object.fromEntries(byPredictions.comparisons.map((c) => [c.id, c.systems[0]]));
    expect(Object.keys(augpt)).toEqual(['bleu', 'inform', 'success', 'jga']);
    expect(augpt.bleu.score).toBeCloseTo(Object.values(report.bleu)[0], 10);
    // mwzeval rounds the rates to one decimal; the statistics give them unrounded.
    expect(Math.round(augpt.inform.score * 10) / 10).toBe(report.success.inform.total);
    expect(Math.round(augpt.success.score * 10) / 10).toBe(report.success.success.total);
    expect(augpt.jga.score).toBeCloseTo(report.dst.joint_accuracy, 10);
    expect({ n: report.confidence.n, seed: report.confidence.seed, unit: report.confidence.unit }).toEqual({ n: 1000, seed: 12345, unit: 'dialogue' });
    expect(report.confidence.metrics.bleu.score).toBeCloseTo(augpt.bleu.score, 10);
    // The interval --confidence reports is the baseline's own in a paired test (same seed, same draws).
    expect(report.confidence.metrics.inform.mean).toBe(augpt.inform.mean);
    expect(report.confidence.metrics.inform.ci).toBe(augpt.inform.ci);
  }, 240_000);

  it('refuses predictions of different dialogues in one line, compares their common dialogues with --common-items', async () => {
    const refused = await runCli(['compare', path.join(PRED, 'damd.json'), path.join(PRED, 'augpt.json'), ...dataDir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n').filter((l) => !l.includes('warning'))).toEqual([
      `todeval: ${path.join(PRED, 'augpt.json')}: bleu: 7372 turns, the baseline ${path.join(PRED, 'damd.json')} has 7354 (0 only in the baseline, 18 only here): pass --common-items to compare on the 7354 all runs have`,
    ]);
    const r = json<CompareJson>(await runCli(['compare', path.join(PRED, 'damd.json'), path.join(PRED, 'augpt.json'), ...dataDir, '--common-items', '--json', '--metric', 'inform,success']));
    expect(r.comparisons.map((c) => [c.id, c.units, c.dropped])).toEqual([
      ['inform', 999, { damd: 0, augpt: 1 }],
      ['success', 999, { damd: 0, augpt: 1 }],
    ]);
  }, 240_000);
});

describe.skipIf(!hasData('gcdf1', 'convlab_baselines', 'test'))('todeval compare on gcdf1 --per-dialogue files', () => {
  const dialogues = path.join(DATA_DIR, 'gcdf1', 'convlab_baselines', 'test');
  const gcdf1 = async (name: string, ...flags: string[]) => {
    const out = path.join(tmp, `${name}.json`);
    const perDialogue = path.join(tmp, `${name}.per-dialogue.json`);
    const r = await runCli(['gcdf1', '-d', dialogues, '--data-dir', DATA_DIR, '--limit', '40', '-o', out, '--per-dialogue', perDialogue, '--progress', 'none', ...flags]);
    expect(r.code).toBe(0);
    return { report: JSON.parse(readFileSync(out, 'utf8')) as { igcd_f1: { combined: number }; rgcd_f1: { combined: number } }, perDialogue };
  };

  it('reproduces I-/R-GCDF1 exactly, and refuses a run under another configuration', async () => {
    const a = await gcdf1('a');
    const r = json<CompareJson>(await runCli(['compare', a.perDialogue, a.perDialogue, '--json']));
    expect(r.comparisons.map((c) => [c.metric, c.systems[0].score, c.systems[1].pValue])).toEqual([
      ['I-GCDF1', a.report.igcd_f1.combined, 1],
      ['R-GCDF1', a.report.rgcd_f1.combined, 1],
    ]);
    const b = await gcdf1('b', '--no-canonical-map');
    const refused = await runCli(['compare', a.perDialogue, b.perDialogue]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(new RegExp(`^todeval: ${b.perDialogue.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: signature differs from the baseline's \\(.*\\) apart from the system: canonicalMap: (\\S+\\/)?multiwoz21_canonical_map\\.json@[0-9a-f]+ vs none\\n$`));
    const report = await runCli(['compare', path.join(tmp, 'a.json'), a.perDialogue]);
    expect(report.code).toBe(2);
    expect(report.stderr).toMatch(/a run report holds no per-item statistics: pass gcdf1's --per-dialogue file/);
  }, 240_000);
});
