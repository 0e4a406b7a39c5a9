import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  aggregateSgsacc,
  applyContextControl,
  loadSgsaccData,
  RecordStore,
  runSgsacc,
  scoreTurns,
  selectReferences,
  type SgsaccData,
  type SgsaccOptions,
  type SgsaccTurn,
  type TurnReferences,
  type TurnScore,
} from '../src/metrics/sgsacc/index.js';
import { createNliRunner, type NliRunner } from '../src/nli/runner.js';
import { makeSignature } from '../src/util/signature.js';
import { rerank, type RerankItem } from '../src/rerank/rerank.js';
import { resolveRerankConfig } from '../src/rerank/config.js';
import { rerankSignature } from '../src/rerank/signature.js';
import { runCli } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { FakeWordOverlapNli } from './sgsacc-fake-nli.js';

// The context-only control (docs/sgsacc.md): where only the context premise entails, the context
// without the utterance is checked too, and when it entails as well the utterance gets no credit.
// The cases are the ones a new user met with the lexical stand-in on SGD (issue 22): each test
// asserts both that the failure happens without the control and that the control removes it.

const OFF: SgsaccOptions = { validation: true, context: true, contextControl: false };
const ON: SgsaccOptions = { ...OFF, contextControl: true };
const DIALOGUES_001 = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_001.json');

// The paper's Figure 1: the user's previous turn does not say who the stylist is, the utterance does.
const QUEENS: SgsaccTurn = {
  id: 'figure-1',
  services: ['Services_1'],
  utterance: 'What about Queens?',
  previousUserUtterance: 'I want to book a hair cut.',
  actions: [
    {
      id: '0',
      service: 'Services_1',
      act: 'OFFER',
      slot: 'stylist_name',
      values: ['Queens'],
      candidates: ['The name of the hair stylist is Queens.'],
      negatives: ['The name of the hair stylist is Kings.'],
      slotDescription: 'the name of the hair stylist',
    },
  ],
};

async function scoreWith(runner: NliRunner, turns: SgsaccTurn[], utterance: string | ((t: SgsaccTurn) => string), options: SgsaccOptions): Promise<TurnScore[]> {
  const refs = await selectReferences(turns, runner, options);
  const utterances = new Map(turns.map((t) => [t.id, typeof utterance === 'string' ? utterance : utterance(t)]));
  return scoreTurns(turns, new Map(refs.map((r) => [r.id, r])), utterances, runner, options);
}

const rerankItem = (turn: SgsaccTurn, candidates: RerankItem['candidates']): RerankItem => ({
  id: turn.id,
  actions: turn.actions,
  context: turn.previousUserUtterance,
  candidates,
});

describe.skipIf(!hasData('sgd', 'test', 'dialogues_001.json'))(
  'the context-only control with the lexical stand-in on SGD',
  () => {
    let runner: NliRunner;
    let data: SgsaccData;
    const turn = (id: string) => data.expand(data.loaded.turns.filter((t) => t.id === id))[0];

    beforeAll(async () => {
      runner = await createNliRunner({ model: getLexicalStandinDir(), device: 'cpu', threads: 1, notice: () => {} });
      data = loadSgsaccData({ dataset: 'sgd', dataDir: DATA_DIR, input: DIALOGUES_001 });
    }, 60_000);
    afterAll(async () => {
      await runner?.close();
    });

    it('1_00000/3: "Is there anything else I can help you with?" gets no CONFIRM credit through the user\'s own words', async () => {
      const confirm = turn('1_00000/3');
      expect(confirm.actions.map((a) => `${a.act}(${a.slot})`)).toEqual([
        'CONFIRM(restaurant_name)',
        'CONFIRM(location)',
        'CONFIRM(time)',
        'CONFIRM(date)',
        'CONFIRM(number_of_seats)',
      ]);
      const generic = 'Is there anything else I can help you with?';
      const [off] = await scoreWith(runner, [confirm], generic, OFF);
      const [on] = await scoreWith(runner, [confirm], generic, ON);
      const credited = (s: TurnScore) => s.actions.filter((a) => a.entailed).map((a) => a.slot);
      // The failure: the previous user turn names the restaurant, the city and the time.
      expect(credited(off)).toEqual(['restaurant_name', 'location', 'time']);
      expect(off.actions.filter((a) => a.entailed).every((a) => a.contextUsed && a.contextOnly === true)).toBe(true);
      // The control: the context alone entails those references, so the utterance earned none of them.
      expect(credited(on)).toEqual([]);
      expect(on.actions.filter((a) => a.contextOnly).map((a) => a.slot)).toEqual(['restaurant_name', 'location', 'time']);
      const summary = aggregateSgsacc([off], { validation: true, isUnseen: () => false });
      expect(summary.counts).toMatchObject({ contextRescued: 3, contextOnly: 3 });
    });

    it('1_00000/1: the one-letter candidate "t" realises none of the REQUEST actions, in scoring and in reranking', async () => {
      const request = turn('1_00000/1');
      expect(request.actions.map((a) => a.act)).toEqual(['REQUEST', 'REQUEST', 'REQUEST']);
      const [off] = await scoreWith(runner, [request], 't', { ...OFF, validation: false });
      const [on] = await scoreWith(runner, [request], 't', { ...ON, validation: false });
      expect(off.faithful).toBe(true); // the slot descriptions in the context premise restate the references
      expect(on.faithful).toBe(false);
      expect(on.actions.every((a) => !a.entailed && a.contextOnly === true)).toBe(true);

      // In a rerank loop: "t" with the higher likelihood against a candidate that asks for all three.
      const asks = 'What is the name of the restaurant, the city where the restaurant is located and the tentative time of restaurant reservation?';
      const item = rerankItem(request, [
        { system: 'gamer', text: 't', likelihood: -0.1 },
        { system: 'honest', text: asks, likelihood: -9 },
      ]);
      const [without] = await rerank([item], { scorer: runner, contextControl: false });
      const [controlled] = await rerank([item], { scorer: runner }); // on by default
      expect(without.candidates[0]).toMatchObject({ fidelity: 3, realised: [true, true, true], contextOnly: [true, true, true] });
      expect(without.chosen.system).toBe('gamer');
      expect(controlled.candidates[0]).toMatchObject({ fidelity: 0, realised: [false, false, false], contextOnly: [true, true, true] });
      expect(controlled.candidates[1]).toMatchObject({ fidelity: 3, contextOnly: [false, false, false] });
      expect(controlled.chosen.system).toBe('honest');

      // A rerank() call that leaves the flag out ran the control: its config, and so its signature,
      // say so (046dc1c signed it as off), and its results are those of the call that asks for it.
      const ground = { model: runner.modelSignature, rulesHash: 'rules', dataset: 'sgd' };
      const [explicit] = await rerank([item], { scorer: runner, contextControl: true });
      expect(controlled).toEqual(explicit);
      expect(rerankSignature(resolveRerankConfig({}), ground)).toMatchObject({ context: true, contextControl: true });
      expect(rerankSignature(resolveRerankConfig({}), ground)).toEqual(rerankSignature(resolveRerankConfig({ contextControl: true }), ground));
      expect(rerankSignature(resolveRerankConfig({ contextControl: false }), ground).contextControl).toBeUndefined();
      // Without the context pass there is nothing for the control to check: signed off, as it runs.
      expect(rerankSignature(resolveRerankConfig({ context: false }), ground).contextControl).toBeUndefined();
    });

    it("the paper's Queens example stays credited: the user's previous turn does not name the stylist", async () => {
      const [ref] = await selectReferences([QUEENS], runner, ON);
      expect(ref.actions[0]).toMatchObject({ reference: 'The name of the hair stylist is Queens.', contextUsed: true, contextOnly: false, status: 'validated' });
      const [system] = await scoreWith(runner, [QUEENS], 'What about Queens?', ON);
      expect(system.validation).toBe('validated');
      expect(system.actions[0]).toMatchObject({ entailed: true, contextUsed: true, contextOnly: false });
      expect(system.faithful).toBe(true);
      const [r] = await rerank([rerankItem(QUEENS, [{ system: 's', text: 'What about Queens?' }])], { scorer: runner });
      expect(r.candidates[0]).toMatchObject({ realised: [true], contextOnly: [false] });
      // And a content-free utterance does not get the stylist through the context.
      const [nothing] = await scoreWith(runner, [QUEENS], 'Sure.', ON);
      expect(nothing.actions[0].entailed).toBe(false);
    });

    it('with the control on, the ground truth still scores 100% of the turns it validates (dialogues_001)', async () => {
      const turns = data.expand(data.loaded.turns.slice(0, 120));
      const run = await runSgsacc(turns, new Map(turns.map((t) => [t.id, t.utterance])), { ...ON, scorer: runner, groundTruthSystem: true });
      const summary = aggregateSgsacc(run.scores, { validation: true, isUnseen: () => false });
      expect(summary.counts.evaluated).toBeGreaterThan(20);
      expect(summary.validated!.all).toBe(100);
      // The turns the control excludes are exactly those with a reference only the context entails.
      const excluded = run.scores.filter((s) => s.exclusionReasons?.includes('context-only'));
      expect(excluded.length).toBeGreaterThan(0);
      for (const s of run.scores) {
        expect(s.exclusionReasons?.includes('context-only') ?? false).toBe(s.actions.some((a) => a.referenceViaContext && a.referenceContextOnly === true));
      }
    }, 60_000);

    it('score: off by default but counted on stdout and in the report; --context-control withdraws and signs; one references file serves both', async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'todeval-control-'));
      try {
        const f = (n: string) => path.join(dir, n);
        writeFileSync(f('p.jsonl'), [JSON.stringify({ id: '1_00000/1', utterance: 't' }), JSON.stringify({ id: '1_00000/3', utterance: 'Is there anything else I can help you with?' })].join('\n') + '\n');
        const base = ['score', '--dataset', 'sgd', '--data-dir', DATA_DIR, '--dialogues', DIALOGUES_001, '--limit', '4', '-i', f('p.jsonl'), '--allow-missing', '--model', getLexicalStandinDir(), '--device', 'cpu', '--references', f('refs.jsonl')];
        const off = await runCli([...base, '-o', f('off.json')]);
        expect(off.code).toBe(0);
        expect(off.stdout).toMatch(/context-only control off: the context alone entails 6 of 6 context rescues .*--context-control would withdraw them/);
        const on = await runCli([...base, '--context-control', '-o', f('on.json')]);
        expect(on.code).toBe(0);
        expect(on.stdout).toMatch(/context-only control on: withdrew 6 context rescues \(0 kept\)/);
        type Report = { signature: Record<string, unknown>; counts: { contextRescued: number; contextOnly: number; outcomes: Record<string, unknown> }; references: { reused: number } };
        const [a, b] = [f('off.json'), f('on.json')].map((x) => JSON.parse(readFileSync(x, 'utf8')) as Report);
        expect(a.signature.contextControl).toBeUndefined();
        expect(b.signature.contextControl).toBe(true);
        expect(a.counts).toMatchObject({ contextRescued: 6, contextOnly: 6 });
        expect(b.counts).toMatchObject({ contextRescued: 0, contextOnly: 6 });
        expect(b.references.reused).toBe(2); // the references do not depend on the control
        // 1_00000/1 is faithful through the context alone (off); with the control its references
        // (which only the context entails for the gold utterance too) take the turn out of validated SGSAcc.
        expect(a.counts.outcomes).toMatchObject({ contextOnly: 1, unfaithful: 1 });
        expect(b.counts.outcomes).toMatchObject({ unfaithful: 1, excluded: { 'context-only': 1 } });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  },
);

describe('the context-only control (fake NLI)', () => {
  // A REQUEST whose reference restates the slot description: the context alone entails it.
  const request: SgsaccTurn = {
    id: 'd/1',
    services: ['Restaurants_2'],
    utterance: 'Which restaurant would you like?',
    previousUserUtterance: 'Book me a table please.',
    actions: [
      {
        id: '0',
        service: 'Restaurants_2',
        act: 'REQUEST',
        slot: 'restaurant_name',
        values: [],
        candidates: ['Name of the restaurant?'],
        negatives: [],
        slotDescription: 'name of the restaurant',
      },
    ],
  };

  it('applying it is a view of the recorded verdicts: the same twice, and off leaves the score alone', async () => {
    const nli = new FakeWordOverlapNli();
    const [refs] = await selectReferences([request], nli, OFF);
    expect(refs.actions[0]).toMatchObject({ contextUsed: true, contextOnly: true });
    const [raw] = await scoreTurns([request], new Map([[request.id, refs]]), new Map([[request.id, 'Hello?']]), nli, OFF);
    expect(raw).toMatchObject({ faithful: true, validation: 'validated' });
    const once = applyContextControl(raw, refs);
    expect(once).toMatchObject({ faithful: false, validation: 'excluded', exclusionReasons: ['context-only'] });
    expect(applyContextControl(once, refs)).toEqual(once);
    const [direct] = await scoreTurns([request], new Map([[request.id, refs]]), new Map([[request.id, 'Hello?']]), nli, ON);
    expect(direct).toEqual(once);
    expect(raw.actions[0]).toMatchObject({ entailed: true, contextOnly: true, referenceContextOnly: true });
  });

  it('a references record stored before the control gains its verdicts, once, and is appended again', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'todeval-control-store-'));
    try {
      const file = path.join(dir, 'refs.jsonl');
      const sig = makeSignature({ model: 'fake', rules: 'r', validation: true, context: true });
      const gold = new Map([[request.id, request.utterance]]);
      await runSgsacc([request], gold, { ...OFF, scorer: new FakeWordOverlapNli(), references: RecordStore.open<TurnReferences>(file, 'todeval-sgsacc-references', sig) });
      // As an older build wrote it: no control verdicts anywhere.
      const [header, record] = readFileSync(file, 'utf8').trim().split('\n');
      const old = JSON.parse(record, (k, v: unknown) => (k === 'contextOnly' || k === 'referenceContextOnly' ? undefined : v)) as TurnReferences;
      expect(JSON.stringify(old)).not.toContain('contextOnly');
      writeFileSync(file, `${header}\n${JSON.stringify(old)}\n`);

      const nli = new FakeWordOverlapNli();
      const run = await runSgsacc([request], gold, { ...ON, scorer: nli, references: RecordStore.open<TurnReferences>(file, 'todeval-sgsacc-references', sig), groundTruthSystem: true });
      expect(run.references[0]!.actions[0].contextOnly).toBe(true);
      expect(run.scores[0]).toMatchObject({ validation: 'excluded', exclusionReasons: ['context-only'] });
      expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(3); // the completed record appended
      const again = new FakeWordOverlapNli();
      await runSgsacc([request], gold, { ...ON, scorer: again, references: RecordStore.open<TurnReferences>(file, 'todeval-sgsacc-references', sig), groundTruthSystem: true });
      expect(again.pairsScored).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the facts => text check: an utterance only the user turn entails is not credited by it with the control on', async () => {
    const echo: SgsaccTurn = {
      ...request,
      id: 'd/2',
      utterance: 'A table for four at Sakura tonight.',
      previousUserUtterance: 'A table for four at Sakura tonight.',
    };
    const nli = new FakeWordOverlapNli();
    const opts = { ...OFF, hallucination: true, validation: false };
    const [refs] = await selectReferences([echo], nli, opts);
    const refMap = new Map([[echo.id, refs]]);
    const { addHallucinationPremises } = await import('../src/metrics/sgsacc/hallucination.js');
    await addHallucinationPremises([echo], refMap, nli, opts);
    const utt = new Map([[echo.id, echo.utterance]]);
    const [off] = await scoreTurns([echo], refMap, utt, nli, opts);
    const [on] = await scoreTurns([echo], refMap, utt, nli, { ...opts, contextControl: true });
    expect(off.hallucination).toMatchObject({ hallucinated: false, contextUsed: true, contextOnly: true });
    expect(on.hallucination).toMatchObject({ hallucinated: true, contextUsed: true, contextOnly: true });
  });
});
