import { describe, expect, it } from 'vitest';
import {
  aggregateSentences,
  runSgsacc,
  sentenceConfidence,
  type SgsaccAction,
  type SgsaccTurn,
  type TurnScore,
} from '../src/metrics/sgsacc/index.js';
import { turnItemStats } from '../src/metrics/sgsacc/item-stats.js';
import { pickBest, rerank, type RerankItem } from '../src/rerank/rerank.js';
import { FakeWordOverlapNli } from './sgsacc-fake-nli.js';

// FakeWordOverlapNli (a fake) "entails" when every 4+-letter word of the hypothesis is in the
// premise, so which fact supports which sentence can be worked out by hand below.
const ON = { validation: true, context: true, hallucination: true, granularity: 'sentence' as const };

function action(over: Partial<SgsaccAction> & Pick<SgsaccAction, 'id' | 'candidates'>): SgsaccAction {
  return { service: 'Restaurants_1', act: 'INFORM', slot: 's', values: [], negatives: [], slotDescription: '', ...over };
}

const tanpopo: SgsaccTurn = {
  id: 'r/1',
  services: ['Restaurants_1'],
  utterance: 'The restaurant is Tanpopo and the food is Japanese.',
  previousUserUtterance: 'Find me a place to eat.',
  actions: [
    action({ id: '0', slot: 'restaurant_name', values: ['Tanpopo'], candidates: ['The restaurant is Tanpopo'] }),
    action({ id: '1', slot: 'cuisine', act: 'OFFER', values: ['Japanese'], candidates: ['The food is Japanese.'] }),
  ],
};

const goodbye: SgsaccTurn = {
  id: 'r/3',
  services: ['Restaurants_1'],
  utterance: 'Have a good day.',
  previousUserUtterance: 'Thanks, that is all.',
  actions: [action({ id: '0', act: 'GOODBYE', slot: '', candidates: ['Have a good day.', 'Bye bye.', 'See you.'] })],
};

const run = (turns: SgsaccTurn[], replies: Record<string, string>, over: object = {}, scorer = new FakeWordOverlapNli()) =>
  runSgsacc(turns, new Map(Object.entries(replies)), { ...ON, ...over, scorer });

describe('sentence granularity of the hallucination direction (fake NLI scorer)', () => {
  it('says which sentence no fact supports, with the fact that supports each other one best', async () => {
    const reply = 'The restaurant is Tanpopo. The food is Japanese. Breakfast is free. Is there anything else I can help you with?';
    const { scores } = await run([tanpopo], { 'r/1': reply });
    const s = scores[0].sentences!;
    expect(s.check).toBe('checked');
    expect(s.sentences.map((v) => [v.text, v.verdict])).toEqual([
      ['The restaurant is Tanpopo.', 'supported'],
      ['The food is Japanese.', 'supported'],
      ['Breakfast is free.', 'unsupported'],
      ['Is there anything else I can help you with?', 'courtesy'],
    ]);
    expect(s.unsupported).toEqual(['Breakfast is free.']);
    expect(s.sentences[0].fact).toMatchObject({ kind: 'action', actionId: '0', slot: 'restaurant_name', text: 'The restaurant is Tanpopo.' });
    expect(s.sentences[1].fact).toMatchObject({ kind: 'action', actionId: '1', act: 'OFFER' });
    expect(s.sentences[0].probs).toEqual({ entailment: 0.9, neutral: 0.05, contradiction: 0.05 });
    expect(s.sentences[3].courtesy).toBe('anything-else');
    // Offsets point into the reply (what the report highlights).
    for (const v of s.sentences) expect(reply.slice(v.start, v.end)).toBe(v.text);
    // The turn-level verdict is the same as without sentences: the sentences only add.
    const turnOnly = await run([tanpopo], { 'r/1': reply }, { granularity: undefined });
    const { sentences: _s, ...rest } = scores[0];
    expect(rest).toEqual(turnOnly.scores[0]);
    expect(turnOnly.scores[0]).not.toHaveProperty('sentences');
  });

  it('max over the facts: a sentence saying two facts at once is supported by the joined facts', async () => {
    const { scores } = await run([tanpopo], { 'r/1': 'Tanpopo is the restaurant; the food is Japanese.' });
    const v = scores[0].sentences!.sentences[0];
    expect(v.verdict).toBe('supported');
    expect(v.fact).toEqual({ kind: 'facts', text: 'The restaurant is Tanpopo. The food is Japanese.' });
  });

  it('contradicted when no fact entails and one contradicts; the contradicting fact is named', async () => {
    const scorer = new FakeWordOverlapNli();
    scorer.overrides.set('The food is Japanese.\u0000The food is never Japanese.', { entailment: 0.01, neutral: 0.09, contradiction: 0.9 });
    const { scores } = await run([tanpopo], { 'r/1': 'The restaurant is Tanpopo. The food is never Japanese.' }, {}, scorer);
    const v = scores[0].sentences!.sentences[1];
    expect(v.verdict).toBe('contradicted');
    expect(v.contradictedBy).toMatchObject({ kind: 'action', actionId: '1' });
    expect(v.contradictionProbs?.contradiction).toBe(0.9);
    expect(scores[0].sentences!.unsupported).toEqual(['The food is never Japanese.']);
  });

  it('the context fact rescues an echo of the user turn; with the control on, a user-turn-only echo is unsupported', async () => {
    const reply = 'The restaurant is Tanpopo. A place to eat.';
    const off = (await run([tanpopo], { 'r/1': reply })).scores[0].sentences!.sentences[1];
    expect(off).toMatchObject({ verdict: 'supported', contextUsed: true, contextOnly: true });
    expect(off.fact?.kind).toBe('context');
    expect(off.fact?.text.startsWith('Find me a place to eat.')).toBe(true);
    const on = (await run([tanpopo], { 'r/1': reply }, { contextControl: true })).scores[0].sentences!.sentences[1];
    expect(on).toMatchObject({ verdict: 'unsupported', contextUsed: true, contextOnly: true });
    const noContext = (await run([tanpopo], { 'r/1': reply }, { context: false })).scores[0].sentences!.sentences[1];
    expect(noContext.verdict).toBe('unsupported');
    expect(noContext.contextUsed).toBeUndefined();
  });

  it('a content-free turn: courtesy stays courtesy, an invented sentence is checked and unsupported, the turn-level check unchanged', async () => {
    const zanzibar = 'Breakfast is free and the pool opens at midnight on Zanzibar.';
    const { scores } = await run([goodbye], { 'r/3': `See you. ${zanzibar}` });
    const s = scores[0].sentences!;
    expect(s.check).toBe('content-free');
    expect(s.sentences.map((v) => [v.text, v.verdict, v.courtesy])).toEqual([
      ['See you.', 'courtesy', 'generic-act'],
      [zanzibar, 'unsupported', undefined],
    ]);
    // Checked against the goodbye's own reference (the only fact the turn has), which does not support it.
    expect(s.sentences[1].fact).toMatchObject({ kind: 'action', act: 'GOODBYE' });
    expect(s.unsupported).toEqual([zanzibar]);
    // A courtesy-only reply flags nothing, and the turn-level direction still does not check the turn.
    const clean = (await run([goodbye], { 'r/3': 'Have a good day.' })).scores[0];
    expect(clean.sentences).toMatchObject({ check: 'content-free', unsupported: [] });
    expect(clean.sentences!.sentences.map((v) => v.verdict)).toEqual(['courtesy']);
    const turnOnly = (await run([goodbye], { 'r/3': `See you. ${zanzibar}` }, { granularity: undefined })).scores[0];
    const { sentences: _s, ...rest } = scores[0];
    expect(rest).toEqual(turnOnly);
    expect(turnOnly.hallucination).toMatchObject({ check: 'content-free', hallucinated: null });
    // Counted in the sentence rate like any checked sentence.
    const summary = aggregateSentences(scores, { validation: false, isUnseen: () => false });
    expect(summary.counts).toMatchObject({ checked: 1, unsupported: 1, courtesy: 1, unchecked: 0, turnsWithUnsupported: 1, checkedTurns: 0 });
  });

  it('an unscorable turn (an action without a reference) leaves its sentences unchecked', async () => {
    const unscorable: SgsaccTurn = { ...goodbye, id: 'r/5', actions: [action({ id: '0', slot: 'x', candidates: [] })] };
    const { scores } = await run([unscorable], { 'r/5': 'Breakfast is free.' });
    expect(scores[0].sentences).toMatchObject({ check: 'unscorable', unsupported: [] });
    expect(scores[0].sentences!.sentences.map((v) => v.verdict)).toEqual(['unchecked']);
  });

  it('costs one pair per fact and sentence, plus the retries; courtesy sentences none', async () => {
    const scorer = new FakeWordOverlapNli();
    const plain = new FakeWordOverlapNli();
    const reply = 'The restaurant is Tanpopo. Breakfast is free. Anything else?';
    await run([tanpopo], { 'r/1': reply }, {}, scorer);
    await run([tanpopo], { 'r/1': reply }, { granularity: undefined }, plain);
    const sentencePairs = scorer.calls.flat().filter((p) => !plain.calls.flat().some((q) => q.premise === p.premise && q.hypothesis === p.hypothesis));
    // 2 sentences checked x (2 actions + the joined facts), then one context retry for "Breakfast is free."
    expect(sentencePairs.filter((p) => p.hypothesis === 'Anything else?')).toEqual([]);
    expect(new Set(sentencePairs.map((p) => `${p.premise}|${p.hypothesis}`)).size).toBe(2 * 3 + 1);
  });

  it('rejects sentence granularity without the hallucination direction', async () => {
    await expect(run([tanpopo], { 'r/1': 'x' }, { hallucination: false })).rejects.toThrow(/needs the hallucination direction/);
  });
});

describe('the sentence-level rate', () => {
  const turns = [0, 1, 2, 3].map((i) => ({ ...tanpopo, id: `d${i}/1`, services: [i < 2 ? 'Restaurants_1' : 'Hotels_1'] }));
  const replies = {
    'd0/1': 'The restaurant is Tanpopo. Breakfast is free. Thanks!',
    'd1/1': 'The restaurant is Tanpopo. The food is Japanese.',
    'd2/1': 'Breakfast is free. Parking is free.',
    'd3/1': 'The food is Japanese.',
  };

  it('counts checked sentences, per service and act, and resamples them through the significance room', async () => {
    const { scores } = await run(turns, replies);
    const summary = aggregateSentences(scores, { validation: true, isUnseen: (s) => s === 'Hotels_1' });
    expect(summary.counts).toMatchObject({ turns: 4, checkedTurns: 4, sentences: 8, courtesy: 1, checked: 7, supported: 4, unsupported: 3, contradicted: 0, turnsWithUnsupported: 2 });
    // seen: d0 (1 of 2), d1 (0 of 2); unseen: d2 (2 of 2), d3 (0 of 1).
    expect(summary.unvalidated).toEqual({ all: (100 * 3) / 7, seen: (100 * 1) / 4, unseen: (100 * 2) / 3 });
    expect(summary.perService.Hotels_1).toMatchObject({ unvalidated: (100 * 2) / 3, unvalidatedN: 3 });
    expect(summary.perAct.OFFER).toMatchObject({ unvalidated: (100 * 3) / 7, unvalidatedN: 7 });
    const items = turnItemStats(scores, { validation: true });
    expect(Array.from(items['hallucination-sentences-all'].stats)).toEqual([1, 2, 0, 2, 2, 2, 0, 1]);
    const ci = sentenceConfidence(scores, { validation: true, samples: 200, seed: 7 });
    const all = ci.overall.metrics['hallucination-sentences-all'];
    expect(all.score).toBeCloseTo((100 * 3) / 7, 10);
    expect(all.low).toBeLessThanOrEqual(all.score);
    expect(all.high).toBeGreaterThanOrEqual(all.score);
    expect(ci.perService.Hotels_1.score).toBeCloseTo((100 * 2) / 3, 10);
    expect(ci.perService.Restaurants_1.score).toBeCloseTo((100 * 1) / 4, 10);
  });

  it('turn-level item statistics are unchanged without sentences', async () => {
    const { scores } = await run(turns, replies, { granularity: undefined });
    expect(Object.keys(turnItemStats(scores as TurnScore[], { validation: true })).filter((k) => k.includes('sentences'))).toEqual([]);
  });
});

describe('rerank --rank-by omission-sentences (fake NLI scorer)', () => {
  const actions: RerankItem['actions'] = [
    { id: 'a0', service: 'Restaurants_1', act: 'INFORM', slot: 'restaurant_name', values: ['Tanpopo'], candidates: ['The restaurant is Tanpopo.'], slotDescription: '' },
    { id: 'a1', service: 'Restaurants_1', act: 'INFORM', slot: 'cuisine', values: ['Japanese'], candidates: ['The food is Japanese.'], slotDescription: '' },
  ];
  const item: RerankItem = {
    id: 'x',
    actions,
    context: 'Find me a place.',
    candidates: [
      // Both realise every action and both "hallucinate" at turn level (the courtesy sentence is
      // not in the facts); only sentence granularity tells them apart.
      { system: 'invents', text: 'The restaurant is Tanpopo. The food is Japanese. Breakfast is free. Anything else?', likelihood: -1 },
      { system: 'polite', text: 'The restaurant is Tanpopo. The food is Japanese. Is there anything else I can help you with?', likelihood: -3 },
    ],
  };

  it('chooses the candidate with fewer unsupported sentences; omission-hallucination cannot tell them apart', async () => {
    const [bySentence] = await rerank([item], { scorer: new FakeWordOverlapNli(), rankBy: 'omission-sentences' });
    expect(bySentence.chosen.system).toBe('polite');
    expect(bySentence.candidates.map((c) => c.sentences?.unsupported)).toEqual([['Breakfast is free.'], []]);
    expect(bySentence.candidates.map((c) => c.hallucinated)).toEqual([true, true]);
    const [byLabel] = await rerank([item], { scorer: new FakeWordOverlapNli(), rankBy: 'omission-hallucination' });
    expect(byLabel.chosen.system).toBe('invents'); // both hallucinate: the likelier wins
    expect(byLabel.candidates[0].sentences).toBeUndefined();
  });

  it('no omission still comes first', () => {
    const c = (system: string, fidelity: number, unsupported: number, likelihood: number) => ({
      system,
      text: system,
      fidelity,
      realised: [true, fidelity === 2],
      likelihood,
      sentences: { check: 'checked' as const, sentences: [], unsupported: Array.from({ length: unsupported }, (_, k) => `s${k}`) },
    });
    const cands = [c('omits', 1, 0, 0), c('two', 2, 2, 1), c('one', 2, 1, -1), c('one-less-likely', 2, 1, -2)];
    expect(pickBest(cands, undefined, 'omission-sentences').system).toBe('one');
    expect(pickBest(cands.filter((x) => x.fidelity === 1), undefined, 'omission-sentences').system).toBe('omits');
  });
});
