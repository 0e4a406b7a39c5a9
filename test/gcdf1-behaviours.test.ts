import { describe, expect, it } from 'vitest';
import { parseCanonicalValues } from '../src/metrics/gcdf1/canonical-values.js';
import { defaultConfig, type Gcdf1Config } from '../src/metrics/gcdf1/config.js';
import { evaluateDialogue, makeEvaluator } from '../src/metrics/gcdf1/evaluate.js';
import type { DialogueRecord } from '../src/metrics/gcdf1/record.js';
import type { Dialogue } from '../src/metrics/gcdf1/types.js';
import { conversation, system, user } from './gcdf1-conversations.js';

function score(d: Dialogue, edit?: (c: Gcdf1Config) => void, cmapJson?: unknown): DialogueRecord {
  const config = defaultConfig();
  edit?.(config);
  const cmap = cmapJson ? parseCanonicalValues(cmapJson, 'inline-map') : undefined;
  if (!cmap) config.igcd_f1.value_matching.use_canonical_map = false;
  return evaluateDialogue(d, makeEvaluator(config, cmap));
}

const igcd = (r: DialogueRecord, key = 'combined') => r.scores.igcd_f1[key];
const rgcd = (r: DialogueRecord, key = 'combined') => r.scores.rgcd_f1[key];
const seen = (r: DialogueRecord, metric: 'igcd_f1' | 'rgcd_f1', behaviour: string) => r.behaviours[metric][behaviour];

const restaurantGoal = { restaurant: { info: { food: 'indian', area: 'centre' } } };

describe('I-GCDF1: constraints and value normalization', () => {
  it('scores 1 when every goal constraint is informed once and understood', () => {
    const r = score(
      conversation(restaurantGoal, [
        user([['Restaurant-Inform', 'food', 'indian'], ['Restaurant-Inform', 'area', 'centre']]),
        system([['Restaurant-Inform', 'phone', '01223']]),
      ]),
    );
    expect(igcd(r)).toEqual({ f1: 1, precision: 1, recall: 1 });
    expect(igcd(r, 'restaurant').f1).toBe(1);
  });

  it('misses a goal constraint: recall drops, the constraint is logged as missed', () => {
    const r = score(
      conversation(restaurantGoal, [user([['Restaurant-Inform', 'food', 'indian']]), system([['Restaurant-Inform', 'phone', '1']])]),
    );
    expect(igcd(r).precision).toBe(1);
    expect(igcd(r).recall).toBe(0.5);
    expect(seen(r, 'igcd_f1', 'missed_constraints')).toEqual({ restaurant: ['area===centre'] });
  });

  it('fuzzy-matches a misspelt value to the goal value (token sort ratio >= 0.9), unless matching is off', () => {
    const d = conversation(restaurantGoal, [
      user([['Restaurant-Inform', 'food', 'indiann'], ['Restaurant-Inform', 'area', 'centre']]),
      system([['Restaurant-Inform', 'phone', '1']]),
    ]);
    expect(igcd(score(d)).f1).toBe(1);
    const strict = score(d, (c) => (c.igcd_f1.value_matching.use_fuzzy_match = false));
    expect(strict.scores.igcd_f1.combined.precision).toBe(0.5);
  });

  it('maps a paraphrase to its canonical value through the canonical map', () => {
    const map = {
      food: { indian: ['indian', 'curry house food'], special_keys: { not_in_goal: {} } },
      area: { centre: ['centre', 'city center'], special_keys: { not_in_goal: {} } },
    };
    const d = conversation(restaurantGoal, [
      user([['Restaurant-Inform', 'food', 'curry house food'], ['Restaurant-Inform', 'area', 'city center']]),
      system([['Restaurant-Inform', 'phone', '1']]),
    ]);
    const r = score(d, undefined, map);
    expect(igcd(r).f1).toBe(1);
    expect(seen(r, 'igcd_f1', 'preprocessed_user_constraints.values_matched')?.restaurant).toHaveLength(2);
    // without the map the paraphrases are too far from the goal values
    expect(igcd(score(d)).precision).toBe(0);
  });
});

describe('I-GCDF1: constraints not in the goal', () => {
  const offerTurns = (offered: boolean) => [
    user([['Restaurant-Inform', 'food', 'indian'], ['Restaurant-Inform', 'area', 'centre']]),
    system(offered ? [['Restaurant-Inform', 'pricerange', 'cheap']] : [['Restaurant-Inform', 'phone', '1']]),
    user([['Restaurant-Inform', 'pricerange', 'cheap']]),
    system([['Restaurant-Inform', 'phone', '1']]),
  ];

  it('accepts a constraint the system offered in the previous turns', () => {
    const r = score(conversation(restaurantGoal, offerTurns(true)));
    expect(igcd(r).precision).toBe(1);
    expect(seen(r, 'igcd_f1', 'constraints_not_in_goal.elicited_by_sys_offer')).toBeDefined();
  });

  it('counts an unprompted constraint outside the goal as a false positive', () => {
    const r = score(conversation(restaurantGoal, offerTurns(false)));
    expect(igcd(r).precision).toBeCloseTo(2 / 3, 12);
    expect(seen(r, 'igcd_f1', 'constraints_not_in_goal.unmatched')).toEqual({ restaurant: [{ 'pricerange===cheap': 2 }] });
  });

  it('accepts dontcare values and taxi departure/destination without looking at the context', () => {
    const goal = { ...restaurantGoal, taxi: { info: { leaveAt: '17:00' } } };
    const r = score(
      conversation(goal, [
        user([['Restaurant-Inform', 'food', 'indian'], ['Restaurant-Inform', 'area', 'centre'], ['Restaurant-Inform', 'pricerange', 'dontcare']]),
        system([['Restaurant-Inform', 'phone', '1']]),
        user([['Taxi-Inform', 'leaveAt', '17:00'], ['Taxi-Inform', 'departure', 'kymmoy']]),
        system([['Taxi-Inform', 'phone', '2']]),
      ]),
    );
    expect(igcd(r)).toEqual({ f1: 1, precision: 1, recall: 1 });
    expect(seen(r, 'igcd_f1', 'constraints_not_in_goal.auto_matched_value')).toBeDefined();
    expect(seen(r, 'igcd_f1', 'constraints_not_in_goal.auto_matched_slot')).toBeDefined();
  });

  it('accepts a constraint answering a system question only when sys_checks.requests is on', () => {
    const d = conversation(restaurantGoal, [
      user([['Restaurant-Inform', 'food', 'indian'], ['Restaurant-Inform', 'area', 'centre']]),
      system([['Restaurant-Request', 'pricerange', '?']]),
      user([['Restaurant-Inform', 'pricerange', 'cheap']]),
      system([['Restaurant-Inform', 'phone', '1']]),
    ]);
    expect(igcd(score(d)).precision).toBeCloseTo(2 / 3, 12); // published setting: requests: false
    const r = score(d, (c) => (c.igcd_f1.constraints_not_in_goal.sys_checks.requests = true));
    expect(igcd(r).precision).toBe(1);
    expect(seen(r, 'igcd_f1', 'constraints_not_in_goal.elicited_by_sys_question')).toBeDefined();
  });

  it('accepts the name of a venue the system recommended earlier', () => {
    const r = score(
      conversation(restaurantGoal, [
        user([['Restaurant-Inform', 'food', 'indian'], ['Restaurant-Inform', 'area', 'centre']]),
        system([['Restaurant-Recommend', 'name', 'curry garden']]),
        user([['Restaurant-Inform', 'name', 'curry garden']]),
        system([['Restaurant-Inform', 'phone', '1']]),
      ]),
    );
    expect(igcd(r).precision).toBe(1);
    expect(seen(r, 'igcd_f1', 'constraints_not_in_goal.elicited_by_recommendation')).toBeDefined();
  });
});

describe('I-GCDF1: repeated constraints', () => {
  /** area repeated at turn 2 after the given system turn; the system turn's NLU is given too. */
  const repeatAfter = (sys: Parameters<typeof system>[0], nlu?: Parameters<typeof system>[1], second = user([['Restaurant-Inform', 'area', 'centre']])) =>
    conversation(restaurantGoal, [
      user([['Restaurant-Inform', 'food', 'indian'], ['Restaurant-Inform', 'area', 'centre']]),
      system(sys, nlu),
      second,
      system([['Restaurant-Inform', 'phone', '1']]),
    ]);

  it('penalises a repetition no behaviour explains', () => {
    const r = score(repeatAfter([['Restaurant-Inform', 'phone', '1']]));
    expect(igcd(r).precision).toBeCloseTo(2 / 3, 12);
    expect(igcd(r).recall).toBe(1);
    expect(seen(r, 'igcd_f1', 'multiple_constraint_informs.unmatched')).toEqual({ restaurant: [{ 'area===centre': [0, 2] }] });
  });

  it('accepts repeating constraints after the system found no match (no-offer)', () => {
    const r = score(repeatAfter([['Restaurant-NoOffer', 'food', 'indian']]));
    expect(igcd(r).precision).toBe(1);
    expect(seen(r, 'igcd_f1', 'multiple_constraint_informs.elicited_by_no_offers')).toBeDefined();
  });

  it('accepts a repetition when the system NLU missed the constraint', () => {
    const r = score(repeatAfter([['Restaurant-Inform', 'phone', '1']], [['Restaurant-Inform', 'food', 'indian']]));
    expect(igcd(r).precision).toBe(1);
    expect(seen(r, 'igcd_f1', 'multiple_constraint_informs.failed_sys_nlu')).toBeDefined();
    const noNlu = score(
      repeatAfter([['Restaurant-Inform', 'phone', '1']], [['Restaurant-Inform', 'food', 'indian']]),
      (c) => (c.igcd_f1.repetitions.sys_behaviours.nlu = false),
    );
    expect(igcd(noNlu).precision).toBeCloseTo(2 / 3, 12);
  });

  it('accepts a repetition answering a system question, and while booking a recommended venue', () => {
    const question = score(repeatAfter([['Restaurant-Request', 'area', '?']]));
    expect(igcd(question).precision).toBe(1);
    expect(seen(question, 'igcd_f1', 'multiple_constraint_informs.elicited_by_sys_question')).toBeDefined();
    expect(seen(question, 'igcd_f1', 'multiple_constraint_informs.repeated_when_answering_request')).toBeUndefined();

    const booking = score(repeatAfter([['Restaurant-Recommend', 'name', 'curry garden']]));
    expect(igcd(booking).precision).toBe(1);
    expect(seen(booking, 'igcd_f1', 'multiple_constraint_informs.repeated_while_booking')).toBeDefined();
  });

  it('accepts confirming parameters of the choices the system listed', () => {
    const r = score(repeatAfter([['Restaurant-Inform', 'choice', '3']]));
    expect(igcd(r).precision).toBe(1);
    expect(seen(r, 'igcd_f1', 'multiple_constraint_informs.confirmed_choice_params')).toBeDefined();
  });

  it('accepts repeating constraints while requesting information', () => {
    const r = score(
      repeatAfter([['Restaurant-Inform', 'phone', '1']], undefined, user([['Restaurant-Inform', 'area', 'centre'], ['Restaurant-Request', 'address']])),
    );
    expect(igcd(r).precision).toBe(1);
    expect(seen(r, 'igcd_f1', 'multiple_constraint_informs.repeated_while_requesting_info')).toBeDefined();
  });

  it('stops compensating after max_repetitions', () => {
    const turns = [user([['Restaurant-Inform', 'food', 'indian'], ['Restaurant-Inform', 'area', 'centre']])];
    for (let i = 0; i < 4; i++) turns.push(system([['Restaurant-NoOffer', 'area', 'centre']]), user([['Restaurant-Inform', 'area', 'centre']]));
    turns.push(system([['Restaurant-Inform', 'phone', '1']]));
    const d = conversation(restaurantGoal, turns);
    expect(igcd(score(d)).precision).toBe(1);
    const capped = score(d, (c) => (c.igcd_f1.repetitions.max_repetitions = 2));
    // 6 informs, true positives: food, area + 2 compensated repetitions
    expect(igcd(capped).precision).toBeCloseTo(4 / 6, 12);
  });
});

describe('I-GCDF1: pre-emption and failed searches', () => {
  const hotelGoal = { hotel: { info: { area: 'north', type: 'guesthouse' }, reqt: { phone: '?' } } };

  it('does not hold a constraint against the user when the system stated it first', () => {
    const d = conversation(hotelGoal, [
      user([['Hotel-Inform', 'area', 'north']]),
      system([['Hotel-Inform', 'type', 'guesthouse'], ['Hotel-Inform', 'phone', '01223']]),
      user([['general-bye']]),
      system([['general-bye']]),
    ]);
    const r = score(d);
    expect(igcd(r)).toEqual({ f1: 1, precision: 1, recall: 1 });
    expect(seen(r, 'igcd_f1', 'sys_preempted_constraint')).toEqual({ hotel: [{ 'type===guesthouse': [1] }] });
    expect(igcd(score(d, (c) => (c.igcd_f1.compensate_preemption = false))).recall).toBe(0.5);
  });

  it('drops constraints and requests the user could not state after an empty database result', () => {
    const goal = {
      hotel: { info: { area: 'north', stars: '5' }, book: { people: '2' }, reqt: { phone: '?' } },
      train: { info: { day: 'monday' }, reqt: { price: '?' } },
    };
    const d = conversation(goal, [
      user([['Hotel-Inform', 'area', 'north'], ['Hotel-Inform', 'stars', '5']]),
      system([['Hotel-NoOffer', 'stars', '5']]),
      user([['Train-Inform', 'day', 'monday'], ['Train-Request', 'price']]),
      system([['Train-Inform', 'price', '10 pounds']]),
    ]);
    const r = score(d);
    expect(igcd(r, 'hotel')).toEqual({ f1: 1, precision: 1, recall: 1 });
    expect(seen(r, 'igcd_f1', 'failed_dialogue')).toEqual({ hotel: ['people===2'] });
    // the hotel phone request left the goal, so R-GCDF1 only scores the train request
    expect(rgcd(r, 'hotel')).toBeUndefined();
    expect(rgcd(r)).toEqual({ f1: 1, precision: 1, recall: 1 });
    const strict = score(d, (c) => {
      c.igcd_f1.empty_db_result.compensate_missed_constraints = false;
      c.igcd_f1.empty_db_result.compensate_request = false;
    });
    expect(igcd(strict, 'hotel').recall).toBeCloseTo(2 / 3, 12);
    expect(rgcd(strict, 'hotel').recall).toBe(0);
  });
});

describe('R-GCDF1: requests', () => {
  const goal = { attraction: { info: { type: 'museum' }, reqt: { address: '?', phone: '?' } } };
  const open = user([['Attraction-Inform', 'type', 'museum'], ['Attraction-Request', 'address'], ['Attraction-Request', 'phone']]);

  it('scores 1 when each goal request is made once', () => {
    const r = score(conversation(goal, [open, system([['Attraction-Inform', 'address', 'x'], ['Attraction-Inform', 'phone', 'y']])]));
    expect(rgcd(r)).toEqual({ f1: 1, precision: 1, recall: 1 });
  });

  it('penalises asking again after the system answered', () => {
    const r = score(
      conversation(goal, [
        open,
        system([['Attraction-Inform', 'address', 'x'], ['Attraction-Inform', 'phone', 'y']]),
        user([['Attraction-Request', 'address']]),
        system([['Attraction-Inform', 'address', 'x']]),
      ]),
    );
    expect(rgcd(r).precision).toBeCloseTo(2 / 3, 12);
    expect(seen(r, 'rgcd_f1', 'multiple_slot_requests.repeated_despite_receiving_answer')).toBeDefined();
  });

  it('accepts asking again when the system had not answered yet (delayed response)', () => {
    const r = score(
      conversation(goal, [
        open,
        system([['Attraction-Inform', 'phone', 'y']]),
        user([['Attraction-Request', 'address']]),
        system([['Attraction-Inform', 'address', 'x']]),
      ]),
    );
    expect(rgcd(r).precision).toBe(1);
    expect(seen(r, 'rgcd_f1', 'multiple_slot_requests.delayed_response')).toBeDefined();
  });

  it('accepts asking again when the system NLU missed the request; penalises beyond repeats_to_penalty', () => {
    const turns = [open, system([['Attraction-Inform', 'phone', 'y']], [['Attraction-Inform', 'type', 'museum'], ['Attraction-Request', 'phone']])];
    const r = score(conversation(goal, [...turns, user([['Attraction-Request', 'address']]), system([['Attraction-Inform', 'address', 'x']])]));
    expect(rgcd(r).precision).toBe(1);
    expect(seen(r, 'rgcd_f1', 'multiple_slot_requests.system_req_nlu_failure')).toBeDefined();

    const many = [...turns];
    for (let i = 0; i < 3; i++) many.push(user([['Attraction-Request', 'address']]), system([['Attraction-Inform', 'phone', 'y']], [['Attraction-Inform', 'phone', 'y']]));
    const capped = score(conversation(goal, many), (c) => (c.rgcd_f1.repetitions.repeats_to_penalty = 1));
    // 5 requests (address x4, phone), 2 goal requests + 1 compensated repetition
    expect(rgcd(capped).precision).toBeCloseTo(3 / 5, 12);
  });

  it('counts goal requests the system volunteered as requested', () => {
    const trainGoal = { train: { info: { day: 'monday' }, reqt: { price: '?', duration: '?' } } };
    const d = conversation(trainGoal, [
      user([['Train-Inform', 'day', 'monday'], ['Train-Request', 'price']]),
      system([['Train-Inform', 'price', '10 pounds'], ['Train-Inform', 'duration', '50 minutes']]),
    ]);
    const r = score(d);
    expect(rgcd(r)).toEqual({ f1: 1, precision: 1, recall: 1 });
    expect(seen(r, 'rgcd_f1', 'provision_slots')).toEqual({ train: [['train-duration']] });
    expect(rgcd(score(d, (c) => (c.rgcd_f1.missing_requests.system_provision = false))).recall).toBe(0.5);
  });

  it('accepts booking reference requests in booking goals only, and penalises requests outside the goal', () => {
    const withBooking = { restaurant: { info: { food: 'thai' }, book: { people: '2' } } };
    const turns = [
      user([['Restaurant-Inform', 'food', 'thai'], ['Restaurant-Inform', 'people', '2'], ['Restaurant-Request', 'ref']]),
      system([['Booking-Book', 'Ref', 'ABC']]),
    ];
    expect(rgcd(score(conversation(withBooking, turns)))).toEqual({ f1: 1, precision: 1, recall: 1 });
    const noBooking = { restaurant: { info: { food: 'thai', people: '2' } } };
    const r = score(conversation(noBooking, turns));
    expect(rgcd(r).precision).toBe(0);
    expect(seen(r, 'rgcd_f1', 'requests_not_in_goal')).toEqual({ restaurant: [['restaurant-ref']] });
  });
});

describe('booking failures, domain switches and pre-empted requests', () => {
  const goal = { hotel: { info: { area: 'north' }, book: { people: '2' } } };

  it('accepts a new venue name and repeated booking constraints after a booking failure', () => {
    const d = conversation(goal, [
      user([['Hotel-Inform', 'area', 'north'], ['Hotel-Inform', 'people', '2']]),
      system([['Booking-NoBook', 'name', 'acorn'], ['Hotel-Recommend', 'name', 'alpha']]),
      user([['Hotel-Inform', 'name', 'alpha'], ['Hotel-Inform', 'people', '2']]),
      system([['Booking-Book', 'Ref', 'X1']]),
    ]);
    const r = score(d);
    expect(igcd(r).precision).toBe(1);
    expect(seen(r, 'igcd_f1', 'constraints_not_in_goal.elicited_by_booking_failure')).toEqual({ hotel: [{ 'name===alpha': 2 }] });
    expect(seen(r, 'igcd_f1', 'multiple_constraint_informs.elicited_by_booking_failure')).toEqual({
      hotel: [{ 'people===2': [0, 2] }],
    });
  });

  it('accepts reminding the system of a constraint after other domains were discussed', () => {
    const twoDomains = { ...goal, attraction: { info: { type: 'museum' } } };
    const d = conversation(twoDomains, [
      user([['Hotel-Inform', 'area', 'north'], ['Hotel-Inform', 'people', '2']]),
      system([['Attraction-Inform', 'address', 'x']]),
      user([['Attraction-Inform', 'type', 'museum']]),
      system([['Attraction-Inform', 'phone', 'y']]),
      user([['Hotel-Inform', 'area', 'north']]),
      system([['Hotel-Inform', 'phone', 'z']]),
    ]);
    const r = score(d);
    expect(igcd(r, 'hotel').precision).toBe(1);
    expect(seen(r, 'igcd_f1', 'multiple_constraint_informs.switched_between_domains')).toEqual({
      hotel: [{ 'area===north': [0, 4] }],
    });
    const off = score(d, (c) => (c.igcd_f1.repetitions.user_behaviours.proposes_multiple_domains = false));
    expect(igcd(off, 'hotel').precision).toBeCloseTo(2 / 3, 12);
  });

  it('accepts a request repeated after answering the system question it raised (user pre-empted)', () => {
    const reqGoal = { train: { info: { day: 'monday', departure: 'ely' }, reqt: { price: '?' } } };
    const r = score(
      conversation(reqGoal, [
        user([['Train-Inform', 'day', 'monday'], ['Train-Request', 'price']]),
        system([['Train-Request', 'departure', '?']]),
        user([['Train-Inform', 'departure', 'ely'], ['Train-Request', 'price']]),
        system([['Train-Inform', 'price', '4 pounds']]),
      ]),
    );
    expect(rgcd(r).precision).toBe(1);
    expect(seen(r, 'rgcd_f1', 'multiple_slot_requests.user_prempted_request')).toBeDefined();
  });
});
