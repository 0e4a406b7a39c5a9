// What the context-only control costs and withdraws (docs/sgsacc.md), on the SGD test set with
// the lexical stand-in (its numbers are NOT SGSAcc: the stand-in rescues through the context more
// easily than a real model). Three systems share one set of references: the ground truth (which
// builds them), a system that swaps one slot value per turn, and a content-free system that says
// "Is there anything else I can help you with?" every turn. Each is scored once; the control is a
// view of the recorded verdicts, so both settings' numbers come from the same run. The control's
// pairs are those whose premise is a control premise (previous user turn + slot description, no
// utterance); the scorer is wrapped to count them and time the calls that carry them.
// Usage: npm run bench:context-control [-- --turns N] [-- --data-dir DIR] [-- --tokenizer-dir DIR]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveDataDir } from '../src/data/data-dir.js';
import {
  aggregateSgsacc,
  applyContextControl,
  controlPremise,
  loadSgsaccData,
  runSgsacc,
  type SgsaccRun,
  type TurnReferences,
  type TurnScore,
} from '../src/metrics/sgsacc/index.js';
import { buildLexicalStandin } from '../src/nli/onnx-builder/index.js';
import { createNliRunner, type NliRunner } from '../src/nli/runner.js';
import type { NliPair, NliProbs, NliScorer } from '../src/nli/types.js';
import { buildValueIndex } from '../src/rules/value-index.js';
import { swapOneValuePerTurn } from './lib/value-swap.js';
import { memoryReferences as storeOf } from './lib/memory-references.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const dataDir = resolveDataDir(arg('--data-dir')).dir;
const limit = arg('--turns') ? Number(arg('--turns')) : undefined;
const work = mkdtempSync(path.join(tmpdir(), 'todeval-bench-control-'));

/** Pairs requested and wall/CPU time of the scorer calls, split into the control's and the rest. */
class Meter implements NliScorer {
  control = { pairs: 0, issued: 0, calls: 0, ms: 0, cpuMs: 0 };
  other = { pairs: 0, issued: 0, calls: 0, ms: 0, cpuMs: 0 };
  constructor(
    private readonly inner: NliRunner,
    private readonly controls: Set<string>,
  ) {}
  get modelSignature() {
    return this.inner.modelSignature;
  }
  async score(pairs: NliPair[]): Promise<NliProbs[]> {
    const isControl = pairs.length > 0 && pairs.every((p) => this.controls.has(p.premise));
    const into = isControl ? this.control : this.other;
    const cpu = process.cpuUsage();
    const t = performance.now();
    // The passes are awaited one after the other, so the runner's counters move for this call only.
    const issued = this.inner.stats().issued;
    const out = await this.inner.score(pairs);
    into.issued += this.inner.stats().issued - issued;
    into.ms += performance.now() - t;
    const used = process.cpuUsage(cpu);
    into.cpuMs += (used.user + used.system) / 1000;
    into.pairs += pairs.length;
    into.calls++;
    return out;
  }
}

const pct = (a: number, b: number) => (b === 0 ? '-' : `${((100 * a) / b).toFixed(2)}%`);
const fmt = (x: number | null | undefined) => (x === null || x === undefined ? '-' : x.toFixed(2));

try {
  const model = path.join(work, 'lexical-standin');
  buildLexicalStandin({ outDir: model, tokenizerDir: arg('--tokenizer-dir') });
  const data = loadSgsaccData({ dataset: 'sgd', dataDir, split: 'test' });
  const turns = limit ? data.loaded.turns.slice(0, limit) : data.loaded.turns;
  const sgs = data.expand(turns);
  const actions = sgs.reduce((n, t) => n + t.actions.length, 0);
  const controls = new Set(sgs.flatMap((t) => t.actions.map((a) => controlPremise(t.previousUserUtterance, a.slotDescription))));
  const runner = await createNliRunner({ model, device: 'cpu', notice: () => {} });
  console.log(`SGD test: ${turns.length} system turns, ${actions} actions; lexical stand-in (NOT SGSAcc); load average ${(await loadavg()).join(' ')}`);

  const swapped = swapOneValuePerTurn(
    turns.map((t, i) => ({ id: t.id, utterance: t.utterance, actions: sgs[i].actions })),
    buildValueIndex(data.loaded.turns),
  ).utterances;
  const systems: [string, Map<string, string>][] = [
    ['ground truth (builds the references)', new Map(turns.map((t) => [t.id, t.utterance]))],
    ['value-swapping system', swapped],
    ['content-free system', new Map(turns.map((t) => [t.id, 'Is there anything else I can help you with?']))],
  ];
  const references = new Map<string, TurnReferences>();
  const opts = { validation: true, context: true, referenceSelection: 'entailed' as const };
  const rows: string[] = [];
  for (const [name, utterances] of systems) {
    const meter = new Meter(runner, controls);
    const before = runner.stats();
    const t = performance.now();
    const run: SgsaccRun = await runSgsacc(sgs, utterances, {
      ...opts,
      scorer: meter,
      chunkTurns: 256,
      groundTruthSystem: references.size === 0,
      references: references.size === 0 ? undefined : storeOf(references),
    });
    const wall = (performance.now() - t) / 1000;
    if (references.size === 0) run.references.forEach((r) => references.set(r!.id, r!));
    const after = runner.stats();
    const off = aggregateSgsacc(run.scores, { validation: true, isUnseen: data.isUnseen });
    const on = aggregateSgsacc(
      run.scores.map((s: TurnScore) => applyContextControl(s, references.get(s.id)!)),
      { validation: true, isUnseen: data.isUnseen },
    );
    const c = off.counts;
    console.log(`\n${name}: ${wall.toFixed(1)} s`);
    console.log(`  actions credited through the context: ${c.contextRescued} of ${c.actions} (${pct(c.contextRescued, c.actions)})`);
    console.log(`  of those, the context alone entails:  ${c.contextOnly} (${pct(c.contextOnly, c.contextRescued)} of the rescues; withdrawn with the control)`);
    console.log(`  references only the context premise entailed: ${c.referenceContextRescued} (${pct(c.referenceContextRescued, c.actions)} of actions), the context alone entails ${c.referenceContextOnly} of them`);
    console.log(`  validated SGSAcc off ${fmt(off.validated?.all)} on ${fmt(on.validated?.all)}; evaluated turns off ${off.counts.evaluated} on ${on.counts.evaluated}`);
    console.log(
      `  pairs requested ${meter.control.pairs + meter.other.pairs}: control ${meter.control.pairs} (${pct(meter.control.pairs, meter.other.pairs)} added); ` +
        `issued to the model ${after.issued - before.issued}: control ${meter.control.issued} (${pct(meter.control.issued, meter.other.issued)} added; the rest were in the runner's pair cache)`,
    );
    console.log(
      `  scorer time ${((meter.control.ms + meter.other.ms) / 1000).toFixed(1)} s: control ${(meter.control.ms / 1000).toFixed(1)} s (${pct(meter.control.ms, meter.other.ms)} added); ` +
        `CPU ${((meter.control.cpuMs + meter.other.cpuMs) / 1000).toFixed(1)} s, control ${(meter.control.cpuMs / 1000).toFixed(1)} s (${pct(meter.control.cpuMs, meter.other.cpuMs)} added)`,
    );
    rows.push(
      `| ${name} | ${pct(c.contextRescued, c.actions)} (${c.contextRescued}) | ${pct(c.contextOnly, c.contextRescued)} (${c.contextOnly}) | ${fmt(off.validated?.all)} → ${fmt(on.validated?.all)} | ${meter.control.pairs} | ${meter.control.issued} (+${pct(meter.control.issued, meter.other.issued)}) | +${pct(meter.control.ms, meter.other.ms)} | +${pct(meter.control.cpuMs, meter.other.cpuMs)} |`,
    );
  }
  console.log('\n| system | actions credited through the context | of those, the context alone entails | validated (stand-in) off → on | control pairs requested | issued to the model (added) | scorer wall time added | CPU time added |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log(`load average after: ${(await loadavg()).join(' ')}`);
  await runner.close();
} finally {
  rmSync(work, { recursive: true, force: true });
}


async function loadavg(): Promise<string[]> {
  const os = await import('node:os');
  return os.loadavg().map((x) => x.toFixed(2));
}
