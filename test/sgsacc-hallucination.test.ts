import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  aggregateHallucination,
  fourWayLabel,
  isContentFreeAct,
  joinReferences,
  RecordStore,
  runSgsacc,
  type SgsaccAction,
  type SgsaccTurn,
  type TurnReferences,
} from '../src/metrics/sgsacc/index.js';
import { makeSignature } from '../src/util/signature.js';
import { pickBest, rerank, type RerankItem } from '../src/rerank/rerank.js';
import { FakeWordOverlapNli } from './sgsacc-fake-nli.js';
import { tempDir } from './helpers/temp.js';

// FakeWordOverlapNli "entails" when every 4+-letter word of the hypothesis is in the premise, so
// the facts => text direction flags any content word the references do not carry.
const ON = { validation: true, context: true, hallucination: true };

function action(over: Partial<SgsaccAction> & Pick<SgsaccAction, 'id' | 'candidates'>): SgsaccAction {
  return { service: 'Restaurants_1', act: 'INFORM', slot: 's', values: [], negatives: [], slotDescription: '', ...over };
}

const tanpopo: SgsaccTurn = {
  id: 'r/1',
  services: ['Restaurants_1'],
  utterance: 'The restaurant is Tanpopo and the food is Japanese.',
  previousUserUtterance: 'Find me a place to eat.',
  actions: [
    action({ id: '0', slot: 'restaurant_name', candidates: ['The restaurant is Tanpopo'] }),
    action({ id: '1', slot: 'cuisine', act: 'OFFER', candidates: ['The food is Japanese.'] }),
  ],
};

const byGold = (turns: SgsaccTurn[]) => new Map(turns.map((t) => [t.id, t.utterance]));

describe('hallucination direction (fake NLI scorer)', () => {
  it('labels a turn ok, omission, hallucination or both', async () => {
    const systems: Record<string, string> = {
      ok: 'The restaurant is Tanpopo; the food is Japanese.',
      omission: 'The restaurant is Tanpopo.',
      hallucination: 'The restaurant is Tanpopo, the food is Japanese, and breakfast is free.',
      both: 'The restaurant is Tanpopo and breakfast is free.',
    };
    for (const [label, text] of Object.entries(systems)) {
      const { scores, references } = await runSgsacc([tanpopo], new Map([[tanpopo.id, text]]), { ...ON, scorer: new FakeWordOverlapNli() });
      expect(scores[0].label, text).toBe(label);
      expect(scores[0].hallucination).toMatchObject({ check: 'checked', validation: 'validated', hallucinated: label === 'hallucination' || label === 'both' });
      // The premise is the references in action order, each closed as a sentence.
      expect(references[0]!.hallucination).toMatchObject({
        premise: 'The restaurant is Tanpopo. The food is Japanese.',
        contextPremise: 'Find me a place to eat. The restaurant is Tanpopo. The food is Japanese.',
        status: 'validated',
        goldEntailed: true,
      });
    }
  });

  it('lets the utterance echo the previous user turn only with context augmentation', async () => {
    const echo = new Map([[tanpopo.id, 'A place to eat: the restaurant is Tanpopo, the food is Japanese.']]);
    const withCtx = await runSgsacc([tanpopo], echo, { ...ON, scorer: new FakeWordOverlapNli() });
    expect(withCtx.scores[0]).toMatchObject({ label: 'ok', hallucination: { contextUsed: true } });
    const noCtx = await runSgsacc([tanpopo], echo, { ...ON, context: false, scorer: new FakeWordOverlapNli() });
    expect(noCtx.scores[0]).toMatchObject({ label: 'hallucination', hallucination: { contextUsed: false } });
    expect(noCtx.references[0]!.hallucination!.contextPremise).toBeUndefined();
  });

  it('excludes turns whose gold utterance the premise does not entail, and counts them with the reason', async () => {
    const seating: SgsaccTurn = {
      id: 'r/3',
      services: ['Restaurants_1'],
      utterance: 'The restaurant is Tanpopo, with outdoor seating.',
      previousUserUtterance: 'Where can I eat?',
      actions: [action({ id: '0', slot: 'restaurant_name', candidates: ['The restaurant is Tanpopo.'] })],
    };
    // The omission side excludes this one already (no candidate entailed): its references are not trusted.
    const unheard: SgsaccTurn = { ...tanpopo, id: 'r/5', utterance: 'Sure, one moment.', actions: tanpopo.actions.map((a) => ({ ...a })) };
    const bye: SgsaccTurn = {
      id: 'r/7',
      services: ['Restaurants_1'],
      utterance: 'Have a good day.',
      previousUserUtterance: 'Thanks, bye.',
      actions: [action({ id: '0', act: 'GOODBYE', slot: '', candidates: ['Have a good day.', 'Bye bye.'] })],
    };
    const turns = [tanpopo, seating, unheard, bye];
    const gold = await runSgsacc(turns, byGold(turns), { ...ON, scorer: new FakeWordOverlapNli(), groundTruthSystem: true });
    const [ok, seat, unh, gb] = gold.references.map((r) => r!.hallucination!);
    expect(ok).toMatchObject({ status: 'validated', goldEntailed: true });
    expect(seat).toMatchObject({ check: 'checked', status: 'excluded', reasons: ['gold-not-entailed'], goldEntailed: false });
    expect(unh).toMatchObject({ status: 'excluded', reasons: ['references-excluded', 'gold-not-entailed'] });
    // GOODBYE only: content-free, not checked; the turn is validated by the omission side alone.
    expect(gb).toMatchObject({ check: 'content-free', premise: '', status: 'validated', goldEntailed: null });

    // The ground truth as a system: the validated rate is 0 by construction, the unvalidated one
    // is the share of checked turns whose gold fails.
    const g = aggregateHallucination(gold.scores, { validation: true, isUnseen: () => false });
    expect(g.counts).toMatchObject({ turns: 4, checked: 3, contentFree: 1, evaluated: 1, excluded: 2 });
    expect(g.counts.excludedByReason).toEqual({ 'gold-not-entailed': 2, 'references-excluded': 1 });
    expect(g.validated!.all).toBe(0);
    expect(g.unvalidated.all).toBeCloseTo(200 / 3, 9);

    // A system hallucinating on every turn: only the validated checked turn counts in the validated rate.
    const sys = await runSgsacc(turns, new Map(turns.map((t) => [t.id, `${t.utterance} Breakfast is free.`])), { ...ON, scorer: new FakeWordOverlapNli() });
    expect(sys.scores.map((s) => s.label)).toEqual(['hallucination', 'hallucination', 'both', 'ok']);
    expect(sys.scores[3].hallucination).toMatchObject({ check: 'content-free', hallucinated: null });
    const s = aggregateHallucination(sys.scores, { validation: true, isUnseen: () => false });
    expect(s.validated!.all).toBe(100);
    expect(s.counts.evaluated).toBe(1);
    expect(s.labels.validated).toEqual({ ok: 1, omission: 0, hallucination: 1, both: 0 });
    expect(s.labels.all).toEqual({ ok: 1, omission: 0, hallucination: 2, both: 1 });
    const off = aggregateHallucination(sys.scores, { validation: false, isUnseen: () => false });
    expect(off.validated).toBeNull();
    expect(off.unvalidated.all).toBe(100);
  });

  it('reports rates seen/unseen, per service and per act', async () => {
    const alarm: SgsaccTurn = {
      id: 'a/1',
      services: ['Alarm_1'],
      utterance: 'Your alarm is at 7 am.',
      previousUserUtterance: '',
      actions: [action({ id: '0', service: 'Alarm_1', slot: 'alarm_time', candidates: ['Your alarm is at 7 am.'] })],
    };
    const turns = [tanpopo, alarm];
    const utter = new Map([
      [tanpopo.id, 'The restaurant is Tanpopo, the food is Japanese, and breakfast is free.'],
      [alarm.id, 'Your alarm is at 7 am.'],
    ]);
    const { scores } = await runSgsacc(turns, utter, { ...ON, scorer: new FakeWordOverlapNli() });
    const s = aggregateHallucination(scores, { validation: true, isUnseen: (svc) => svc.startsWith('Alarm') });
    expect(s.validated).toEqual({ all: 50, seen: 100, unseen: 0 });
    expect(s.perService['Restaurants_1']).toMatchObject({ validated: 100, validatedN: 1 });
    expect(s.perService['Alarm_1']).toMatchObject({ validated: 0, validatedN: 1 });
    // Turn-level per act: the Tanpopo turn counts once for INFORM and once for OFFER.
    expect(s.perAct['INFORM']).toMatchObject({ validated: 50, validatedN: 2 });
    expect(s.perAct['OFFER']).toMatchObject({ validated: 100, validatedN: 1 });
  });

  it('costs one extra pair per checked turn, and without the flag nothing changes', async () => {
    const text = new Map([[tanpopo.id, 'The restaurant is Tanpopo; the food is Japanese.']]);
    const refsOnly = await runSgsacc([tanpopo], byGold([tanpopo]), { ...ON, scorer: new FakeWordOverlapNli() });
    const refs = RecordStore.open<TurnReferences>(path.join(tempDir('halluc'), 'r.jsonl'), 'todeval-sgsacc-references', makeSignature({ model: 'fake' }));
    refs.append(refsOnly.references.map((r) => r!));
    const on = new FakeWordOverlapNli();
    await runSgsacc([tanpopo], text, { ...ON, scorer: on, references: refs });
    const off = new FakeWordOverlapNli();
    const plain = await runSgsacc([tanpopo], text, { ...ON, hallucination: false, scorer: off, references: refs });
    expect(off.pairsScored).toBe(2); // one per action
    expect(on.pairsScored).toBe(3); // ... plus premise => utterance
    expect(plain.scores[0].hallucination).toBeUndefined();
    expect(plain.scores[0].label).toBeUndefined();
  });

  it('stores the premises with the references: a store built without them gains them once', async () => {
    const file = path.join(tempDir('halluc'), 'refs.jsonl');
    const sig = makeSignature({ model: 'fake', validation: true, context: true });
    await runSgsacc([tanpopo], byGold([tanpopo]), { ...ON, hallucination: false, scorer: new FakeWordOverlapNli(), references: RecordStore.open(file, 'todeval-sgsacc-references', sig) });
    expect(RecordStore.open<TurnReferences>(file, 'todeval-sgsacc-references', sig).done.get(tanpopo.id)!.hallucination).toBeUndefined();

    const first = new FakeWordOverlapNli();
    const gold = await runSgsacc([tanpopo], byGold([tanpopo]), { ...ON, scorer: first, groundTruthSystem: true, references: RecordStore.open(file, 'todeval-sgsacc-references', sig) });
    expect(first.pairsScored).toBe(1); // only the premise => gold pair
    expect(gold.scores[0]).toMatchObject({ label: 'ok', hallucination: { hallucinated: false, validation: 'validated' } });
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(3); // header, the record, the record again with its premise (later wins)
    const reloaded = RecordStore.open<TurnReferences>(file, 'todeval-sgsacc-references', sig);
    expect(reloaded.done.get(tanpopo.id)!.hallucination).toMatchObject({ premise: 'The restaurant is Tanpopo. The food is Japanese.' });

    const again = new FakeWordOverlapNli();
    await runSgsacc([tanpopo], byGold([tanpopo]), { ...ON, scorer: again, groundTruthSystem: true, references: reloaded });
    expect(again.pairsScored).toBe(0);
    // Without the flag, the stored ground truth is reported without the other direction.
    const plain = await runSgsacc([tanpopo], byGold([tanpopo]), { ...ON, hallucination: false, scorer: again, groundTruthSystem: true, references: reloaded });
    expect(plain.scores[0].hallucination).toBeUndefined();
  });

  it('content-free acts and labels follow the written rules', () => {
    for (const act of ['GOODBYE', 'REQ_MORE', 'reqmore', 'bye', 'greet', 'welcome']) expect(isContentFreeAct(act)).toBe(true);
    for (const act of ['INFORM', 'NOTIFY_SUCCESS', 'REQUEST', 'OFFER_INTENT']) expect(isContentFreeAct(act)).toBe(false);
    expect(joinReferences(['It is done', 'Anything else?'])).toBe('It is done. Anything else?');
    expect(fourWayLabel(null, true)).toBeNull();
    expect(fourWayLabel(false, null)).toBe('omission');
  });
});

describe('rerank --rank-by (fake NLI scorer)', () => {
  const actions: RerankItem['actions'] = [
    { id: 'a0', service: 'Restaurants_1', act: 'INFORM', slot: 'restaurant_name', values: ['Tanpopo'], candidates: ['The restaurant is Tanpopo.', 'Tanpopo'], slotDescription: '' },
    { id: 'a1', service: 'Restaurants_1', act: 'INFORM', slot: 'cuisine', values: ['Japanese'], candidates: ['The food is Japanese.', 'Japanese food'], slotDescription: '' },
  ];
  const item: RerankItem = {
    id: 'x',
    actions,
    context: 'Find me a place.',
    candidates: [
      { system: 'adds', text: 'Tanpopo serves Japanese food with free breakfast.', likelihood: -1 },
      { system: 'clean', text: 'Tanpopo has Japanese food.', likelihood: -4 },
      { system: 'omits', text: 'Tanpopo.', likelihood: -0.5 },
    ],
  };

  it('labels each candidate; fidelity ranking keeps the likelier hallucination, omission-hallucination does not', async () => {
    const [byFidelity] = await rerank([item], { scorer: new FakeWordOverlapNli(), hallucination: true });
    expect(byFidelity.candidates.map((c) => c.label)).toEqual(['hallucination', 'ok', 'omission']);
    expect(byFidelity.chosen).toMatchObject({ system: 'adds', label: 'hallucination' });
    const [byLabel] = await rerank([item], { scorer: new FakeWordOverlapNli(), rankBy: 'omission-hallucination' });
    expect(byLabel.chosen).toMatchObject({ system: 'clean', label: 'ok' });
    // Without hallucination no labels and no extra pairs.
    const nli = new FakeWordOverlapNli();
    const [plain] = await rerank([item], { scorer: nli });
    expect(plain.candidates[0].label).toBeUndefined();
    expect(nli.calls.flat().every((p) => actions.some((a) => a.candidates.includes(p.hypothesis)))).toBe(true);
  });

  it('omission-hallucination: no omission beats no hallucination, which beats likelihood', () => {
    const c = (system: string, fidelity: number, hallucinated: boolean, likelihood: number) => ({
      system,
      text: system,
      fidelity,
      realised: [true, fidelity === 2],
      hallucinated,
      likelihood,
    });
    const cands = [c('omits', 1, false, 0), c('both', 1, true, 1), c('adds', 2, true, -1), c('clean', 2, false, -2), c('clean2', 2, false, -3)];
    expect(pickBest(cands, undefined, 'omission-hallucination').system).toBe('clean');
    expect(pickBest(cands.filter((x) => x.system !== 'clean' && x.system !== 'clean2'), undefined, 'omission-hallucination').system).toBe('adds');
    expect(pickBest(cands.filter((x) => x.fidelity === 1), undefined, 'omission-hallucination').system).toBe('omits');
    expect(pickBest(cands, undefined, 'fidelity').system).toBe('adds');
  });
});
