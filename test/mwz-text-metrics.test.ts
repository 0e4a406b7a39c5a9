// sacreBLEU's chrF (chrF2, chrF++) and TER of MultiWOZ responses in `todeval evaluate` and `compare`:
// computed over exactly the strings mwzeval's BLEU scores, beside mwzeval's fields (which stay as
// they are), with per-turn statistics in --items files that `compare` resamples.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Evaluator } from '../src/metrics/mwz/evaluator.js';
import { mwzItemStats } from '../src/metrics/mwz/item-stats.js';
import { columnSums } from '../src/metrics/significance/paired.js';
import { runComparePipeline } from '../src/pipeline/compare.js';
import { runEvaluatePipeline } from '../src/pipeline/evaluate.js';
import { itemsFileJson, loadItemSource } from '../src/report/stats/item-files.js';
import { runCli } from './helpers/cli.js';
import { settled } from './helpers/reference-corpus.js';
import { sacrebleuAnswer } from './helpers/reference-memo.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { suiteTempDir, tempDir } from './helpers/temp.js';

// Corpus scores are the same arithmetic on the same integer statistics as sacreBLEU's: 1e-9 leaves
// room only for a last-bit difference in a division (the bar of test/chrf-ter.test.ts).
const EXACT = 1e-9;

// A turn of the event loop between long synchronous steps: vitest's worker answers its runner
// meanwhile (a minute of synchronous work on a busy machine times its RPC out).
const yieldTurn = () => new Promise((resolve) => setImmediate(resolve));

const FIXTURE = JSON.parse(readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'mwz-text-metrics.json'), 'utf8')) as { convlab: unknown; predictions: unknown };

/** A data dir holding only the fixture's two ConvLab dialogues (what BLEU, chrF and TER read). */
function fakeDataDir(): string {
  const dir = tempDir('mwz-text');
  mkdirSync(path.join(dir, 'multiwoz', 'db'), { recursive: true });
  writeFileSync(path.join(dir, 'multiwoz', 'convlab_mwz21_test.json'), JSON.stringify(FIXTURE.convlab));
  writeFileSync(path.join(dir, 'multiwoz', 'booked_domains.json'), '{}');
  return dir;
}

// sacreBLEU 2.6.0's corpus scores of the strings the Evaluator scores for this fixture (its
// bleuStrings: six normalized responses against their delexicalized references), printed by
// test/helpers/sacrebleu-corpus.py; the data-dependent suite below re-runs that peer on real systems.
const SACREBLEU_FIXTURE = {
  BLEU: 19.17787700090767,
  chrF2: 39.883390345355,
  'chrF2++': 40.39285240860108,
  TER: 63.63636363636363,
  chrfSignature: 'nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.x',
  chrfPlusSignature: 'nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.x',
  terSignature: 'nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.x',
};

describe('chrF and TER of MultiWOZ responses (a two-dialogue fixture, no data needed)', () => {
  it("equal sacreBLEU's over BLEU's strings, beside mwzeval's fields, which do not change", () => {
    const dataDir = fakeDataDir();
    const plain = new Evaluator({ dataDir, bleu: true, noCache: true });
    const withText = plain.withMetrics({ bleu: true, chrf: true, ter: true });
    const a = plain.evaluate(FIXTURE.predictions);
    const b = withText.evaluate(FIXTURE.predictions);
    expect(Math.abs(b.bleu!.mwz21 - SACREBLEU_FIXTURE.BLEU)).toBeLessThan(EXACT);
    expect(Math.abs(b.chrf!.mwz21 - SACREBLEU_FIXTURE.chrF2)).toBeLessThan(EXACT);
    expect(Math.abs(b.ter!.mwz21 - SACREBLEU_FIXTURE.TER)).toBeLessThan(EXACT);
    expect(b.details.chrf).toMatchObject({ name: 'chrF2', signature: SACREBLEU_FIXTURE.chrfSignature });
    expect(b.details.ter).toMatchObject({ name: 'TER', signature: SACREBLEU_FIXTURE.terSignature });
    // mwzeval's own keys and numbers are those of a run without the text metrics.
    const { chrf: _c, ter: _t, signature: sigB, details: { chrf: _dc, ter: _dt, ...detailsB }, ...restB } = b;
    const { signature: sigA, details: detailsA, ...restA } = a;
    expect(restB).toEqual(restA);
    expect(detailsB).toEqual(detailsA);
    expect(a).not.toHaveProperty('chrf');
    const { chrf, ter, ...sigRest } = sigB;
    expect(sigRest).toEqual(sigA);
    expect(chrf).toBe(`chrF2,${SACREBLEU_FIXTURE.chrfSignature.replaceAll('|', ',')}`);
    expect(ter).toBe(SACREBLEU_FIXTURE.terSignature.replaceAll('|', ','));
    // chrF++ (word order 2) is named and signed as sacreBLEU does.
    const plus = plain.withMetrics({ chrf: { wordOrder: 2 } }).evaluate(FIXTURE.predictions);
    expect(Math.abs(plus.chrf!.mwz21 - SACREBLEU_FIXTURE['chrF2++'])).toBeLessThan(EXACT);
    expect(plus.details.chrf).toMatchObject({ name: 'chrF2++', signature: SACREBLEU_FIXTURE.chrfPlusSignature });
  });

  it('per-turn statistics survive an --items file and sum to the corpus scores', () => {
    const dataDir = fakeDataDir();
    const ev = new Evaluator({ dataDir, chrf: { wordOrder: 2 }, ter: true, noCache: true });
    const r = ev.evaluateValidated(ev.validate(FIXTURE.predictions), undefined, { items: true });
    const file = path.join(dataDir, 'run.items.json');
    writeFileSync(file, JSON.stringify(itemsFileJson(r.signature, mwzItemStats(r.items!, { chrf: { wordOrder: 2 } }))));
    const items = loadItemSource(file).items;
    expect(Object.keys(items).sort()).toEqual(['chrf', 'ter']);
    for (const [id, expected] of [['chrf', SACREBLEU_FIXTURE['chrF2++']], ['ter', SACREBLEU_FIXTURE.TER]] as const) {
      const m = items[id];
      expect(m.level).toBe('turn');
      expect(m.ids).toHaveLength(6);
      expect(new Set(m.dialogues)).toEqual(new Set(['sng0901', 'mul0902']));
      // The metric rebuilt from the file's spec scores the summed rows as sacreBLEU scores the corpus.
      expect(Math.abs(m.metric.score(columnSums(m.stats, m.metric.width), 0) - expected)).toBeLessThan(EXACT);
    }
    expect(items.chrf.metric.name).toBe('chrF2++');
  });
});

const sacrebleuDir = process.env.SACREBLEU_DIR;
const peerMissing = !sacrebleuDir
  ? 'SACREBLEU_DIR is not set (a sacreBLEU source checkout: git clone https://github.com/mjpost/sacrebleu)'
  : !existsSync(path.join(sacrebleuDir, 'sacrebleu'))
    ? `SACREBLEU_DIR=${sacrebleuDir} holds no sacrebleu/ package`
    : undefined;
const python = process.env.SACREBLEU_PYTHON ?? '/usr/bin/python3';
const haveMwz = hasData('multiwoz', 'predictions', 'lava.json');
if (haveMwz && peerMissing) console.warn(`[skip] chrF/TER of MultiWOZ responses against sacreBLEU: ${peerMissing}`);
if (haveMwz && peerMissing && process.env.TODEVAL_REQUIRE_REFERENCES) throw new Error(`the sacreBLEU comparisons must run here (TODEVAL_REQUIRE_REFERENCES is set): ${peerMissing}`);
// Which sacreBLEU the comparisons ran, in the log (its version.py names it).
if (!peerMissing) console.log(`[sacreBLEU] ${/__version__ = "([^"]+)"/.exec(readFileSync(path.join(sacrebleuDir!, 'sacrebleu', 'version.py'), 'utf8'))?.[1] ?? '?'} from ${sacrebleuDir} under ${python}`);

describe.skipIf(!haveMwz || peerMissing !== undefined)("sacreBLEU's corpus_chrf / corpus_ter over mwzeval's BLEU strings of a published system", () => {
  it('lava (1,000 dialogues): BLEU, chrF2, chrF2++ and TER equal to 1e-9', async () => {
    const ev = new Evaluator({ dataDir: DATA_DIR, bleu: true, chrf: true, ter: true });
    const predictions = ev.validate(JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'predictions', 'lava.json'), 'utf8')));
    const strings = ev.bleuStrings(predictions);
    // The peer starts first and computes on another core while ours run here (sacreBLEU's TER takes
    // a while in Python); a turn of the event loop between our evaluations lets it be fed meanwhile.
    const answer = settled(sacrebleuAnswer(python, path.join(REPO_ROOT, 'test', 'helpers', 'sacrebleu-corpus.py'), path.resolve(REPO_ROOT, sacrebleuDir!), JSON.stringify(strings)));
    await yieldTurn();
    const ours = ev.evaluateValidated(predictions);
    await yieldTurn();
    const plus = ev.withMetrics({ chrf: { wordOrder: 2 } }).evaluateValidated(predictions);
    expect(strings.hyps).toHaveLength(ours.details.turns);
    const peerRun = await answer();
    expect(peerRun.code, peerRun.stderr).toBe(0);
    const peer = JSON.parse(peerRun.stdout) as Record<string, { score: number; signature: string }>;
    const pairs: [string, number][] = [
      ['BLEU', ours.bleu!.mwz21],
      ['chrF2', ours.chrf!.mwz21],
      ['chrF2++', plus.chrf!.mwz21],
      ['TER', ours.ter!.mwz21],
    ];
    const diffs = pairs.map(([name, score]) => [name, Math.abs(score - peer[name].score)] as const);
    console.log(`lava vs sacreBLEU (${peerRun.how}): ${pairs.map(([n, s]) => `${n} ${s} (|diff| ${diffs.find(([d]) => d === n)![1]})`).join(', ')}`);
    for (const [name, d] of diffs) expect(d, name).toBeLessThan(EXACT);
    const sig = (s: string) => s.replace(/version:[^|]+$/, 'version:2.x');
    expect(ours.details.chrf!.signature).toBe(sig(peer.chrF2.signature));
    expect(plus.details.chrf!.signature).toBe(sig(peer['chrF2++'].signature));
    expect(ours.details.ter!.signature).toBe(sig(peer.TER.signature));
  }, 300_000);
});

describe.skipIf(!hasData('multiwoz', 'predictions', 'lava.json'))('evaluate --chrf --ter --items, then compare on them', () => {
  const dir = suiteTempDir('mwz-text-compare');
  const predictions = (name: string) => path.join(DATA_DIR, 'multiwoz', 'predictions', `${name}.json`);

  it("compare's chrF and TER of evaluate's --items files are evaluate's scores, and the same as of the predictions", async () => {
    const runs: Record<string, Awaited<ReturnType<typeof runEvaluatePipeline>>> = {};
    for (const name of ['hdsa', 'lava']) {
      await yieldTurn();
      runs[name] = await runEvaluatePipeline({ input: predictions(name), dataDir: DATA_DIR, bleu: true, chrf: true, ter: true, itemsFile: path.join(dir, `${name}.items.json`) });
    }
    const opts = { test: 'ar' as const, samples: 200, metrics: ['chrf', 'ter'], dataDir: DATA_DIR };
    const fromItems = await runComparePipeline({ ...opts, runs: ['hdsa', 'lava'].map((n) => path.join(dir, `${n}.items.json`)) });
    expect(fromItems.comparisons.map((c) => [c.id, c.metric, c.unit])).toEqual([
      ['chrf', 'chrF2', 'dialogue'],
      ['ter', 'TER', 'dialogue'],
    ]);
    const [chrf, ter] = fromItems.comparisons;
    expect(chrf.systems.map((s) => s.score)).toEqual([runs.hdsa.chrf!.mwz21, runs.lava.chrf!.mwz21]);
    expect(ter.systems.map((s) => s.score)).toEqual([runs.hdsa.ter!.mwz21, runs.lava.ter!.mwz21]);
    // mwzeval predictions given straight to compare get the same statistics when --metric names them
    // (hdsa and lava: neither predicts states, so both runs' other metrics are alike too).
    await yieldTurn();
    const fromPredictions = await runComparePipeline({ ...opts, runs: [predictions('hdsa'), predictions('lava')], chrf: true, ter: true });
    expect(fromPredictions.comparisons.map((c) => c.systems)).toEqual(fromItems.comparisons.map((c) => c.systems));
  }, 300_000);

  it('the command line: --chrf-word-order 2 gives chrF2++, --ter TER, printed and signed beside BLEU', async () => {
    const r = await runCli(['evaluate', '-i', predictions('lava'), '--data-dir', DATA_DIR, '--limit', '50', '--bleu', '--chrf-word-order', '2', '--ter', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { bleu: Record<string, number>; chrf: Record<string, number>; ter: Record<string, number>; details: { chrf: { name: string } }; signature: Record<string, string> };
    expect(Object.keys(out.chrf)).toEqual(Object.keys(out.bleu));
    expect(out.details.chrf.name).toBe('chrF2++');
    expect(out.signature.chrf).toMatch(/^chrF2\+\+,nrefs:1,.*nw:2/);
    expect(out.signature.ter).toMatch(/^nrefs:1,case:lc,tok:tercom/);
    const text = await runCli(['evaluate', '-i', predictions('lava'), '--data-dir', DATA_DIR, '--limit', '50', '--chrf', '--ter']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/====== chrF2 \(sacreBLEU nrefs:1\|case:mixed\|eff:yes\|nc:6\|nw:0\|space:no\|version:2\.x\) ======\nmwz21 +\d/);
    expect(text.stdout).toMatch(/====== TER \(sacreBLEU nrefs:1\|case:lc\|tok:tercom/);
    // --chrf alone is chrF alone, as -b alone is BLEU alone.
    expect(text.stdout).not.toContain('====== BLEU');
    // compare's --chrf-word-order only says how to compute the chrF that --metric asks for.
    const refused = await runCli(['compare', predictions('hdsa'), predictions('lava'), '--data-dir', DATA_DIR, '--chrf-word-order', '2']);
    expect([refused.code, refused.stderr]).toEqual([2, 'todeval: --chrf-word-order sets the chrF computed for mwzeval predictions: name chrf in --metric (e.g. --metric chrf)\n']);
  }, 300_000);
});
