// Every number the docs print for a fixed example, produced here by running that example (issue 21:
// docs/library.md printed a BLEU of 62.40 that its example gives as 67.94). Each check reads the
// figure where the page prints it, so a page and the code cannot drift apart unnoticed. Timings and
// benchmark figures are measurements of the machine they ran on, not outputs of an example: they
// are not checked here (the `npm run bench:*` scripts print them, with the load they ran under).
// Examples elsewhere: docs/library.md's programs assert their printed values themselves
// (test/library-docs.test.ts), docs/example.md is checked in test/example.test.ts, the lexical
// stand-in's Queens example in test/lexical-standin.test.ts, serve's fuzz tally in test/serve.test.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { lexicalRichness } from '../src/metrics/text/richness.js';
import { countParameters, ROBERTA_LARGE_MNLI_CONFIG, sizesFromConfig } from '../src/nli/onnx-builder/index.js';
import { Evaluator, type MwzEvaluation } from '../src/metrics/mwz/evaluator.js';
import { loadGroundTruth } from '../src/metrics/mwz/ground-truth.js';
import { loadSgsaccData } from '../src/metrics/sgsacc/index.js';
import { normalizeResponse } from '../src/metrics/text/normalize-response.js';
import { runInProcess } from './helpers/in-process-cli.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';

const page = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const n = (x: number) => x.toLocaleString('en-US');

/** The lines of the first fenced block after `marker` on the page. */
function blockAfter(text: string, marker: string): string[] {
  const at = text.indexOf(marker);
  expect(at, `the page has "${marker}"`).toBeGreaterThanOrEqual(0);
  const open = text.indexOf('```', at);
  const start = text.indexOf('\n', open) + 1;
  return text.slice(start, text.indexOf('```', start)).split('\n').filter((l) => l !== '');
}

/** Every line the page shows is a line of the output, except elisions (`...`) and a prompt line (`$ ...`). */
function expectShownLinesIn(shown: string[], output: string): void {
  const lines = new Set(output.split('\n').map((l) => l.trimEnd()));
  const checked = shown.filter((l) => !l.trimStart().startsWith('...') && !l.startsWith('$ '));
  expect(checked.length).toBeGreaterThan(0);
  for (const l of checked) expect(lines.has(l.trimEnd()), `printed: ${l}`).toBe(true);
}

/** `text` (whitespace runs as one space) says `sentence`; a failure names the sentence, not the page. */
function says(text: string, sentence: string): void {
  expect(text.replace(/\s+/g, ' ').includes(sentence), `the page says: ${sentence}`).toBe(true);
}

/** The cells of the table row whose first cell is `name`. */
function row(text: string, name: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith(`| ${name} |`));
  expect(line, `a row "${name}"`).toBeDefined();
  return line!.split('|').slice(1, -1).map((c) => c.trim());
}

/** The value a cell gives as ours: its first number (a bold mark or the paper's value in parentheses aside). */
const ours = (cell: string): string => /-?\d+(?:\.\d+)?/.exec(cell.replaceAll('*', ''))![0];
/** The paper's value of a cell, in parentheses. */
const paper = (cell: string): number => Number(/\((-?\d+(?:\.\d+)?)\)/.exec(cell)![1]);

const hasSgd = hasData('sgd', 'test');
const hasMwz = hasData('multiwoz', 'convlab_mwz21_test.json');

describe.skipIf(!hasSgd || !hasMwz)('references: refs --summary, bench:rules counts, the dedupe of bench:nli (foundation.md, nli.md, sgsacc.md, README)', () => {
  const foundation = page('docs/foundation.md');
  let sgd = '';
  let mwz = '';
  beforeAll(async () => {
    sgd = await runInProcess(['refs', '--dataset', 'sgd', '--summary', '--data-dir', DATA_DIR]);
    mwz = await runInProcess(['refs', '--dataset', 'multiwoz', '--summary', '--data-dir', DATA_DIR]);
  }, 120_000);

  it('the per-act tables of both test sets', () => {
    expectShownLinesIn(blockAfter(foundation, '`node bin/todeval.js refs --dataset sgd --summary`'), sgd);
    expectShownLinesIn(blockAfter(foundation, '`node bin/todeval.js refs --dataset multiwoz --summary`'), mwz);
  });

  it('the counts of candidates, negatives and distinct pairs', () => {
    const counts = (dataset: 'sgd' | 'multiwoz') => {
      const data = loadSgsaccData({ dataset, dataDir: DATA_DIR });
      const turns = data.expand(data.loaded.turns);
      let actions = 0;
      let candidates = 0;
      let negatives = 0;
      // Distinct (utterance, reference) pairs: the references seen per utterance, so no joined key
      // string is made for each of the set's pairs.
      const distinct = new Map<string, Set<string>>();
      const distinctCandidates = new Map<string, Set<string>>();
      const add = (pairs: Map<string, Set<string>>, utterance: string, r: string) => {
        let refs = pairs.get(utterance);
        if (!refs) pairs.set(utterance, (refs = new Set()));
        refs.add(r);
      };
      const size = (pairs: Map<string, Set<string>>) => [...pairs.values()].reduce((n, refs) => n + refs.size, 0);
      for (const t of turns) {
        for (const a of t.actions) {
          actions++;
          candidates += a.candidates.length;
          negatives += a.negatives.length;
          for (const r of a.candidates) add(distinctCandidates, t.utterance, r);
          for (const r of [...a.candidates, ...a.negatives]) add(distinct, t.utterance, r);
        }
      }
      return { turns: turns.length, actions, candidates, negatives, distinct: size(distinct), distinctCandidates: size(distinctCandidates) };
    };
    const s = counts('sgd');
    const m = counts('multiwoz');
    // bench:rules' first line per dataset (its timings below it are measurements).
    const rules = blockAfter(foundation, '`npm run bench:rules`');
    expect(rules).toContain(`sgd: ${s.turns} system turns, ${s.actions} actions -> ${s.candidates} candidates, ${s.negatives} negatives`);
    expect(rules).toContain(`multiwoz: ${m.turns} system turns, ${m.actions} actions -> ${m.candidates} candidates, ${m.negatives} negatives`);
    const readme = page('README.md');
    says(readme, 
      `SGD test ${n(s.actions)} actions in ${n(s.turns)} system turns, MultiWOZ 2.1 test ${n(m.actions)} actions in ${n(m.turns)} system turns`,
    );
    // The dedupe saving over the SGD candidate set (bench:nli's first line, README, nli.md).
    const ratio = (s.distinctCandidates / s.candidates).toFixed(3);
    const saves = (100 * (1 - s.distinctCandidates / s.candidates)).toFixed(1);
    const nli = page('docs/nli.md');
    expect(nli).toContain(`SGD test: ${s.turns} system turns, ${s.candidates} candidate pairs requested, ${s.distinctCandidates} distinct -> issued/requested ${ratio} (dedupe saves ${saves}%)`);
    says(nli, `${n(s.candidates)} pairs are requested and ${n(s.distinctCandidates)} are distinct: **issued / requested = ${ratio}** (${saves}% never computed)`);
    expect(readme).toContain(`Dedupe over the whole SGD candidate set: ${n(s.candidates)} pairs requested, ${n(s.distinctCandidates)} issued (${ratio}).`);
    says(page('docs/sgsacc.md'), 
      `Whole SGD test set (no model needed to count): ${n(s.turns)} system turns, ${n(s.actions)} actions, ${n(s.candidates + s.negatives)} first-pass reference pairs (candidates + negatives), ${n(s.distinct)} distinct`,
    );
  });
});

describe.skipIf(!hasSgd || !hasMwz)('SER of the ground truth (ser-and-data.md, README)', () => {
  const doc = page('docs/ser-and-data.md');
  it('ser --robust on both test sets', async () => {
    const sgd = await runInProcess(['ser', '--dataset', 'sgd', '--robust', '--data-dir', DATA_DIR]);
    const mwz = await runInProcess(['ser', '--dataset', 'multiwoz', '--robust', '--data-dir', DATA_DIR]);
    const shown = blockAfter(doc, '**Measured**');
    const [sgdShown, mwzShown] = [shown.slice(0, shown.indexOf('$ node bin/todeval.js ser --dataset multiwoz --robust')), shown.slice(shown.indexOf('$ node bin/todeval.js ser --dataset multiwoz --robust'))];
    expectShownLinesIn(sgdShown, sgd);
    // "(21 services, all 0.00%)": every service's row.
    const services = sgd.split('\n').filter((l) => /^\w+_\d+\s+\d+/.test(l));
    expect(sgdShown).toContain(`...               (${services.length} services, all 0.00%)`);
    expect(services.every((l) => /\s0\.00%\s+0\.00%$/.test(l))).toBe(true);
    expectShownLinesIn(mwzShown.slice(0, 2), mwz);
    const perDomain = mwz.split('\n').filter((l) => /^[a-z]+\s+\d+\s+\d+/.test(l)).map((l) => l.split(/\s+/));
    expect(mwzShown[2]).toBe(`(${perDomain.map(([d, utts]) => `${d} ${utts}`).join(', ')} utterances)`);
    // Not checked: the block after it, on ConvLab-2's own test.json as `todeval data pull` installs
    // it; ../shared holds a cleaned copy (0 errors), and the pull needs the network.
    // The coverage sentence, and the README's summary of the same runs.
    const first = (out: string) => /^SER (\S+)% \((\d+) of (\d+) utterances with non-categorical values; (\d+) system turns\)/.exec(out)!;
    const [, sgdSer, sgdErrors, sgdUtts, sgdTurns] = first(sgd);
    const [, mwzSer, , mwzUtts] = first(mwz);
    says(doc, `${Math.round((100 * Number(sgdUtts)) / Number(sgdTurns))}% of SGD system turns (${n(Number(sgdUtts))} of ${n(Number(sgdTurns))}) carry a checkable value`);
    says(page('README.md'), 
      `**${sgdSer}%** (${sgdErrors} errors in ${n(Number(sgdUtts))} SGD test utterances that carry non-categorical values); MultiWOZ 2.1 test: ${mwzSer}% of ${n(Number(mwzUtts))}.`,
    );
  }, 120_000);
});

/** The published values the five systems are checked against (below), by the names the docs' tables use. */
const PAPER = {
  DAMD: { bleu: 16.4, inform: 57.9, success: 47.6, informOpt: 73.7, successOpt: 63.0 },
  AuGPT: { bleu: 16.8, inform: 76.6, success: 60.5, informOpt: 78.1, successOpt: 62.4 },
  HDSA: { bleu: 20.7, inform: 87.9, success: 79.4, informOpt: 91.6, successOpt: 83.2 },
  UniConv: { bleu: 18.1, inform: 66.7, success: 58.7, informOpt: 67.5, successOpt: 60.1 },
  LAVA: { bleu: 10.8, inform: 95.9, success: 93.5, informOpt: 97.5, successOpt: 95.9 },
} as const;

describe.skipIf(!hasMwz || !hasData('multiwoz', 'predictions'))('mwzeval on the five published systems (README, mwz-evaluate.md, text-metrics.md)', () => {
  const SYSTEMS: Record<keyof typeof PAPER, string> = { DAMD: 'damd', AuGPT: 'augpt', HDSA: 'hdsa', UniConv: 'uniconv', LAVA: 'lava' };
  const results = new Map<string, MwzEvaluation>();
  beforeAll(() => {
    const ev = new Evaluator({ bleu: true, success: true, richness: true, dst: true, dataDir: DATA_DIR, onWarning: () => {} });
    for (const [name, file] of Object.entries(SYSTEMS)) {
      results.set(name, ev.evaluate(JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'predictions', `${file}.json`), 'utf8'))));
    }
  }, 180_000);
  const bleu = (r: MwzEvaluation) => Object.values(r.bleu!)[0];

  // Parity with "Shades of BLEU" (seeds/shades-of-bleu-multiwoz-evaluation.txt): Table 4's first row
  // (BLEU against MultiWOZ 2.2 references) and Table 5 (Inform/Success, standard and optimistic).
  // These five tests were test/mwz-parity.test.ts, which evaluated the same five files again (with
  // fewer metrics; a metric asked for does not change another's numbers): they read the evaluations
  // above instead.
  for (const name of Object.keys(PAPER) as (keyof typeof PAPER)[]) {
    it(`${SYSTEMS[name]}: Inform/Success within 2 points, BLEU within 1.0`, () => {
      const want = PAPER[name];
      const r = results.get(name)!;
      const s = r.success!;
      expect(Math.abs(s.inform.total - want.inform)).toBeLessThanOrEqual(2);
      expect(Math.abs(s.success.total - want.success)).toBeLessThanOrEqual(2);
      expect(Math.abs(s.optimistic.inform.total - want.informOpt)).toBeLessThanOrEqual(2);
      expect(Math.abs(s.optimistic.success.total - want.successOpt)).toBeLessThanOrEqual(2);
      expect(Math.abs(r.bleu!.mwz21 - want.bleu)).toBeLessThanOrEqual(1.0);
      // systems with their own predicted states must reproduce the paper exactly (same states,
      // same database); only gold-state systems see the MultiWOZ 2.1 vs 2.2 state difference
      if (s.state_source === 'predicted') {
        expect(s.inform.total).toBe(want.inform);
        expect(s.success.total).toBe(want.success);
      }
    });
  }

  const successCells = (r: MwzEvaluation) => [r.success!.inform.total, r.success!.success.total, r.success!.optimistic.inform.total, r.success!.optimistic.success.total].map((x) => x.toFixed(1));

  it('Inform, Success (standard and optimistic) and BLEU, in both tables; the gaps to the paper the text quotes', () => {
    const readme = page('README.md');
    const doc = page('docs/mwz-evaluate.md');
    const bleuGaps: number[] = [];
    const successGaps: { system: string; optimistic: boolean; gap: number }[] = [];
    for (const [name, r] of results) {
      const a = row(readme, name);
      expect(a.slice(1).map(ours), `README ${name}`).toEqual([...successCells(r), bleu(r).toFixed(2)]);
      const b = row(doc, name);
      const states = `${r.success!.state_source} / ${r.success!.domain_source === 'estimated-from-state' ? 'estimated' : r.success!.domain_source}`;
      expect(b[1], `mwz-evaluate.md ${name}`).toBe(states);
      expect(b.slice(2).map(ours), `mwz-evaluate.md ${name}`).toEqual([...successCells(r), bleu(r).toFixed(2)]);
      bleuGaps.push(Number(bleu(r).toFixed(2)) - paper(b[6]));
      b.slice(2, 6).forEach((cell, i) => successGaps.push({ system: name, optimistic: i >= 2, gap: paper(cell) - Number(ours(cell)) }));
    }
    const gap = (x: number) => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));
    const largestBleu = Math.max(...bleuGaps.map(Math.abs)).toFixed(2);
    says(doc, `All five BLEU scores are within 1.0; the largest gap is ${largestBleu}.`);
    expect(doc).toContain(`BLEU differs by ${gap(Math.min(...bleuGaps))} to ${gap(Math.max(...bleuGaps))}.`);
    says(readme, `the 2.1 text is pre-tokenized: ${gap(Math.min(...bleuGaps))} to ${gap(Math.max(...bleuGaps))}.`);
    says(doc, `the largest gap is ${Math.max(...successGaps.map((g) => Math.abs(g.gap))).toFixed(1)}.`);
    // README: the systems without states of their own (gold states) are 1.3-1.8 lower; the
    // optimistic rows of the others within 0.7.
    const goldStates = successGaps.filter((g) => !g.optimistic && results.get(g.system)!.success!.state_source === 'gold').map((g) => g.gap);
    says(readme, `${Math.min(...goldStates).toFixed(1)}–${Math.max(...goldStates).toFixed(1)} points lower`);
    const ownOptimistic = successGaps.filter((g) => g.optimistic && results.get(g.system)!.success!.state_source === 'predicted').map((g) => Math.abs(g.gap));
    expect(readme).toContain(`within ${Math.max(...ownOptimistic).toFixed(1)}.`);
  });

  it('richness and BLEU (text-metrics.md), DST (mwz-evaluate.md)', () => {
    const text = page('docs/text-metrics.md');
    for (const [name, r] of results) {
      const rich = r.richness!;
      expect(row(text, name).slice(1).map(ours), `text-metrics.md ${name}`).toEqual([
        bleu(r).toFixed(2),
        String(rich.num_unigrams),
        String(rich.num_trigrams),
        rich.entropy.toFixed(2),
        rich.cond_entropy.toFixed(2),
        rich.msttr.toFixed(2),
        rich.avg_lengths.toFixed(2),
      ]);
    }
    const doc = page('docs/mwz-evaluate.md');
    for (const name of ['DAMD', 'AuGPT', 'UniConv']) {
      const d = results.get(name)!.dst!;
      const dst = doc.split('\n').filter((l) => l.startsWith(`| ${name} |`)).at(-1)!;
      expect(dst).toBe(`| ${name} | ${d.joint_accuracy.toFixed(2)} | ${d.slot_f1.toFixed(2)} | ${d.slot_precision.toFixed(3)} | ${d.slot_recall.toFixed(3)} |`);
    }
  });

  it('the richness of the references themselves, and what the lexicalized gold text scores', () => {
    const gt = loadGroundTruth(DATA_DIR, {});
    const refs = Object.values(gt.dialogues).flatMap((d) => d.references.map((r) => normalizeResponse(r).text));
    const rich = lexicalRichness(refs);
    expect(page('docs/text-metrics.md').replace(/\s+/g, ' ')).toMatch(
      new RegExp(
        `the richness gives ${rich.num_unigrams} unique tokens \\(paper \\d+\\), ${rich.num_trigrams} trigrams \\(\\d+\\), entropy ${rich.entropy.toFixed(2)} \\([\\d.]+\\), ` +
          `conditional entropy ${rich.cond_entropy.toFixed(2)} \\([\\d.]+\\), MSTTR ${rich.msttr.toFixed(2)} \\([\\d.]+\\) and average length ${rich.avg_lengths.toFixed(2)} \\([\\d.]+\\)`,
      ),
    );
    expect(page('docs/mwz-evaluate.md')).toContain(`file: ${n(refs.length)} turns`);
    // The gold utterances as a system (lexicalized): what the warning in mwz-evaluate.md quotes.
    const convlab = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'), 'utf8')) as Record<string, { log: { text: string }[] }>;
    const lexicalized = Object.fromEntries(Object.entries(convlab).map(([id, d]) => [id.toLowerCase().replace(/\.json$/, ''), d.log.filter((_, i) => i % 2 === 1).map((t) => ({ response: t.text }))]));
    const s = new Evaluator({ success: true, dataDir: DATA_DIR, onWarning: () => {} }).evaluate(lexicalized).success!;
    says(page('docs/mwz-evaluate.md'), `(the ConvLab gold \`text\` scores Inform ${s.inform.total.toFixed(1)}, Success ${s.success.total.toFixed(1)})`);
  }, 60_000);
});

describe.skipIf(!hasData('gcdf1', 'convlab_baselines', 'test'))('GCDF1 of the 1,000 ConvLab conversations (gcdf1.md, README)', () => {
  it('the command gcdf1.md shows prints what it shows; the README rows and the behaviour counts quoted', async () => {
    const gcdf1 = path.join(DATA_DIR, 'gcdf1');
    const out = await runInProcess([
      'gcdf1', '--dialogues', path.join(gcdf1, 'convlab_baselines', 'test'), '--config', path.join(gcdf1, 'multiwoz_user_evaluator.yaml'),
      '--canonical-map', path.join(gcdf1, 'resources', 'multiwoz21_canonical_map.json'), '--data-dir', DATA_DIR,
    ]);
    const doc = page('docs/gcdf1.md');
    expectShownLinesIn(blockAfter(doc, 'prints\n'), out);
    const line = (label: string) => out.split('\n').find((l) => l.startsWith(label))!.split(/\s+/).slice(label.split(/\s+/).length);
    const [i, r] = [line('I-GCDF1 F1'), line('R-GCDF1 F1')];
    const readme = page('README.md');
    expect(row(readme, 'I-GCDF1, todeval').slice(1).map((c) => c.replaceAll('*', ''))).toEqual(i);
    expect(row(readme, 'R-GCDF1, todeval').slice(1).map((c) => c.replaceAll('*', ''))).toEqual(r);
    const behaviour = (name: string) => Number(new RegExp(`^  ${name.replaceAll('.', '\\.')}\\s+(\\d+)$`, 'm').exec(out)![1]);
    says(doc, 
      `${behaviour('multiple_constraint_informs.elicited_by_no_offers')} repetitions after no-offers, ${behaviour('multiple_constraint_informs.repeated_while_booking')} while booking, ` +
        `${n(behaviour('multiple_slot_requests.repeated_despite_receiving_answer'))} requests repeated despite an answer, ${behaviour('provision_entire_domain')} domains whose requests the system provided unasked`,
    );
  }, 120_000);
});

describe('the random roberta-large (random-model.md)', () => {
  it('its parameter count (the bytes, sha256 and timings come from building 1.4 GB: measured, not rebuilt here)', () => {
    says(page('docs/random-model.md'), `Size: ${n(countParameters(sizesFromConfig(ROBERTA_LARGE_MNLI_CONFIG)))} parameters`);
  });
});

describe('text metrics: the examples text-metrics.md writes out', () => {
  it('normalizeResponse of its example sentence', () => {
    const doc = page('docs/text-metrics.md');
    const m = /const n = normalizeResponse\('([^']+)'\);\n\/\/ n\.text === '([^']+)', n\.unknownPlaceholders === \[\]/.exec(doc);
    expect(m, 'the example and its result').not.toBeNull();
    expect(normalizeResponse(m![1])).toEqual({ text: m![2], unknownPlaceholders: [] });
  });
});
