import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  aggregateSgsacc,
  chooseReference,
  contextPremise,
  controlPremise,
  makeUnseenTest,
  RecordStore,
  runSgsacc,
  scoreTurns,
  selectReferences,
  type SgsaccAction,
  type SgsaccTurn,
  type TurnReferences,
  type TurnScore,
} from '../src/metrics/sgsacc/index.js';
import { makeSignature } from '../src/util/signature.js';
import { InputError } from '../src/util/errors.js';
import { FakeWordOverlapNli } from './sgsacc-fake-nli.js';
import { tempDir } from './helpers/temp.js';

const ON = { validation: true, context: true };

function action(over: Partial<SgsaccAction> & Pick<SgsaccAction, 'id' | 'candidates'>): SgsaccAction {
  return { service: 'Restaurants_1', act: 'INFORM', slot: 's', values: [], negatives: [], slotDescription: '', ...over };
}

// The paper's Figure 1.
const queens: SgsaccTurn = {
  id: 'd1/1',
  services: ['Salon_1'],
  utterance: 'What about Queens?',
  previousUserUtterance: 'I want to book a hair cut.',
  actions: [
    action({
      id: 'a0',
      service: 'Salon_1',
      act: 'OFFER',
      slot: 'stylist_name',
      values: ['Queens'],
      candidates: ['The name of the hair stylist is Queens.', 'stylist name is Queens.'],
      negatives: ['The name of the hair stylist is Kings.'],
      slotDescription: 'the name of the hair stylist',
    }),
  ],
};

function utterances(turns: SgsaccTurn[], f: (t: SgsaccTurn) => string = (t) => t.utterance): Map<string, string> {
  return new Map(turns.map((t) => [t.id, f(t)]));
}

describe('context premise', () => {
  it('follows Figure 1: previous user turn, slot description as a sentence, utterance', () => {
    expect(contextPremise('I want to book a hair cut.', 'the name of the hair stylist', 'What about Queens?')).toBe(
      'I want to book a hair cut. the name of the hair stylist. What about Queens?',
    );
    expect(contextPremise('', '', 'Hi.')).toBe('Hi.');
  });
});

describe('reference selection and validation', () => {
  it('rescues the Queens example with context, and excludes it without', async () => {
    const nli = new FakeWordOverlapNli();
    const [withCtx] = await selectReferences([queens], nli, ON);
    expect(withCtx.actions[0]).toMatchObject({
      status: 'validated',
      contextUsed: true,
      reference: 'The name of the hair stylist is Queens.',
    });
    const [noCtx] = await selectReferences([queens], new FakeWordOverlapNli(), { validation: true, context: false });
    expect(noCtx.actions[0]).toMatchObject({ status: 'excluded', reason: 'no-candidate-entailed', contextUsed: false });
  });

  it('picks the candidate with the highest entailment probability on the gold utterance', async () => {
    const nli = new FakeWordOverlapNli();
    const turn: SgsaccTurn = {
      id: 'd/1',
      services: ['Restaurants_1'],
      utterance: 'GOLD',
      previousUserUtterance: '',
      actions: [action({ id: 'a0', candidates: ['first', 'second', 'third'] })],
    };
    const p = (entailment: number) => ({ entailment, neutral: (1 - entailment) / 2, contradiction: (1 - entailment) / 2 });
    nli.overrides.set('GOLD\u0000first', p(0.6));
    nli.overrides.set('GOLD\u0000second', p(0.95));
    nli.overrides.set('GOLD\u0000third', p(0.1));
    const [r] = await selectReferences([turn], nli, ON);
    expect(r.actions[0].reference).toBe('second');
    expect(r.actions[0].referenceEntailment).toBeCloseTo(0.95);
    expect(r.actions[0].contextUsed).toBe(false);
  });

  it('chooses among the candidates the gold utterance entails; --reference-selection paper keeps the literal rule', async () => {
    // The case: the highest entailment (0.3841) loses the argmax to neutral, while another
    // candidate (0.3769) is entailed. Validation passes on the entailed one either way.
    const turn: SgsaccTurn = {
      id: '5_00113/13',
      services: ['Services_1'],
      utterance: 'What is the date of the appointment?',
      previousUserUtterance: '',
      actions: [action({ id: 'a0', act: 'REQUEST', slot: 'date', candidates: ['neutral-top', 'entailed-lower'] })],
    };
    const fake = () => {
      const nli = new FakeWordOverlapNli();
      nli.overrides.set(`${turn.utterance}\u0000neutral-top`, { entailment: 0.3841, neutral: 0.4, contradiction: 0.2159 });
      nli.overrides.set(`${turn.utterance}\u0000entailed-lower`, { entailment: 0.3769, neutral: 0.3231, contradiction: 0.3 });
      return nli;
    };
    const gold = utterances([turn]);
    const [entailed] = await selectReferences([turn], fake(), { ...ON, referenceSelection: 'entailed' });
    expect(entailed.actions[0]).toMatchObject({ status: 'validated', reference: 'entailed-lower', referenceEntailment: 0.3769 });
    const [defaulted] = await selectReferences([turn], fake(), ON);
    expect(defaulted.actions[0].reference).toBe('entailed-lower');
    expect((await scoreTurns([turn], new Map([[turn.id, entailed]]), gold, fake(), ON))[0]).toMatchObject({ validation: 'validated', faithful: true });

    const [paper] = await selectReferences([turn], fake(), { ...ON, referenceSelection: 'paper' });
    expect(paper.actions[0]).toMatchObject({ status: 'validated', reference: 'neutral-top' });
    expect((await scoreTurns([turn], new Map([[turn.id, paper]]), gold, fake(), ON))[0]).toMatchObject({ validation: 'validated', faithful: false });
  });

  it('with the context premise, chooses among the candidates that premise entails', async () => {
    const turn: SgsaccTurn = { ...queens, id: '1_00079/19' };
    const premise = contextPremise(turn.previousUserUtterance, turn.actions[0].slotDescription, turn.utterance);
    const nli = new FakeWordOverlapNli();
    const [c0, c1] = turn.actions[0].candidates;
    nli.overrides.set(`${premise}\u0000${c0}`, { entailment: 0.45, neutral: 0.5, contradiction: 0.05 });
    nli.overrides.set(`${premise}\u0000${c1}`, { entailment: 0.44, neutral: 0.3, contradiction: 0.26 });
    const [r] = await selectReferences([turn], nli, ON);
    expect(r.actions[0]).toMatchObject({ status: 'validated', contextUsed: true, reference: c1 });
    const [gt] = await scoreTurns([turn], new Map([[turn.id, r]]), utterances([turn]), nli, ON);
    expect(gt).toMatchObject({ validation: 'validated', faithful: true });
  });

  it('falls back to the highest entailment when no candidate is entailed (validation then excludes the turn)', () => {
    const p = (e: number) => ({ entailment: e, neutral: 1 - e, contradiction: 0 });
    expect(chooseReference([p(0.2), p(0.4), p(0.3)], 'entailed')).toBe(1);
    expect(chooseReference([p(0.2), p(0.4), p(0.3)], 'paper')).toBe(1);
    expect(chooseReference([p(0.45), { entailment: 0.44, neutral: 0.3, contradiction: 0.26 }], 'entailed')).toBe(1);
  });

  it('excludes an action whose gold utterance entails a negative reference', async () => {
    const turn: SgsaccTurn = {
      id: 'd/3',
      services: ['Restaurants_1'],
      utterance: 'Yes, it is kid friendly and not kid friendly.',
      previousUserUtterance: '',
      actions: [
        action({ id: 'a0', slot: 'kids', candidates: ['It is kid friendly.'], negatives: ['It is not kid friendly.'] }),
      ],
    };
    const [r] = await selectReferences([turn], new FakeWordOverlapNli(), ON);
    expect(r.actions[0]).toMatchObject({ status: 'excluded', reason: 'negative-entailed', entailedNegative: 'It is not kid friendly.' });
    const [off] = await selectReferences([turn], new FakeWordOverlapNli(), { validation: false, context: true });
    expect(off.actions[0].status).toBe('unchecked');
  });

  it('with validation off, negatives are never sent to the model', async () => {
    const nli = new FakeWordOverlapNli();
    await selectReferences([queens], nli, { validation: false, context: true });
    const hyps = nli.calls.flat().map((p) => p.hypothesis);
    expect(hyps).not.toContain('The name of the hair stylist is Kings.');
  });

  it('sends all pairs of a chunk in one call per pass and dedupes identical pairs', async () => {
    const nli = new FakeWordOverlapNli();
    const twin = { ...queens, id: 'd1/3' }; // same utterance and references: no new pairs
    await selectReferences([queens, twin], nli, ON);
    expect(nli.calls.length).toBe(3); // plain pass + context pass + the context-only control
    expect(nli.calls[0].length).toBe(3); // 2 candidates + 1 negative, once
    // The control: the context alone against the reference the context premise chose, once for both turns.
    expect(nli.calls[2]).toEqual([{ premise: 'I want to book a hair cut. the name of the hair stylist.', hypothesis: 'The name of the hair stylist is Queens.' }]);
  });
});

describe('turn scoring and aggregation', () => {
  const twoActions: SgsaccTurn = {
    id: 'd2/1',
    services: ['Restaurants_1'],
    utterance: 'Tanpopo serves Japanese food.',
    previousUserUtterance: 'Find me a place to eat.',
    actions: [
      action({ id: 'a0', slot: 'restaurant_name', candidates: ['The restaurant is Tanpopo.', 'Tanpopo'] }),
      action({ id: 'a1', slot: 'cuisine', candidates: ['The food is Japanese.', 'Japanese food'] }),
    ],
  };

  it('a turn is faithful only when every action is realised', async () => {
    const nli = new FakeWordOverlapNli();
    const refs = new Map((await selectReferences([twoActions], nli, ON)).map((r) => [r.id, r]));
    const [gold] = await scoreTurns([twoActions], refs, utterances([twoActions]), nli, ON);
    expect(gold.faithful).toBe(true);
    const [half] = await scoreTurns([twoActions], refs, new Map([[twoActions.id, 'Tanpopo is open.']]), nli, ON);
    expect(half.actions.map((a) => a.entailed)).toEqual([true, false]);
    expect(half.faithful).toBe(false);
  });

  it('context rescue also applies to the generated utterance', async () => {
    const nli = new FakeWordOverlapNli();
    const refs = new Map((await selectReferences([queens], nli, ON)).map((r) => [r.id, r]));
    const [s] = await scoreTurns([queens], refs, new Map([[queens.id, 'How about Queens then?']]), nli, ON);
    expect(s).toMatchObject({ faithful: true, validation: 'validated' });
    expect(s.actions[0]).toMatchObject({ contextUsed: true, referenceViaContext: true, status: 'validated' });
    expect(aggregateSgsacc([s], { validation: true, isUnseen: () => false }).counts).toMatchObject({
      contextRescued: 1,
      referenceContextRescued: 1,
      actionsValidated: 1,
      actionsExcluded: 0,
    });
    const [off] = await scoreTurns([queens], refs, new Map([[queens.id, 'How about Queens then?']]), nli, {
      validation: true,
      context: false,
    });
    expect(off.faithful).toBe(false);
  });

  it('splits seen/unseen by domain absent from the train schema and counts exclusions', () => {
    const mk = (id: string, service: string, faithful: boolean, validation: TurnScore['validation']): TurnScore => ({
      id,
      services: [service],
      validation,
      faithful,
      actions: [
        { actionId: 'a0', service, act: 'INFORM', slot: 's', reference: 'r', entailed: faithful, entailment: 0.5, contextUsed: false, referenceViaContext: false },
      ],
      ...(validation === 'excluded' ? { exclusionReasons: ['no-candidate-entailed' as const] } : {}),
    });
    const scores = [
      mk('a/1', 'Restaurants_2', true, 'validated'),
      mk('a/3', 'Restaurants_1', false, 'validated'),
      mk('b/1', 'Alarm_1', true, 'validated'),
      mk('b/3', 'Alarm_1', false, 'excluded'),
    ];
    const isUnseen = makeUnseenTest(['Restaurants_1', 'Hotels_3']);
    expect(isUnseen('Restaurants_2')).toBe(false);
    expect(isUnseen('Alarm_1')).toBe(true);
    const s = aggregateSgsacc(scores, { validation: true, isUnseen });
    expect(s.validated).toEqual({ all: 200 / 3, seen: 50, unseen: 100 });
    expect(s.unvalidated).toEqual({ all: 50, seen: 50, unseen: 50 });
    expect(s.counts).toMatchObject({ turns: 4, evaluated: 3, excluded: 1, evaluatedUnvalidated: 4 });
    expect(s.counts.excludedByReason).toEqual({ 'no-candidate-entailed': 1 });
    expect(s.perService['Alarm_1']).toMatchObject({ validated: 100, unvalidated: 50, validatedN: 1, unvalidatedN: 2 });
    expect(s.perAct['INFORM'].validatedN).toBe(3);
    const noVal = aggregateSgsacc(scores, { validation: false, isUnseen });
    expect(noVal.validated).toBeNull();
    expect(noVal.counts.evaluated).toBe(4);
  });
});

describe('stored references and resume', () => {
  const dir = tempDir('sgsacc');
  const sig = makeSignature({ model: 'fake', rules: 'r1', validation: true, context: true });
  const turns = [queens, { ...queens, id: 'd1/5', utterance: 'Queens has an opening.' }];

  it('a second system reuses stored references and costs only its own pairs', async () => {
    const file = path.join(dir, 'refs.jsonl');
    const gt = new FakeWordOverlapNli();
    await runSgsacc(turns, utterances(turns), { ...ON, scorer: gt, references: RecordStore.open(file, 'todeval-sgsacc-references', sig) });
    const refLines = readFileSync(file, 'utf8').trim().split('\n');
    expect(refLines.length).toBe(1 + turns.length);

    const sys = new FakeWordOverlapNli();
    const store = RecordStore.open<TurnReferences>(file, 'todeval-sgsacc-references', sig);
    expect(store.done.size).toBe(2);
    await runSgsacc(turns, utterances(turns, () => 'Kings is free.'), { ...ON, scorer: sys, references: store });
    const hyps = new Set(sys.calls.flat().map((p) => p.hypothesis));
    expect(hyps).toEqual(new Set(['The name of the hair stylist is Queens.'])); // only the stored references
    expect(sys.pairsScored).toBe(2); // plain + context for one distinct (utterance, reference)
    expect(store.done.get('d1/1')!.groundTruth).toMatchObject({ faithful: true, validation: 'validated' });
  });

  it('the ground truth as the system reuses the stored ground-truth scores: no pairs at all', async () => {
    const file = path.join(dir, 'refs.jsonl');
    const nli = new FakeWordOverlapNli();
    const store = RecordStore.open<TurnReferences>(file, 'todeval-sgsacc-references', sig);
    const run = await runSgsacc(turns, utterances(turns), { ...ON, scorer: nli, groundTruthSystem: true, references: store });
    expect(nli.pairsScored).toBe(0);
    expect(run.scores).toEqual(turns.map((t) => store.done.get(t.id)!.groundTruth));
    // ...and they equal scoring the gold utterances from scratch.
    const fresh = await runSgsacc(turns, utterances(turns), { ...ON, scorer: new FakeWordOverlapNli() });
    expect(fresh.scores).toEqual(run.scores);
  });

  it('refuses a file written under another signature', () => {
    const file = path.join(dir, 'refs.jsonl');
    const other = makeSignature({ model: 'fake', rules: 'r2', validation: true, context: true });
    expect(() => RecordStore.open(file, 'todeval-sgsacc-references', other)).toThrow(InputError);
    expect(() => RecordStore.open(file, 'todeval-sgsacc-references', other)).toThrow(/rules: r1 vs r2/);
  });

  it('a --references file shorter than --turns is completed first: every count is what was computed (was: ground truth over fewer turns, references.computed = all)', async () => {
    const refs = path.join(dir, 'short-refs.jsonl');
    const out = path.join(dir, 'long-out.jsonl');
    const four = [turns[0], turns[1], { ...turns[0], id: 'd2/1' }, { ...turns[1], id: 'd2/3' }];
    const full = await runSgsacc(four, utterances(four), {
      ...ON,
      scorer: new FakeWordOverlapNli(),
      references: RecordStore.open(refs, 'todeval-sgsacc-references', sig),
      results: RecordStore.open(out, 'todeval-sgsacc-turns', sig),
    });
    expect(full.counts).toEqual({ resumed: 0, referencesComputed: 4, referencesReused: 0, referencesMissing: 0 });
    // The references file loses its last two turns (an older run, another slice): --turns still has all four.
    writeFileSync(refs, readFileSync(refs, 'utf8').trim().split('\n').slice(0, 3).join('\n') + '\n');
    const resumed = await runSgsacc(four, utterances(four), {
      ...ON,
      scorer: new FakeWordOverlapNli(),
      references: RecordStore.open(refs, 'todeval-sgsacc-references', sig),
      results: RecordStore.open(out, 'todeval-sgsacc-turns', sig),
    });
    expect(resumed.counts).toEqual({ resumed: 4, referencesComputed: 2, referencesReused: 2, referencesMissing: 0 });
    expect(resumed.references.map((r) => r?.groundTruth)).toEqual(full.references.map((r) => r?.groundTruth));
    expect(RecordStore.open(refs, 'todeval-sgsacc-references', sig).done.size).toBe(4); // the store is whole again

    // Without a store, resumed turns have no references: counted as missing, never as computed.
    const bare = await runSgsacc(four, utterances(four), { ...ON, scorer: new FakeWordOverlapNli(), results: RecordStore.open(out, 'todeval-sgsacc-turns', sig) });
    expect(bare.counts).toEqual({ resumed: 4, referencesComputed: 0, referencesReused: 0, referencesMissing: 4 });
  });

  it('resumes: turns already in --out are not recomputed, a torn last line is', async () => {
    const out = path.join(dir, 'out.jsonl');
    const nli1 = new FakeWordOverlapNli();
    const { scores: first } = await runSgsacc([turns[0]], utterances(turns), {
      ...ON,
      scorer: nli1,
      results: RecordStore.open(out, 'todeval-sgsacc-turns', sig),
    });
    writeFileSync(out, readFileSync(out, 'utf8') + '{"id":"d1/5","faith'); // killed mid-write
    const nli2 = new FakeWordOverlapNli();
    const { scores: all } = await runSgsacc(turns, utterances(turns), {
      ...ON,
      scorer: nli2,
      results: RecordStore.open(out, 'todeval-sgsacc-turns', sig),
    });
    expect(all[0]).toEqual(first[0]);
    // Every pair with an utterance in it is d1/5's; the control's premise has none (it is the context alone).
    const control = controlPremise(queens.previousUserUtterance, queens.actions[0].slotDescription);
    expect(nli2.calls.flat().every((p) => p.premise.includes('opening') || p.premise === control)).toBe(true);
    // The torn write is cut off, not left mid-file: the file stays resumable.
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines.slice(1).map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['d1/1', 'd1/5']);
    expect(RecordStore.open(out, 'todeval-sgsacc-turns', sig).done.size).toBe(2);
  });
});
