import { describe, expect, it } from 'vitest';
import { pickBest, rerank, type RerankItem } from '../src/rerank/rerank.js';
import { FakeWordOverlapNli } from './sgsacc-fake-nli.js';

const actions: RerankItem['actions'] = [
  { id: 'a0', service: 'Restaurants_1', act: 'INFORM', slot: 'restaurant_name', values: ['Tanpopo'], candidates: ['The restaurant is Tanpopo.', 'Tanpopo'], slotDescription: 'name of the restaurant' },
  { id: 'a1', service: 'Restaurants_1', act: 'INFORM', slot: 'cuisine', values: ['Japanese'], candidates: ['Serves Japanese food.', 'Japanese'], slotDescription: 'cuisine of the restaurant' },
];

describe('rerank', () => {
  it('counts realised actions against any candidate reference and picks the highest fidelity', async () => {
    const [r] = await rerank(
      [
        {
          id: 'x',
          actions,
          candidates: [
            { system: 'ft', text: 'Tanpopo is a nice place.', likelihood: -1 },
            { system: 'pt', text: 'Tanpopo serves Japanese.', likelihood: -5 },
          ],
        },
      ],
      { scorer: new FakeWordOverlapNli() },
    );
    expect(r.candidates.map((c) => c.fidelity)).toEqual([1, 2]);
    expect(r.candidates[1].realised).toEqual([true, true]);
    expect(r.chosen).toMatchObject({ system: 'pt', fidelity: 2 });
  });

  it('breaks fidelity ties by likelihood, then by the order the systems were given', async () => {
    const item = (likelihoods: (number | undefined)[]): RerankItem => ({
      id: 'y',
      actions,
      candidates: ['a', 'b', 'c'].map((system, i) => ({ system, text: `Tanpopo option ${i}`, likelihood: likelihoods[i] })),
    });
    const nli = new FakeWordOverlapNli();
    const [byLik] = await rerank([item([-3, -1, -2])], { scorer: nli });
    expect(byLik.chosen.system).toBe('b');
    const [byOrder] = await rerank([item([undefined, undefined, undefined])], { scorer: nli });
    expect(byOrder.chosen.system).toBe('a');
    const [byGivenOrder] = await rerank([item([-1, -1, -1])], { scorer: nli, systemOrder: ['c', 'b', 'a'] });
    expect(byGivenOrder.chosen.system).toBe('c');
    // A known likelihood beats an unknown one at equal fidelity.
    expect(
      pickBest([
        { system: 'a', text: '', fidelity: 1, realised: [] },
        { system: 'b', text: '', fidelity: 1, realised: [], likelihood: -100 },
      ]).system,
    ).toBe('b');
  });

  it('uses the context premise for actions the text alone does not realise', async () => {
    const item: RerankItem = {
      id: 'z',
      context: 'I want a haircut.',
      actions: [{ id: 'a0', service: 'Salon_1', act: 'OFFER', slot: 'stylist_name', values: ['Queens'], candidates: ['The name of the hair stylist is Queens.'], slotDescription: 'the name of the hair stylist' }],
      candidates: [{ system: 's', text: 'What about Queens?' }],
    };
    const [withCtx] = await rerank([item], { scorer: new FakeWordOverlapNli() });
    expect(withCtx.candidates[0].fidelity).toBe(1);
    const [noCtx] = await rerank([item], { scorer: new FakeWordOverlapNli(), context: false });
    expect(noCtx.candidates[0].fidelity).toBe(0);
  });

  it('batches the pairs of many items into one scorer call per pass', async () => {
    const nli = new FakeWordOverlapNli();
    const items: RerankItem[] = Array.from({ length: 10 }, (_, i) => ({
      id: `i${i}`,
      actions,
      candidates: [{ system: 'a', text: `Tanpopo ${i}` }, { system: 'b', text: 'Japanese' }],
    }));
    await rerank(items, { scorer: nli, context: false });
    expect(nli.calls.length).toBe(1);
    // 'Japanese' repeats across items: deduped to one set of 4 pairs
    expect(nli.calls[0].length).toBe(10 * 4 + 4);
  });

  it('refuses an item with two candidates of one system, naming the item (was: both ranked, the system counted twice)', async () => {
    const item: RerankItem = { id: 'twice', actions, candidates: [{ system: 'ft', text: 'Tanpopo.' }, { system: 'ft', text: 'Tanpopo serves Japanese.' }] };
    await expect(rerank([item], { scorer: new FakeWordOverlapNli() })).rejects.toThrow('item "twice" has two candidates of system "ft"; give each system one candidate per item');
  });
});
