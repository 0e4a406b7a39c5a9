import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSgsaccData, runSgsacc, type SgsaccRun, type TurnReferences } from '../src/metrics/sgsacc/index.js';
import { createNliRunner } from '../src/nli/runner.js';
import { buildSentenceTestSet, localisation } from '../scripts/lib/sentence-testset.js';
import { memoryReferences } from '../scripts/lib/memory-references.js';
import { loadItemSource } from '../src/report/stats/item-files.js';
import { runCli as run } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';

// Sentence granularity through the real path (CLI -> rules -> ONNX runner) with the lexical
// stand-in: turn-level outputs stay byte for byte what they were without --granularity, and on the
// labelled test set (scripts/lib/sentence-testset.ts) the inserted and negated sentences are the
// ones flagged. The stand-in's figures are NOT SGSAcc.
const FILE = 'dialogues_017.json';
const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', FILE);
const LIMIT = 40;

describe.skipIf(!hasData('sgd', 'test', FILE))('score --granularity sentence (lexical stand-in, SGD slice)', () => {
  const dir = suiteTempDir('sentences');
  let model = '';
  const base = () => ['score', '--dataset', 'sgd', '--dialogues', DIALOGUES, '--data-dir', DATA_DIR, '--limit', String(LIMIT), '--model', model, '--device', 'cpu', '--hallucination', '--progress', 'none'];
  // Each run in its own folder under the same file names, so the reports can be compared byte for byte.
  const files = (name: string) => (mkdirSync(path.join(dir, name), { recursive: true }), ['--turns', path.join(dir, name, 't.jsonl'), '-o', path.join(dir, name, 'r.json')]);
  const out: Record<string, { stdout: string; report: string; turns: string }> = {};

  beforeAll(async () => {
    model = getLexicalStandinDir();
    for (const [name, extra] of [
      ['plain', []],
      ['turn', ['--granularity', 'turn']],
      ['sentence', ['--granularity', 'sentence']],
    ] as const) {
      const res = await run([...base(), ...extra, ...files(name)]);
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      const undir = (s: string) => s.split(path.join(dir, name)).join('<dir>');
      out[name] = { stdout: undir(res.stdout), report: undir(readFileSync(path.join(dir, name, 'r.json'), 'utf8')), turns: readFileSync(path.join(dir, name, 't.jsonl'), 'utf8') };
    }
  }, 240_000);

  it('turn-level outputs are byte-identical without --granularity and with --granularity turn', () => {
    expect(out.turn.report).toBe(out.plain.report);
    expect(out.turn.turns).toBe(out.plain.turns);
    expect(out.turn.stdout).toBe(out.plain.stdout);
    const report = JSON.parse(out.plain.report) as { signature: Record<string, unknown>; signatureText: string };
    expect(report.signature).not.toHaveProperty('granularity');
    expect(report.signatureText).not.toContain('granularity');
    expect(report).not.toHaveProperty('sentences');
  });

  it('sentence granularity only adds: without its section and signature key the report and per-turn results are the turn-level ones', () => {
    const sentence = JSON.parse(out.sentence.report) as Record<string, unknown> & { signature: Record<string, unknown> };
    const plain = JSON.parse(out.plain.report) as Record<string, unknown> & { signature: Record<string, unknown> };
    expect(sentence.signature.granularity).toBe('sentence');
    // The runner's counters differ (the sentence pairs are more pairs); every score is the same.
    const { sentences, signature, signatureText: _t, nli, ...rest } = sentence as typeof sentence & { nli: { requested: number } };
    const { signature: plainSignature, signatureText: _p, nli: plainNli, ...plainRest } = plain as typeof plain & { nli: { requested: number } };
    expect(rest).toEqual(plainRest);
    expect(nli.requested).toBeGreaterThan(plainNli.requested);
    const { granularity: _g, ...sig } = signature;
    expect(sig).toEqual(plainSignature);
    const s = sentences as { counts: Record<string, number>; unvalidated: { all: number }; confidence: { overall: { metrics: Record<string, { low: number; high: number; score: number }> } } };
    expect(s.counts.sentences).toBeGreaterThanOrEqual(LIMIT);
    expect(s.counts.checked + s.counts.courtesy + s.counts.unchecked).toBe(s.counts.sentences);
    expect(s.counts.supported + s.counts.unsupported + s.counts.contradicted).toBe(s.counts.checked);
    const ci = s.confidence.overall.metrics['hallucination-sentences-all'];
    expect(ci.score).toBeCloseTo(s.unvalidated.all, 10);
    expect(ci.low).toBeLessThanOrEqual(ci.score);
    expect(ci.high).toBeGreaterThanOrEqual(ci.score);
    const lines = (t: string) => t.trim().split('\n').slice(1).map((l) => JSON.parse(l) as Record<string, unknown>);
    const withSentences = lines(out.sentence.turns);
    expect(withSentences.map(({ sentences: _s, ...r }) => r)).toEqual(lines(out.plain.turns));
    for (const t of withSentences) {
      const ts = t.sentences as { sentences: { text: string; start: number; end: number }[]; unsupported: string[] };
      for (const v of ts.sentences) expect((t.utterance as string).slice(v.start, v.end)).toBe(v.text);
    }
    expect(out.sentence.stdout).toContain('hallucination rate (sentences)');
  });

  it('the HTML report marks the unsupported sentences (in the page as written, no script needed) and the CSV carries them', async () => {
    const page = path.join(dir, 'sentence', 'page.html');
    const csv = path.join(dir, 'sentence', 'failing.csv');
    const res = await run(['report', path.join(dir, 'sentence', 'r.json'), '--turns', path.join(dir, 'sentence', 't.jsonl'), '-o', page, '--csv', csv]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const turns = out.sentence.turns.trim().split('\n').slice(1).map((l) => JSON.parse(l) as { id: string; sentences: { unsupported: string[] } });
    const flagged = turns.filter((t) => t.sentences.unsupported.length > 0);
    expect(flagged.length).toBeGreaterThan(0);
    const html = readFileSync(page, 'utf8');
    // The page's first paint (before any script runs) lists failing turns with their marks.
    const firstPaint = html.slice(0, html.indexOf('<script'));
    const esc = (x: string) => x.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
    const marked = flagged.filter((t) => t.sentences.unsupported.some((u) => firstPaint.includes(`">${esc(u)}</mark>`)));
    expect(marked.length).toBeGreaterThan(0);
    expect(firstPaint).toMatch(/<mark class="(unsupported|contradicted)" title="[^"]+">[^<]+<\/mark><span class="mark-note"> \[(unsupported|contradicted)\]<\/span>/);
    const rows = readFileSync(csv, 'utf8').split('\r\n');
    expect(rows[0].endsWith(',unsupported_sentences')).toBe(true);
    const first = flagged[0];
    expect(rows.some((r) => r.startsWith(`${first.id},`) && r.includes(first.sentences.unsupported[0].replace(/"/g, '""')))).toBe(true);
    // A turn-level run's CSV keeps its columns.
    const plainCsv = path.join(dir, 'plain', 'failing.csv');
    const plainRes = await run(['report', path.join(dir, 'plain', 'r.json'), '--turns', path.join(dir, 'plain', 't.jsonl'), '-o', path.join(dir, 'plain', 'page.html'), '--csv', plainCsv]);
    expect(plainRes.code).toBe(0);
    expect(readFileSync(plainCsv, 'utf8').split('\r\n')[0]).not.toContain('unsupported_sentences');
  }, 120_000);

  it("the per-turn file feeds the paired tests (compare, report): the sentence rate's rows add up to the report's counts", () => {
    const source = loadItemSource(path.join(dir, 'sentence', 't.jsonl'));
    const m = source.items['hallucination-sentences-all'];
    expect(m).toBeDefined();
    expect(source.items['hallucination-sentences']).toBeDefined();
    const report = JSON.parse(out.sentence.report) as { sentences: { counts: { checked: number; unsupported: number; contradicted: number } } };
    const col = (k: number) => Array.from(m.stats).filter((_, i) => i % 2 === k).reduce((a, b) => a + b, 0);
    expect(col(1)).toBe(report.sentences.counts.checked);
    expect(col(0)).toBe(report.sentences.counts.unsupported + report.sentences.counts.contradicted);
    // A turn-level file has no sentence metric.
    expect(loadItemSource(path.join(dir, 'plain', 't.jsonl')).items).not.toHaveProperty('hallucination-sentences-all');
  });

  // --shard/--workers with --granularity sentence: test/sentence-shards.test.ts.
});

describe.skipIf(!hasData('sgd', 'test', FILE))('the labelled test set (generator from SGD test data, lexical stand-in)', () => {
  let set: ReturnType<typeof buildSentenceTestSet>;
  let all: ReturnType<typeof buildSentenceTestSet>;
  let loc: ReturnType<typeof localisation>;
  let locAll: ReturnType<typeof localisation>;

  beforeAll(async () => {
    const data = loadSgsaccData({ dataset: 'sgd', dataDir: DATA_DIR, input: DIALOGUES });
    const sgs = data.expand(data.loaded.turns);
    const runner = await createNliRunner({ model: getLexicalStandinDir(), device: 'cpu', notice: () => {} });
    try {
      const opts = { validation: true, context: true, hallucination: true, scorer: runner };
      const gold = new Map(sgs.map((t) => [t.id, t.utterance]));
      const built = await runSgsacc(sgs, gold, { ...opts, groundTruthSystem: true, granularity: 'sentence' });
      const refs = new Map<string, TurnReferences>(built.references.map((r) => [r!.id, r!]));
      const store = memoryReferences(refs);
      const score = async (s: ReturnType<typeof buildSentenceTestSet>): Promise<SgsaccRun> => {
        const ids = new Set(s.turns.map((t) => t.id));
        return runSgsacc(sgs.filter((t) => ids.has(t.id)), new Map(s.turns.map((t) => [t.id, t.reply])), { ...opts, granularity: 'sentence', references: store });
      };
      set = buildSentenceTestSet(sgs, refs, new Map(built.scores.map((s) => [s.id, s.sentences!])));
      all = buildSentenceTestSet(sgs, refs);
      loc = localisation(set.turns, new Map((await score(set)).scores.map((s) => [s.id, s.sentences!])));
      locAll = localisation(all.turns, new Map((await score(all)).scores.map((s) => [s.id, s.sentences!])));
    } finally {
      await runner.close();
    }
  }, 240_000);

  it('builds multi-sentence replies with one inserted, one negated and one courtesy sentence per turn', () => {
    expect(set.turns.length).toBeGreaterThanOrEqual(20);
    for (const t of set.turns) {
      const origins = t.sentences.map((s) => s.origin);
      for (const o of ['inserted', 'negated', 'courtesy'] as const) expect(origins.filter((x) => x === o)).toHaveLength(1);
      expect(origins).toContain('original');
      for (const s of t.sentences) expect(t.reply.slice(s.start, s.end)).toBe(s.text);
    }
  });

  it('flags the inserted and negated sentences and not the original and courtesy ones, for at least 95% of the turns', () => {
    expect(loc.turnsCorrect / loc.turns).toBeGreaterThanOrEqual(0.95);
    expect(loc.byOrigin.courtesy.flagged).toBe(0);
    expect(loc.byOrigin.original.flagged).toBe(0); // the kept turns' gold sentences are each supported
  });

  it('over every turn-validated turn too, the added sentences are found and courtesy is never flagged', () => {
    expect(all.turns.length).toBeGreaterThanOrEqual(set.turns.length);
    expect(locAll.byOrigin.courtesy.flagged).toBe(0);
    expect(locAll.recall).toBeGreaterThanOrEqual(0.95);
    // Gold sentences the stand-in cannot match word for word are flagged here: the figure is printed by bench:sentences.
    expect(locAll.byOrigin.original.flagged).toBeLessThan(locAll.byOrigin.original.sentences);
  });
});
