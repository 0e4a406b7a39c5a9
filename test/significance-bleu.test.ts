// sacreBLEU parity of BLEU and its statistical tests. Every expected number comes from sacreBLEU
// run from its source (scripts/significance-fixtures.py wrote test/fixtures/significance/*.json):
// tokenizations, corpus BLEU for every tokenizer we offer, paired bootstrap / approximate
// randomization / confidence on our synthetic corpus, and the WMT17 systems of sacreBLEU's own
// test suite (those need a sacreBLEU git checkout in SACREBLEU_DIR). Where SACREBLEU_DIR holds the
// package source without its test data (CI), the same corpus comparisons run on the MultiWOZ
// systems' responses against the live sacreBLEU instead (test/helpers/reference-corpus.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { bootstrapConfidence } from '../src/metrics/significance/paired.js';
import { BLEU_TOKENIZERS, bleuTokenizer, type BleuTokenizerName } from '../src/metrics/text/bleu-tokenizers.js';
import { BleuReferences, corpusBleu } from '../src/metrics/text/bleu.js';
import { bleuStatMetric, compareBleu, type BleuComparison } from '../src/metrics/text/bleu-significance.js';
import { pyRstrip } from '../src/metrics/text/py-string.js';
import { loadFixture, type BleuNumbers, type BleuSynthetic, type SacrebleuBleuConfidence, type SacrebleuBleuTest } from './helpers/sacrebleu-fixtures.js';
import { liveSacrebleu, referenceCorpus, SACREBLEU_DIR, SACREBLEU_PYTHON, settled, yieldTurn, type LiveSacrebleu } from './helpers/reference-corpus.js';

const synthetic = loadFixture<BleuSynthetic>('bleu-synthetic.json');
// sacreBLEU's input handling: every line stripped at the end (its CLI does so for files).
const refs = synthetic.corpus.references.map((s) => s.map(pyRstrip));
const systems = Object.entries(synthetic.corpus.systems).map(([name, lines]) => ({ name, lines: lines.map(pyRstrip) }));
const system = (name: string) => systems.find((s) => s.name === name)!.lines;

/** Our signature says version:2.x where sacreBLEU prints its own version. */
const sig = (s: string) => s.replace(/version:[^|]+$/, 'version:2.x');

// p-values are counts over (n + 1), so they must be equal; means and intervals are averages and
// differences of BLEU scores whose exp/log come from V8 rather than glibc (last-bit differences).
const NUMERIC = 1e-9;

function expectSameTest(ours: BleuComparison, theirs: SacrebleuBleuTest, inputs: { lines: readonly string[] }[]): void {
  expect(ours.signature).toBe(sig(theirs.signature));
  expect(ours.systems.map((s) => s.name)).toEqual(theirs.systems.map((s) => s.name));
  ours.systems.forEach((s, i) => {
    const t = theirs.systems[i];
    expect(s.score, s.name).toBeCloseTo(t.score, 10);
    const sameStats = i > 0 && inputs[i].lines.join('\n') === inputs[0].lines.join('\n');
    // The one rule we change: identical statistics get p = 1 (sacreBLEU: 1 / (n + 1)).
    if (sameStats) {
      expect(t.pValue).toBe(1 / (theirs.n + 1));
      expect(s.pValue).toBe(1);
    } else {
      expect(s.pValue, s.name).toBe(t.pValue);
    }
    if (t.mean === null) expect(s.mean).toBeNull();
    else {
      expect(Math.abs(s.mean! - t.mean), `${s.name} mean`).toBeLessThan(NUMERIC);
      expect(Math.abs(s.ci! - t.ci!), `${s.name} ci`).toBeLessThan(NUMERIC);
    }
  });
}

describe("sacreBLEU's tokenizers", () => {
  it('the fixture has every tokenizer we offer', () => {
    expect(Object.keys(synthetic.tokenized).sort()).toEqual([...BLEU_TOKENIZERS].sort());
  });
  for (const tok of BLEU_TOKENIZERS) {
    it(`${tok}: tokenizes the synthetic corpus as sacreBLEU does`, () => {
      const lines = [...refs[0].slice(0, 60), ...system('sys-worse').slice(0, 60)];
      const t = bleuTokenizer(tok);
      expect(lines.map((l) => t(l))).toEqual(synthetic.tokenized[tok]);
    });
  }

  it("zh keeps sacreBLEU's reading of its '\\u20000' range: U+2001..U+2A6D are split off like CJK", () => {
    // U+2010 (hyphen) and U+2192 (arrow) are inside, U+2A6E (just past the end) is not.
    expect(bleuTokenizer('zh')('a→b‐c\u2a6ed')).toBe('a → b ‐ c\u2a6ed');
  });
});

describe('corpus BLEU equals sacreBLEU for every tokenizer, case and reference count', () => {
  it('covers 5 tokenizers x 2 cases x 1-2 references x 5 systems', () => {
    expect(synthetic.scores).toHaveLength(BLEU_TOKENIZERS.length * 2 * 2 * systems.length);
  });
  for (const tok of BLEU_TOKENIZERS) {
    it(`tokenize ${tok}`, () => {
      for (const e of synthetic.scores.filter((s) => s.tokenize === tok)) {
        const r = corpusBleu(system(e.system), refs.slice(0, e.nrefs), { tokenize: tok, lowercase: e.lowercase });
        const what = `${e.system} lc=${e.lowercase} nrefs=${e.nrefs}`;
        expect({ counts: r.counts, totals: r.totals, sysLen: r.sysLen, refLen: r.refLen }, what).toEqual({ counts: e.counts, totals: e.totals, sysLen: e.sysLen, refLen: e.refLen });
        expect(r.score, what).toBeCloseTo(e.score, 10);
        expect(r.bp, what).toBeCloseTo(e.bp, 12);
        expect(r.signature).toBe(sig(e.signature));
      }
    });
  }
});

describe('paired tests and confidence equal sacreBLEU (same seed, same draws)', () => {
  for (const t of synthetic.tests) {
    it(`${t.test} n=${t.n} seed=${t.seed}${t.nArConfidence > 0 ? ` with ${t.nArConfidence} bootstrap intervals` : ''} (${t.bleu.tokenize ?? '13a'}${t.bleu.lowercase ? ', lowercased' : ''})`, () => {
      const ours = compareBleu(refs, systems, {
        ...t.bleu,
        test: t.test,
        samples: t.n,
        seed: t.seed,
        confidence: t.nArConfidence > 0,
        confidenceSamples: t.nArConfidence > 0 ? t.nArConfidence : undefined,
      });
      expect(ours.n).toBe(t.n);
      expect(ours.seed).toBe(t.seed);
      expectSameTest(ours, t, systems);
    });
  }

  for (const c of synthetic.confidence) {
    it(`--confidence of ${c.system}: n=${c.n} seed=${c.seed} (${c.bleu.tokenize ?? '13a'})`, () => {
      const nrefs = Number(/nrefs:(\d+)/.exec(c.signature)![1]);
      const ours = compareBleu(refs.slice(0, nrefs), [{ name: c.system, lines: system(c.system) }], { ...c.bleu, confidence: true, confidenceSamples: c.n, seed: c.seed });
      expect(ours.signature).toBe(sig(c.signature));
      const s = ours.systems[0];
      expect(s.score).toBeCloseTo(c.score, 10);
      expect(Math.abs(s.mean! - c.mean)).toBeLessThan(NUMERIC);
      expect(Math.abs(s.ci! - c.ci)).toBeLessThan(NUMERIC);
    });
  }

  it('a system compared with itself: p = 1 where sacreBLEU reports 1/(n+1)', () => {
    const bs = synthetic.tests.find((t) => t.test === 'bs')!;
    const copy = bs.systems.find((s) => s.name === 'sys-base-copy')!;
    expect(copy.pValue).toBe(1 / (bs.n + 1));
    const ours = compareBleu(refs, [systems[0], { name: 'copy', lines: systems[0].lines }], { test: 'bs', samples: 200 });
    expect(ours.systems[1].pValue).toBe(1);
    const ar = compareBleu(refs, [systems[0], { name: 'copy', lines: systems[0].lines }], { test: 'ar', samples: 200 });
    expect(ar.systems[1].pValue).toBe(1);
  });
});

describe("sacreBLEU's float32 bootstrap sums, where they round (statistics past 2^24)", () => {
  const f = loadFixture<{ seed: number; samples: number; stats: number[][]; mean: number; ci: number }>('bleu-float32.json');
  const flat = Float64Array.from(f.stats.flat());
  const metric = bleuStatMetric();

  it('reproduces the rounded sums', () => {
    // Same sums, same scores: only V8's exp/log against glibc's could leave a last-bit difference.
    const r = bootstrapConfidence(flat, metric, { samples: f.samples, seed: f.seed, float32: true });
    expect(Math.abs(r.mean - f.mean)).toBeLessThan(1e-12);
    expect(Math.abs(r.ci - f.ci)).toBeLessThan(1e-12);
  });

  it('which exact sums would not (the case is sensitive to the rounding)', () => {
    const r = bootstrapConfidence(flat, metric, { samples: f.samples, seed: f.seed, float32: false });
    expect(Math.abs(r.ci - f.ci)).toBeGreaterThan(1e-7);
  });
});

// ---- A real corpus: sacreBLEU's WMT17 test systems where the sacreBLEU source has them (a git
// checkout), else the five MultiWOZ systems' responses (CI: ../shared has the package source only) ----

interface Wmt17 {
  systems: string[];
  scores: ({ system: string; tokenize: BleuTokenizerName; signature: string } & BleuNumbers)[];
  tests: SacrebleuBleuTest[];
  confidence: Omit<SacrebleuBleuConfidence, 'system'>;
  mosesPValues: Record<string, number>;
  multevalPValues: Record<string, number>;
}

const corpus = await referenceCorpus();
if (typeof corpus === 'string') console.warn(`[skip] corpus BLEU and paired tests against sacreBLEU on a real corpus: ${corpus}`);

/** The paired tests the live sacreBLEU runs on the MultiWOZ responses (WMT17's are the fixture's). */
const MWZ_TESTS = [
  { test: 'bs' as const, n: 1000, seed: 12345 },
  { test: 'ar' as const, n: 1000, seed: 12345 },
];

if (typeof corpus !== 'string') {
  describe(`corpus BLEU and paired tests equal sacreBLEU's on ${corpus.label}`, () => {
    const named = () => corpus.systems.map(([name, lines]) => ({ name, lines }));
    // WMT17: what sacreBLEU wrote to wmt17.json; MultiWOZ: the live sacreBLEU of SACREBLEU_DIR, asked
    // the same questions (every tokenizer's corpus BLEU, the paired tests) once for the suite.
    const fixture = corpus.kind === 'wmt17' ? loadFixture<Wmt17>('wmt17.json') : undefined;
    const tests = fixture ? fixture.tests : MWZ_TESTS;
    // The live sacreBLEU starts as the file is collected, so its child computes on one core while the
    // worker runs the fixture suites above on the other; beforeAll takes its answer (or its error).
    const pending = fixture ? undefined : settled(liveSacrebleu(corpus, { bleu: [...BLEU_TOKENIZERS], tests: MWZ_TESTS }));
    let expected: Pick<LiveSacrebleu, 'scores' | 'tests'> = { scores: [], tests: [] };
    beforeAll(async () => {
      if (fixture) expected = fixture;
      else {
        expected = await pending!();
        console.log(`[sacreBLEU] ${(expected as LiveSacrebleu).sacrebleu} from ${SACREBLEU_DIR} under ${SACREBLEU_PYTHON} (${(expected as LiveSacrebleu).how}): ${corpus.label}`);
      }
    }, 600_000);

    it('corpus BLEU of every system for every tokenizer', async () => {
      expect(expected.scores).toHaveLength(BLEU_TOKENIZERS.length * corpus.systems.length);
      for (const tok of BLEU_TOKENIZERS) {
        const r = new BleuReferences(corpus.refs, { tokenize: tok });
        for (const e of expected.scores.filter((s) => s.tokenize === tok)) {
          await yieldTurn();
          const ours = r.score(corpus.systems.find(([n]) => n === e.system)![1]);
          expect({ counts: ours.counts, totals: ours.totals, sysLen: ours.sysLen, refLen: ours.refLen }, `${e.system} ${tok}`).toEqual({ counts: e.counts, totals: e.totals, sysLen: e.sysLen, refLen: e.refLen });
          expect(ours.score).toBeCloseTo(e.score, 10);
          expect(ours.signature, `${e.system} ${tok}`).toBe(sig(e.signature));
        }
      }
    });

    tests.forEach((t, k) => {
      it(`${t.test} n=${t.n}: sacreBLEU's p-values, means and intervals`, () => {
        const theirs = expected.tests[k];
        expect([theirs.test, theirs.n, theirs.seed]).toEqual([t.test, t.n, t.seed]);
        expectSameTest(compareBleu(corpus.refs, named(), { ...theirs.bleu, test: theirs.test, samples: theirs.n, seed: theirs.seed }), theirs, named());
      });
    });

    if (fixture) {
      it("test_significance.py's cases: bootstrap p within 0.01 of Moses, randomization within 0.01 of multeval", async () => {
        const bs = compareBleu(corpus.refs, named(), { tokenize: 'none', test: 'bs', samples: 2000 });
        await yieldTurn();
        const ar = compareBleu(corpus.refs, named(), { tokenize: 'none', test: 'ar', samples: 10000 });
        expect(Object.keys(fixture.mosesPValues).length).toBe(15);
        for (const [name, p] of Object.entries(fixture.mosesPValues)) expect(Math.abs(bs.systems.find((s) => s.name === name)!.pValue! - p), name).toBeLessThan(1e-2);
        for (const [name, p] of Object.entries(fixture.multevalPValues)) expect(Math.abs(ar.systems.find((s) => s.name === name)!.pValue! - p), name).toBeLessThan(1e-2);
      });
    }
  });
}
