/**
 * Cost of SGSAcc scoring in NLI pairs on a fixed SGD slice, with the full-size random roberta-large
 * on this CPU: first the ground truth (which builds and stores the references), then a second
 * system that reuses the stored references, so its cost is only its own pairs.
 *
 *   npm run bench:score -- [--model DIR] [--turns 12] [--threads N] [--data-dir DIR] [--json FILE]
 *
 * Slice: the first --turns system turns of sgd/test/dialogues_017.json (Services_1 + Messaging_1 +
 * Alarm_1: seen and unseen domains). Second system: the ground truth with, per turn, the first slot
 * value that occurs verbatim replaced by another value of the same slot (a deterministic
 * hallucination), so some actions fail and take the context pass.
 * A fresh runner per system: no pair cache carries over, the reuse comes from the reference file.
 * Random weights make the scores meaningless; the pair counts and timings are what this measures.
 *
 * Both systems run twice, side by side: without and with --hallucination (each mode builds its own
 * references file, so the hallucination premises of the ground truth are part of its cost and the
 * second system reuses them), and the ratios with/without are printed. Then the second system once
 * more with --granularity sentence on the hallucination references (its cost: its own turn and
 * sentence pairs), against its --hallucination run. The whole SGD test's figure is bench:sentences'.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { resolveDataDir } from '../src/data/data-dir.js';
import { aggregateHallucination, aggregateSgsacc, loadSgsaccData, RecordStore, runSgsacc, type TurnReferences } from '../src/metrics/sgsacc/index.js';
import { createNliRunner } from '../src/nli/runner.js';
import { makeSignature } from '../src/util/signature.js';
import { buildValueIndex } from '../src/rules/value-index.js';
import { swapOneValuePerTurn } from './lib/value-swap.js';
import { ensureLargeRandomModel } from './lib/large-model.js';

const program = new Command('bench-score')
  .option('--model <dir>', 'model directory', '.cache/models/large-random-roberta')
  .option('--turns <n>', 'system turns in the slice', (v) => Number(v), 12)
  .option('--threads <n>', 'intra-op threads (default: all cores)', (v) => Number(v))
  .option('--data-dir <dir>', 'data directory (default: resolveDataDir)')
  .option('--json <file>', 'also write the figures as JSON');
program.parse(process.argv.filter((a, i) => !(i === 2 && a === '--')));
const o = program.opts<{ model: string; turns: number; threads?: number; dataDir?: string; json?: string }>();

const modelDir = ensureLargeRandomModel(o.model);

const dataDir = resolveDataDir(o.dataDir).dir;
const input = path.join(dataDir, 'sgd', 'test', 'dialogues_017.json');
const data = loadSgsaccData({ dataset: 'sgd', dataDir, input });
const turns = data.loaded.turns.slice(0, o.turns);
const sgs = data.expand(turns);
const actions = sgs.reduce((n, t) => n + t.actions.length, 0);

// The second system: swap one verbatim slot value per turn for another value of that slot.
const { utterances: swapped, swaps } = swapOneValuePerTurn(turns, buildValueIndex(data.loaded.turns));

const dir = mkdtempSync(path.join(tmpdir(), 'bench-score-'));

async function system(name: string, utterances: Map<string, string>, groundTruth: boolean, hallucination: boolean, granularity?: 'sentence') {
  const options = { validation: true, context: true, hallucination, ...(granularity ? { granularity } : {}) };
  const refsFile = path.join(dir, hallucination ? 'refs-hallucination.jsonl' : 'refs.jsonl');
  const runner = await createNliRunner({ model: modelDir, device: 'cpu', threads: o.threads });
  const sig = makeSignature({ metric: 'sgsacc-references', model: runner.modelSignature.modelId, revision: runner.modelSignature.revision, rules: data.rulesHash, validation: true, context: true });
  const references = RecordStore.open<TurnReferences>(refsFile, 'todeval-sgsacc-references', sig);
  const reused = turns.filter((t) => references.done.has(t.id)).length;
  const t0 = performance.now();
  const run = await runSgsacc(sgs, utterances, { ...options, scorer: runner, references, groundTruthSystem: groundTruth, chunkTurns: 64 });
  const seconds = (performance.now() - t0) / 1000;
  const stats = runner.stats();
  await runner.close();
  const s = aggregateSgsacc(run.scores, { validation: true, isUnseen: data.isUnseen });
  const h = hallucination ? aggregateHallucination(run.scores, { validation: true, isUnseen: data.isUnseen }) : undefined;
  const scorable = s.counts.evaluatedUnvalidated;
  const fig = {
    system: name,
    hallucination,
    granularity: granularity ?? 'turn',
    hallucinationChecked: h?.counts.checked ?? null,
    hallucinationContentFree: h?.counts.contentFree ?? null,
    turns: turns.length,
    actions,
    referencesReused: reused,
    validatedTurns: s.counts.evaluated,
    scorableTurns: scorable,
    pairsRequested: stats.requested,
    pairsIssued: stats.issued,
    issuedPerTurn: stats.issued / turns.length,
    issuedPerScorableTurn: scorable ? stats.issued / scorable : null,
    issuedPerValidatedTurn: s.counts.evaluated ? stats.issued / s.counts.evaluated : null,
    issuedPerAction: stats.issued / actions,
    seconds,
    pairsPerSecond: stats.issued / seconds,
    sgsaccUnvalidated: s.unvalidated.all,
  };
  const f = (x: number | null, d = 2) => (x === null ? 'n/a' : x.toFixed(d));
  console.log(
    `${name.padEnd(36)} refs reused ${String(reused).padStart(3)}/${turns.length}  pairs issued ${String(stats.issued).padStart(5)} ` +
      `(requested ${stats.requested})  per turn ${f(fig.issuedPerTurn)}  per scorable turn ${f(fig.issuedPerScorableTurn)}  per validated turn ${f(fig.issuedPerValidatedTurn)}  ` +
      `per action ${f(fig.issuedPerAction)}  ${seconds.toFixed(1)} s  ${f(fig.pairsPerSecond, 1)} pairs/s`,
  );
  return fig;
}

console.log(`slice: ${turns.length} system turns, ${actions} actions of ${path.relative(dataDir, input)}; second system: ${swaps} slot values swapped; model ${modelDir}`);
const goldText = new Map(turns.map((t) => [t.id, t.utterance]));
const gold = await system('ground truth (+refs)', goldText, true, false);
const second = await system('value-swapped system', swapped, false, false);
const goldH = await system('ground truth (+refs) --hallucination', goldText, true, true);
const secondH = await system('value-swapped --hallucination', swapped, false, true);
const secondS = await system('value-swapped --granularity sentence', swapped, false, true, 'sentence');
console.log(`checked for hallucination: ${goldH.hallucinationChecked} of ${turns.length} turns (${goldH.hallucinationContentFree} content-free)`);
const ratio = (a: { pairsIssued: number }, b: { pairsIssued: number }) => (a.pairsIssued / b.pairsIssued).toFixed(3);
console.log(`second system / ground truth pairs issued: ${ratio(second, gold)} without, ${ratio(secondH, goldH)} with --hallucination`);
console.log(`with / without --hallucination pairs issued: ground truth ${ratio(goldH, gold)}, second system ${ratio(secondH, second)}`);
console.log(`sentence / turn granularity pairs issued (second system, stored references): ${ratio(secondS, secondH)}; wall time ${(secondS.seconds / secondH.seconds).toFixed(2)}x`);
if (o.json) writeFileSync(o.json, JSON.stringify({ gold, second, goldHallucination: goldH, secondHallucination: secondH, secondSentences: secondS }, null, 2) + '\n');
