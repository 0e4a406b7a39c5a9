import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DialogueAction, Turn } from '../src/adapters/types.js';
import { parseCanonicalMap } from '../src/metrics/canonical-map.js';
import { comparePredictionIds, loadPredictions } from '../src/metrics/predictions-file.js';
import { computeSer, normaliseText, robustContains, timeVariants } from '../src/metrics/ser.js';
import { InputError } from '../src/util/errors.js';
import { tempDir } from './helpers/temp.js';

function act(service: string, act: string, slot: string, ...values: string[]): DialogueAction {
  return { service, act, slot, values };
}

function turn(id: string, utterance: string, actions: DialogueAction[]): Turn {
  const [dialogueId, idx] = id.split('/');
  return {
    id,
    dialogueId,
    turnIndex: Number(idx),
    dataset: 'sgd',
    services: [...new Set(actions.map((a) => a.service))],
    actions,
    utterance,
    previousUserUtterance: '',
  };
}

// A fake schema: which (service, slot) pairs are categorical; unknown slots answer undefined.
const fakeSchema: Record<string, Record<string, boolean>> = {
  Restaurants_1: { restaurant_name: false, city: false, has_live_music: true, price_range: true },
  Hotels_2: { where_to: false, has_laundry_service: true },
  restaurant: { 'restaurant-name': false, 'restaurant-area': true, 'restaurant-booktime': false },
  train: { 'train-leaveat': false },
};
const isCategorical = (service: string, slot: string): boolean | undefined => fakeSchema[service]?.[slot];

describe('computeSer (strict)', () => {
  it('counts an utterance as erroneous when a non-categorical value is absent, case-insensitively', () => {
    const turns = [
      turn('d1/1', 'I found Rustic House in san jose.', [
        act('Restaurants_1', 'OFFER', 'restaurant_name', 'Rustic House'),
        act('Restaurants_1', 'OFFER', 'city', 'San Jose'),
      ]),
      turn('d1/3', 'How about a place in Palo Alto?', [act('Restaurants_1', 'OFFER', 'restaurant_name', 'Bird Dog')]),
    ];
    const r = computeSer(turns, { isCategorical });
    expect(r.utterancesWithValues).toBe(2);
    expect(r.errors).toBe(1);
    expect(r.ser).toBeCloseTo(50);
    expect(r.erroneous).toEqual([
      { id: 'd1/3', service: 'Restaurants_1', act: 'OFFER', slot: 'restaurant_name', value: 'Bird Dog' },
    ]);
  });

  it('ignores categorical slots, non-schema slots (INFORM_COUNT count) and acts without values', () => {
    const turns = [
      turn('d2/1', 'There are 3 places with live music.', [
        act('Restaurants_1', 'INFORM_COUNT', 'count', 'three'),
        act('Restaurants_1', 'INFORM', 'has_live_music', 'True'),
        act('Restaurants_1', 'REQUEST', 'city'),
      ]),
    ];
    const r = computeSer(turns, { isCategorical });
    expect(r.utterancesWithValues).toBe(0);
    expect(r.ser).toBe(0);
    expect(r.turnsScored).toBe(1);
  });

  it('counts REQUEST acts that offer values, and skips dontcare/? values without dropping them silently', () => {
    const turns = [
      turn('d3/1', 'Which city, San Jose or Fremont?', [act('Restaurants_1', 'REQUEST', 'city', 'San Jose', 'Oakland')]),
      turn('d3/3', 'Any area is fine.', [act('restaurant', 'Inform', 'restaurant-name', 'dontcare')]),
    ];
    const r = computeSer(turns, { isCategorical });
    expect(r.utterancesWithValues).toBe(1);
    expect(r.errors).toBe(1);
    expect(r.erroneous[0].value).toBe('Oakland');
    expect(r.skippedValues).toEqual([
      { id: 'd3/3', service: 'restaurant', act: 'Inform', slot: 'restaurant-name', value: 'dontcare' },
    ]);
  });

  it('reports per service; a multi-service turn counts in each service', () => {
    const turns = [
      turn('d4/1', 'Rustic House is booked, and your hotel in Paris too.', [
        act('Restaurants_1', 'NOTIFY_SUCCESS', ''),
        act('Restaurants_1', 'CONFIRM', 'restaurant_name', 'Rustic House'),
        act('Hotels_2', 'CONFIRM', 'where_to', 'London'),
      ]),
      turn('d4/3', 'The hotel is in London.', [act('Hotels_2', 'INFORM', 'where_to', 'London')]),
    ];
    const r = computeSer(turns, { isCategorical });
    expect(r.perService).toEqual({
      Hotels_2: { ser: 50, errors: 1, total: 2 },
      Restaurants_1: { ser: 0, errors: 0, total: 1 },
    });
    expect(r.errors).toBe(1);
    expect(r.utterancesWithValues).toBe(2);
  });

  it('scores predictions instead of the gold utterance, and lists missing and extra ids', () => {
    const turns = [
      turn('d5/1', 'Rustic House it is.', [act('Restaurants_1', 'OFFER', 'restaurant_name', 'Rustic House')]),
      turn('d5/3', 'Bird Dog is nice.', [act('Restaurants_1', 'OFFER', 'restaurant_name', 'Bird Dog')]),
      turn('d5/5', 'Goodbye.', [act('Restaurants_1', 'GOODBYE', '')]),
    ];
    const predictions = new Map([
      ['d5/1', 'I suggest a different place.'],
      ['d9/1', 'stray prediction'],
    ]);
    const r = computeSer(turns, { isCategorical, predictions });
    expect(r.errors).toBe(1);
    expect(r.utterancesWithValues).toBe(1);
    expect(r.missingIds).toEqual(['d5/3', 'd5/5']);
    expect(r.missingWithValues).toBe(1);
    expect(r.extraIds).toEqual(['d9/1']);
  });
});

const fakeMap = parseCanonicalMap(
  {
    area: { centre: ['city centre', 'the center of town'], special_keys: { noise: { annotation: ['cheap'] } } },
    name: {
      'pizza hut city centre': ['pizza hut in the city centre', 'pizza hut centre'],
      special_keys: { not_in_goal: { 'the varsity restaurant': ['varsity'], noise: { x: ['y'] } } },
    },
    leaveat: { train: { '17:30': ['half past five'] }, taxi: { '17:30': ['5:30 in the evening'] } },
  },
  'fake-map.json',
);

describe('canonical map', () => {
  it('maps paraphrases to canonical values, merging not_in_goal and ignoring noise', () => {
    expect(fakeMap.canonicalsOf('area', 'The Center of Town')).toEqual(['centre']);
    expect(fakeMap.equivalents('area', 'city centre').sort()).toEqual(['city centre', 'centre', 'the center of town'].sort());
    expect(fakeMap.equivalents('name', 'varsity')).toContain('the varsity restaurant');
    expect(fakeMap.canonicalsOf('area', 'cheap')).toEqual([]);
  });
  it('keeps per-domain tables apart', () => {
    expect(fakeMap.equivalents('leaveat', '17:30', 'train')).toContain('half past five');
    expect(fakeMap.equivalents('leaveat', '17:30', 'train')).not.toContain('5:30 in the evening');
  });
  it('rejects a malformed map with an InputError naming the slot', () => {
    let err: unknown;
    try {
      parseCanonicalMap({ area: { centre: 'x' } }, 'bad.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).oneLine()).toMatch(/^bad.json: slot area: /);
  });
});

describe('robust SER', () => {
  it('accepts a paraphrase from the canonical map that strict matching rejects', () => {
    const turns = [
      turn('m1/1', 'Pizza Hut in the city centre is a great choice.', [
        act('restaurant', 'Recommend', 'restaurant-name', 'pizza hut city centre'),
      ]),
      turn('m1/3', 'Your train leaves at half past five.', [act('train', 'Inform', 'train-leaveat', '17:30')]),
      turn('m1/5', 'I booked a table somewhere.', [act('restaurant', 'Book', 'restaurant-name', 'pizza hut city centre')]),
    ];
    const r = computeSer(turns, { isCategorical, canonicalMap: fakeMap, robust: true });
    expect(r.errors).toBe(3);
    expect(r.robust?.errors).toBe(1);
    expect(r.robust?.erroneous.map((e) => e.id)).toEqual(['m1/5']);
    expect(r.robust?.ser).toBeCloseTo(100 / 3);
  });

  it('matches 24-hour values written as 12-hour times, and punctuation variants', () => {
    expect(timeVariants('17:30')).toContain('5:30 pm');
    expect(timeVariants('5:30 pm')).toContain('17:30');
    expect(timeVariants('12:15 am')).toContain('00:15');
    expect(timeVariants('pizza')).toEqual([]);
    expect(robustContains('Your table is at 5:30pm.', '17:30', 'restaurant', 'restaurant-booktime')).toBe(true);
    expect(robustContains('Your table is at 6:30pm.', '17:30', 'restaurant', 'restaurant-booktime')).toBe(false);
    expect(robustContains("try saint john 's college", "Saint John's College", 'attraction', 'name')).toBe(true);
    expect(normaliseText('  St. John\'s,  College ')).toBe('st john s college');
  });

  it('matches paraphrases on word boundaries only', () => {
    // "centre" is a paraphrase of "city centre"; inside "centrefold" it must not count.
    expect(robustContains('see the centrefold', 'city centre', 'restaurant', 'area', fakeMap)).toBe(false);
    expect(robustContains('it is in the centre.', 'city centre', 'restaurant', 'area', fakeMap)).toBe(true);
  });
});

describe('predictions loading', () => {
  const dir = tempDir('pred');
  const write = (name: string, text: string): string => {
    const f = path.join(dir, name);
    writeFileSync(f, text);
    return f;
  };

  it('reads JSONL, a JSON array and a JSON object id -> utterance', () => {
    const jsonl = write('p.jsonl', '{"id":"a/1","utterance":"x"}\n\n{"id":"a/3","utterance":"y"}\n');
    const arr = write('p-arr.json', JSON.stringify([{ id: 'a/1', utterance: 'x' }]));
    const obj = write('p-obj.json', JSON.stringify({ 'a/1': 'x', 'a/3': 'y' }));
    const single = write('p-one.jsonl', '{"id":"a/1","utterance":"x"}\n');
    expect(loadPredictions(jsonl)).toMatchObject({ format: 'jsonl', byId: new Map([['a/1', 'x'], ['a/3', 'y']]) });
    expect(loadPredictions(arr)).toMatchObject({ format: 'json-array', byId: new Map([['a/1', 'x']]) });
    expect(loadPredictions(obj).format).toBe('json-object');
    expect(loadPredictions(obj).byId.get('a/3')).toBe('y');
    expect(loadPredictions(single)).toMatchObject({ format: 'jsonl', byId: new Map([['a/1', 'x']]) });
  });

  it('names the file and line of a bad JSONL record', () => {
    const f = write('bad.jsonl', '{"id":"a/1","utterance":"x"}\n{"id":"a/3"}\n{oops\n');
    let err: unknown;
    try {
      loadPredictions(f);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).oneLine()).toMatch(new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line 2: .*utterance`));
  });

  it('with skipInvalid lists every bad line and keeps the good ones', () => {
    const f = write('bad2.jsonl', '{"id":"a/1","utterance":"x"}\n{"id":"a/3"}\n{oops\n{"id":"a/1","utterance":"dup"}\n');
    const r = loadPredictions(f, { skipInvalid: true });
    expect(r.byId).toEqual(new Map([['a/1', 'x']]));
    expect(r.invalid.map((e) => e.where)).toEqual(['line 2', 'line 3', 'line 4 (id a/1)']);
  });

  it('rejects an object whose values are not strings', () => {
    const f = write('bad-obj.json', JSON.stringify({ 'a/1': 3 }));
    expect(() => loadPredictions(f)).toThrow(InputError);
  });

  it('compares ids both ways', () => {
    expect(comparePredictionIds(new Map([['a', ''], ['z', '']]), ['a', 'b'])).toEqual({ missing: ['b'], extra: ['z'] });
  });
});
