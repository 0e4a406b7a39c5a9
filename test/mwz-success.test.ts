import { beforeAll, describe, expect, it } from 'vitest';
import { domainsFromSlotNames, estimateActiveDomains } from '../src/metrics/mwz/active-domains.js';
import { MwzDatabase } from '../src/metrics/mwz/database.js';
import { Evaluator } from '../src/metrics/mwz/evaluator.js';
import { loadBookedDomains, loadGroundTruth } from '../src/metrics/mwz/ground-truth.js';
import { aggregateSuccess, dialogueSuccess, OPTIMISTIC, round1, STANDARD } from '../src/metrics/mwz/success.js';
import type { BeliefState } from '../src/metrics/mwz/normalize-state.js';
import { normalizeResponse } from '../src/metrics/text/normalize-response.js';
import { DATA_DIR, hasData } from './helpers/shared.js';

describe('active domain estimation from state changes (mwzeval rules)', () => {
  it('follows the domain whose state changed and keeps it while nothing changes', () => {
    const states: BeliefState[] = [
      {},
      { restaurant: { food: 'chinese' } },
      { restaurant: { food: 'chinese' } },
      { restaurant: { food: 'chinese' }, train: { day: 'monday' } },
      { restaurant: { food: 'chinese', area: 'north' }, train: { day: 'monday' } },
    ];
    expect(estimateActiveDomains(states)).toEqual([[], ['restaurant'], ['restaurant'], ['train'], ['restaurant']]);
  });

  it('picks the changed domain with most slots, then falls back to the other changed one', () => {
    const states = [
      { hotel: { area: 'east' }, taxi: { leave: '10:00', departure: 'x' } },
      { hotel: { area: 'east' }, taxi: { leave: '10:00', departure: 'x' } },
    ];
    // turn 0: both changed, taxi has more slots; turn 1: nothing changed, two changed last time -> hotel
    expect(estimateActiveDomains(states)).toEqual([['taxi'], ['hotel']]);
  });
});

describe('active domains from placeholder names (add_slot_domains.py)', () => {
  it('keeps known domains named before the first underscore', () => {
    expect(domainsFromSlotNames('[Hotel_name] near [attraction_address], [value_count] [train_trainID]').sort()).toEqual([
      'attraction',
      'hotel',
      'train',
    ]);
    expect(domainsFromSlotNames('[value_name] is [name]')).toEqual([]);
  });
});

describe('Inform/Success aggregation', () => {
  it('rounds like Python (ties to even on exact halves)', () => {
    expect(round1(12.25)).toBe(12.2);
    expect(round1(12.75)).toBe(12.8);
    expect(round1(12.35)).toBe(12.3); // the double nearest 12.35 lies below the half: Python gives 12.3
    expect(round1((100 * 2) / 3)).toBe(66.7);
  });

  it('divides each domain by the dialogues whose goal has it; unmatched dialogues count as unsuccessful', () => {
    const rates = aggregateSuccess([
      { match: { hotel: true, taxi: true, total: true }, success: { hotel: true, taxi: false, total: false }, offered: {}, provided: {} },
      { match: { hotel: false, total: false }, success: {}, offered: {}, provided: {} },
    ]);
    expect(rates.inform).toEqual({ hotel: 50, taxi: 100, total: 50 });
    expect(rates.success).toEqual({ hotel: 50, taxi: 0, total: 0 });
  });
});

// Table 7 of "Shades of BLEU" walks through one UBAR dialogue. The paper names it SNG0805, but its
// text ("I'd like to find a resturant that serves cheap Chinese food!") is test dialogue SNG0580.
const TABLE7_TURNS: { response: string; state: BeliefState }[] = [
  {
    response: 'there are [value_choice] [value_price] [value_food] restaurant -s. do you have a preference of area?',
    state: { restaurant: { food: 'chinese', pricerange: 'cheap' } },
  },
  {
    response: 'okay, i have booked [value_name], which is located at [value_address]. is there anything else i can do for you today?',
    state: { restaurant: { food: 'chinese', pricerange: 'cheap', area: 'centre' } },
  },
  {
    response: '[value_name] is in the [value_area] and the postcode is [value_postcode]. is there anything else i can help you with today?',
    state: { restaurant: { food: 'chinese', pricerange: 'cheap', area: 'centre' } },
  },
  {
    response: 'thank you for using our services.',
    state: { restaurant: { food: 'chinese', pricerange: 'cheap', area: 'centre' } },
  },
];

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('paper Table 7 walk-through (SNG0580)', () => {
  // Read in beforeAll, not in the suite body: vitest runs the body of a skipped suite too.
  let gt!: ReturnType<typeof loadGroundTruth>;
  let db!: MwzDatabase;
  let booked!: ReturnType<typeof loadBookedDomains>;
  let goal!: ReturnType<typeof loadGroundTruth>['dialogues'][string]['goal'];
  beforeAll(() => {
    gt = loadGroundTruth(DATA_DIR);
    db = MwzDatabase.load(DATA_DIR);
    booked = loadBookedDomains(DATA_DIR);
    goal = gt.dialogues.sng0580.goal;
  });

  it('derives the goal of the table: cheap Chinese restaurant, ADDRESS and POST requested', () => {
    expect(Object.keys(goal)).toEqual(['restaurant']);
    expect(goal.restaurant.informable).toEqual({ food: 'chinese', pricerange: 'cheap' });
    expect(goal.restaurant.requestable.sort()).toEqual(['ADDRESS', 'POST']);
    expect(db.query('restaurant', goal.restaurant.informable).sort()).toEqual(['19185', '19197', '19212', '19219']);
  });

  it('offers 19212, 19185, 19219, provides ADDRESS and POST, and is matching and successful', () => {
    const responses = TABLE7_TURNS.map((t) => normalizeResponse(t.response).text);
    expect(responses[1]).toBe('okay, i have booked NAME, which is located at ADDRESS. is there anything else i can do for you today?');
    const states = TABLE7_TURNS.map((t) => t.state);
    const outcome = dialogueSuccess(
      goal,
      { responses, states, activeDomains: estimateActiveDomains(states), bookedDomains: booked.sng0580 },
      db,
      STANDARD,
    );
    expect((outcome.offered.restaurant as string[]).sort()).toEqual(['19185', '19212', '19219']);
    expect(outcome.provided.restaurant).toEqual(['ADDRESS', 'POST']);
    expect(outcome.match).toEqual({ restaurant: true, total: true });
    expect(outcome.success).toEqual({ restaurant: true, total: true });
  });

  it('fails Inform when the offered venues leave the goal, and Success when POST is never given', () => {
    const base = TABLE7_TURNS.map((t) => ({ ...t }));
    const wrongState = base.map((t) => ({ ...t, state: { restaurant: { food: 'chinese', pricerange: 'expensive' } } }));
    const ev = new Evaluator({ success: true, dataDir: DATA_DIR });
    expect(ev.evaluate({ sng0580: wrongState }).success!.inform.total).toBe(0);
    const noPost = base.map((t) => ({ ...t, response: t.response.replace('[value_postcode]', 'cb21db') }));
    const r = ev.evaluate({ sng0580: noPost }).success!;
    expect(r.inform.total).toBe(100);
    expect(r.success.total).toBe(0);
    // optimistic: intersection matching accepts the expensive offer only if it meets the goal -> still 0
    expect(ev.evaluate({ sng0580: wrongState }).success!.optimistic.inform.total).toBe(0);
  });

  it('reduced search (optimistic) finds a named venue despite a wrong price constraint', () => {
    const prediction = {
      responses: ['i recommend NAME.'],
      states: [{ restaurant: { name: 'charlie chan', pricerange: 'expensive' } }],
      activeDomains: [['restaurant']],
      bookedDomains: [[]],
    };
    const outcome = dialogueSuccess(goal, prediction, db, OPTIMISTIC);
    expect(outcome.offered.restaurant).toEqual(['19212']); // charlie chan's row in restaurant_db.json
    expect(outcome.match.restaurant).toBe(true);
    const strict = dialogueSuccess(goal, prediction, db, STANDARD);
    expect(strict.offered.restaurant).toEqual([]);
    expect(strict.match.restaurant).toBe(false);
  });
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('BLEU references kept per ground truth (compare, stdio)', () => {
  it('serves an evaluation of other dialogues its own references: the same BLEU as a fresh evaluator', () => {
    const ev = new Evaluator({ bleu: true, dataDir: DATA_DIR });
    const turns = (id: string, response: string) => ev.groundTruth().dialogues[id].references.map(() => ({ response }));
    const alone = { sng0580: TABLE7_TURNS.map((t) => ({ response: t.response })) };
    // Another dialogue beside it changes the reference stream; so does the same dialogue list in another order.
    const two = { ...alone, pmul4648: turns('pmul4648', 'the [value_name] is at [value_address].') };
    const swapped = { pmul4648: two.pmul4648, sng0580: two.sng0580 };
    // With each turn's BLEU statistics: references misaligned with their turns would change those, not the corpus sums.
    const run = (e: Evaluator, p: Record<string, { response: string }[]>) => {
      const r = e.evaluateValidated(e.validate(p), undefined, { items: true });
      return { bleu: r.details.bleu, items: r.items };
    };
    const first = run(ev, alone);
    const shared = [run(ev, two), run(ev, swapped), run(ev, alone)];
    const fresh = [two, swapped, alone].map((p) => run(new Evaluator({ bleu: true, dataDir: DATA_DIR }), p));
    expect(shared).toEqual(fresh);
    expect(shared[2]).toEqual(first);
    // The inputs differ enough that references of one scored for another would show.
    expect(fresh[0].bleu).not.toEqual(fresh[2].bleu);
    expect(fresh[0].items!.sng0580).toEqual(fresh[1].items!.sng0580);
  });
});
