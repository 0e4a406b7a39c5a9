// Sentence-level faithfulness on the labelled test set (scripts/lib/sentence-testset.ts) with the
// lexical stand-in: how well the flagged sentences localise the inserted and negated ones, and what
// sentence granularity costs over turn level. The stand-in's figures are NOT SGSAcc and say nothing
// of a real NLI model; they check the machinery (splitting, facts, max over facts, courtesy rule).
// Usage: npm run bench:sentences [-- --turns N] [-- --data-dir DIR] [-- --tokenizer-dir DIR]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { resolveDataDir } from '../src/data/data-dir.js';
import { loadSgsaccData, runSgsacc, type SgsaccOptions, type SgsaccRun, type TurnReferences } from '../src/metrics/sgsacc/index.js';
import { buildLexicalStandin } from '../src/nli/onnx-builder/index.js';
import { createNliRunner, type NliRunner } from '../src/nli/runner.js';
import { buildSentenceTestSet, localisation } from './lib/sentence-testset.js';
import { memoryReferences as storeOf } from './lib/memory-references.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const dataDir = resolveDataDir(arg('--data-dir')).dir;
const limit = arg('--turns') ? Number(arg('--turns')) : undefined;
const work = mkdtempSync(path.join(tmpdir(), 'todeval-bench-sentences-'));
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const pct = (x: number) => `${(100 * x).toFixed(2)}%`;


async function timed<T>(runner: NliRunner, f: () => Promise<T>): Promise<{ value: T; s: number; requested: number; issued: number }> {
  const before = runner.stats();
  const t = performance.now();
  const value = await f();
  const after = runner.stats();
  return { value, s: (performance.now() - t) / 1000, requested: after.requested - before.requested, issued: after.issued - before.issued };
}

try {
  const model = path.join(work, 'lexical-standin');
  buildLexicalStandin({ outDir: model, tokenizerDir: arg('--tokenizer-dir') });
  const data = loadSgsaccData({ dataset: 'sgd', dataDir, split: 'test' });
  const turns = limit ? data.loaded.turns.slice(0, limit) : data.loaded.turns;
  const sgs = data.expand(turns);
  console.log(`SGD test: ${turns.length} system turns; lexical stand-in (NOT SGSAcc); load average ${load()}`);
  const opts: SgsaccOptions = { validation: true, context: true, referenceSelection: 'entailed', hallucination: true };
  const gold = new Map(turns.map((t) => [t.id, t.utterance]));
  const references = new Map<string, TurnReferences>();

  // 1. The references with the hallucination premises (the ground truth builds them).
  const runner = await createNliRunner({ model, device: 'cpu', notice: () => {} });
  const built = await timed(runner, () => runSgsacc(sgs, gold, { ...opts, scorer: runner, chunkTurns: 256, groundTruthSystem: true }));
  built.value.references.forEach((r) => references.set(r!.id, r!));
  console.log(`references and premises: ${built.s.toFixed(1)} s, ${built.issued} pairs issued`);
  await runner.close();

  // 2. The cost of sentence granularity over turn level: the gold replies scored again as a system
  // on the stored references, each on a fresh runner (an empty pair cache), turn level then sentence level.
  const cost: Record<string, Awaited<ReturnType<typeof timed<SgsaccRun>>>> = {};
  for (const granularity of ['turn', 'sentence'] as const) {
    const r = await createNliRunner({ model, device: 'cpu', notice: () => {} });
    cost[granularity] = await timed(r, () => runSgsacc(sgs, gold, { ...opts, granularity, scorer: r, chunkTurns: 256, references: storeOf(references) }));
    await r.close();
  }
  const goldSentences = new Map(cost.sentence.value.scores.map((s) => [s.id, s.sentences!]));
  console.log(`\nthe ground truth on stored references (fresh runner each; load average ${load()}):`);
  for (const [g, c] of Object.entries(cost)) console.log(`  ${g.padEnd(8)} ${c.s.toFixed(1)} s, ${c.requested} pairs requested, ${c.issued} issued`);
  console.log(
    `  sentence over turn: ${(cost.sentence.s / Math.max(cost.turn.s, 1e-9)).toFixed(2)}x wall time, ` +
      `+${cost.sentence.issued - cost.turn.issued} pairs issued (${(cost.sentence.issued / Math.max(cost.turn.issued, 1)).toFixed(2)}x)`,
  );

  // 3. The labelled test set, scored as a system at sentence level: over every checked and
  // validated turn, then over those whose gold sentences the facts each support.
  for (const [name, goldFilter] of [
    ['turn-validated turns', undefined],
    ['sentence-validated turns', goldSentences],
  ] as const) {
    const set = buildSentenceTestSet(sgs, references, goldFilter);
    const setTurns = new Set(set.turns.map((t) => t.id));
    const slice = sgs.filter((t) => setTurns.has(t.id));
    const replies = new Map(set.turns.map((t) => [t.id, t.reply]));
    const r = await createNliRunner({ model, device: 'cpu', notice: () => {} });
    const scored = await timed(r, () => runSgsacc(slice, replies, { ...opts, granularity: 'sentence', scorer: r, chunkTurns: 256, references: storeOf(references) }));
    await r.close();
    const verdicts = new Map(scored.value.scores.map((s) => [s.id, s.sentences!]));
    const loc = localisation(set.turns, verdicts);
    const turnFlagged = scored.value.scores.filter((s) => s.hallucination?.hallucinated === true).length;
    console.log(`\nlabelled test set over ${name}: ${set.turns.length} turns of ${set.candidates} checked and validated (skipped: ${JSON.stringify(set.skipped)}); scored in ${scored.s.toFixed(1)} s`);
    for (const [o, c] of Object.entries(loc.byOrigin)) console.log(`  ${o.padEnd(9)} ${String(c.sentences).padStart(6)} sentences, flagged ${String(c.flagged).padStart(6)} (${pct(c.flagged / Math.max(c.sentences, 1))})`);
    console.log(`  turns with inserted and negated flagged, original and courtesy not: ${loc.turnsCorrect} of ${loc.turns} (${pct(loc.turnsCorrect / Math.max(loc.turns, 1))}); misaligned splits ${loc.misaligned}`);
    console.log(`  localisation (stand-in figures, NOT SGSAcc): precision ${pct(loc.precision)}, recall ${pct(loc.recall)}`);
    console.log(`  turn level flags ${turnFlagged} of ${set.turns.length} of these turns as hallucinated, without saying which sentence`);
  }
  console.log(`load average after: ${load()}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
