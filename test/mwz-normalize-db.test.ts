import { describe, expect, it } from 'vitest';
import { MwzDatabase } from '../src/metrics/mwz/database.js';
import { partialRatio } from '../src/metrics/mwz/fuzzy.js';
import {
  nameToCanonical,
  normalizeState,
  normalizeStateSlotValue,
  timeStrToMinutes,
  timeToCanonical,
} from '../src/metrics/mwz/normalize-state.js';
import { DATA_DIR, hasData } from './helpers/shared.js';

describe('mwzeval time normalization (traced by hand through normalization.py)', () => {
  it.each([
    ['4pm', '16:00'], // "pm" branch, single number
    ['4:30 pm', '16:30'],
    ['after 11:00', '11:00'],
    ['by 17:45', '17:45'],
    ['1145', '11:45'], // four digits
    ['9', '09:00'],
    ['9:15', '09:15'],
    ['10:15.', '10:15'], // trailing punctuation
    ['11 : 15', '11:15'], // spaces around the colon are removed
    ['afternoon', '13:00'],
    ['lunch', '12:00'],
    ['10am', '10:00'], // "am" stripped, then a bare number
    ['12:30pm', '24:30'], // mwzeval adds 12 even to 12 pm
  ])('%s -> %s', (input, expected) => {
    expect(timeToCanonical(input)).toBe(expected);
  });

  it('keeps strings it cannot parse, and maps the empty string to midnight', () => {
    expect(timeToCanonical('whenever')).toBe('whenever');
    expect(timeToCanonical('  ')).toBe('00:00');
  });

  it('converts HH:MM prefixes to minutes and anything else to 0', () => {
    expect(timeStrToMinutes('07:15')).toBe(435);
    expect(timeStrToMinutes('07:15 tomorrow')).toBe(435);
    expect(timeStrToMinutes('7:15')).toBe(0);
  });
});

describe('mwzeval value and slot normalization', () => {
  it('maps venue names, food and types to database spellings', () => {
    expect(nameToCanonical("Nando's")).toBe('nandos');
    expect(nameToCanonical('Pizza Hut & Fen Ditton')).toBe('pizza hut and fen ditton');
    expect(nameToCanonical('christs')).toBe("christ's college");
    expect(normalizeStateSlotValue('food', 'Sea food')).toBe('seafood');
    expect(normalizeStateSlotValue('type', 'guest house')).toBe('guesthouse');
    expect(normalizeStateSlotValue('parking', 'free')).toBe('yes');
    expect(normalizeStateSlotValue('area', 'Centre')).toBe('Centre'); // untouched slots keep their case
  });

  it('keeps values that are names of Object.prototype members (was: the member, a function, came back)', () => {
    expect(nameToCanonical('constructor')).toBe('constructor');
    expect(normalizeStateSlotValue('food', '__proto__')).toBe('__proto__');
    expect(normalizeStateSlotValue('type', 'toString')).toBe('toString');
    expect(timeToCanonical('constructor')).toBe('constructor');
    expect(normalizeState({ restaurant: { food: 'constructor', type: 'valueOf' } })).toEqual({ restaurant: { food: 'constructor', type: 'valueOf' } });
  });

  it('normalizes slot names of whole states (arriveBy -> arrive, price range -> pricerange)', () => {
    expect(normalizeState({ train: { arriveBy: '5pm', leaveAt: 'after 9:30' }, hotel: { 'price range': 'cheap' } })).toEqual({
      train: { arrive: '17:00', leave: '09:30' },
      hotel: { pricerange: 'cheap' },
    });
  });
});

describe('fuzzywuzzy-compatible partial_ratio', () => {
  it('does not lower-case or strip punctuation (fuzzywuzzy does not either)', () => {
    expect(partialRatio('abc', 'ABC')).toBe(0);
    expect(partialRatio('', '')).toBe(100);
    expect(partialRatio('', 'x')).toBe(0);
    expect(partialRatio('pizza hut city centre', 'pizza hut')).toBe(100);
  });
});

describe('MwzDatabase on a fake table', () => {
  const fakeDb = new MwzDatabase({
    restaurant: [
      { id: '1', name: 'golden house', food: 'chinese', pricerange: 'cheap', area: 'centre', location: [0, 0] },
      { id: '2', name: 'charlie chan', food: 'chinese', pricerange: 'cheap', area: 'centre', introduction: 'x' },
      { id: '3', name: 'hk fusion', food: 'chinese', pricerange: 'expensive', area: 'centre' },
      { id: '4', name: 'the missing sock', food: 'international', pricerange: '?', area: 'east' },
    ],
    hotel: [{ id: '0', name: 'a and b guest house', type: 'guesthouse', parking: 'no', price: { single: '50' } }],
    attraction: [{ id: '9', name: 'abbey pool', type: 'swimmingpool', openhours: '?' }],
    train: [
      { trainID: 'TR1', departure: 'cambridge', destination: 'london kings cross', day: 'monday', leaveAt: '05:00', arriveBy: '05:51' },
      { trainID: 'TR2', departure: 'cambridge', destination: 'london kings cross', day: 'monday', leaveAt: '07:00', arriveBy: '07:51' },
      { trainID: 'TR3', departure: 'cambridge', destination: 'ely', day: 'monday', leaveAt: '09:00', arriveBy: '09:17' },
    ],
  });

  it('matches exact columns, skips dontcare values and "?" cells', () => {
    expect(fakeDb.query('restaurant', { food: 'chinese', pricerange: 'cheap' })).toEqual(['1', '2']);
    expect(fakeDb.query('restaurant', { food: 'chinese', pricerange: 'dontcare' })).toEqual(['1', '2', '3']);
    expect(fakeDb.query('restaurant', { pricerange: 'cheap', area: 'east' })).toEqual(['4']);
  });

  it('drops ignored columns, so they cannot constrain a search', () => {
    expect(fakeDb.columns.restaurant).not.toContain('introduction');
    expect(fakeDb.query('hotel', { price: 'nonsense', type: 'guest house' })).toEqual(['0']);
  });

  it('uses partial_ratio >= 90 for names and food', () => {
    expect(fakeDb.query('restaurant', { name: 'the golden house restaurant' })).toEqual(['1']);
    expect(fakeDb.query('restaurant', { name: 'golden' })).toEqual(['1']);
    // the shorter string is slid over the longer one, so a longer misspelling still matches
    expect(fakeDb.query('restaurant', { name: 'charlie chang' })).toEqual(['2']);
    expect(fakeDb.query('restaurant', { name: 'chinese palace' })).toEqual([]);
  });

  it('treats arrive as an upper and leave as a lower bound, after time normalization', () => {
    // constraints use state-normalized slot names; "arriveBy" is no column and constrains nothing
    expect(fakeDb.query('train', { departure: 'cambridge', arriveBy: '7:51' })).toEqual(['TR1', 'TR2', 'TR3']);
    expect(fakeDb.query('train', { departure: 'cambridge', arrive: '7:51' })).toEqual(['TR1', 'TR2']);
    expect(fakeDb.query('train', { departure: 'cambridge', leave: 'after 6:30' })).toEqual(['TR2', 'TR3']);
    // a place that is a prefix of the station name matches fully (partial_ratio 100)
    expect(fakeDb.query('train', { destination: 'london', day: 'monday' })).toEqual(['TR1', 'TR2']);
  });

  it('reduced search keeps only the name or train id constraint', () => {
    expect(fakeDb.query('restaurant', { name: 'hk fusion', pricerange: 'cheap' })).toEqual([]);
    expect(fakeDb.query('restaurant', { name: 'hk fusion', pricerange: 'cheap' }, { reducedSearch: true })).toEqual(['3']);
  });

  it('returns nothing for domains without a venue table', () => {
    expect(fakeDb.query('taxi', { departure: 'x' })).toEqual([]);
  });
});

describe.skipIf(!hasData('multiwoz', 'db', 'restaurant_db.json'))('MwzDatabase on the real MultiWOZ tables', () => {
  it('finds the four cheap Chinese restaurants of the SNG0580 walk-through (paper Table 7)', () => {
    const db = MwzDatabase.load(DATA_DIR);
    expect(db.query('restaurant', { food: 'chinese', pricerange: 'cheap' }).sort()).toEqual(['19185', '19197', '19212', '19219']);
    expect(db.query('restaurant', { food: 'chinese', pricerange: 'cheap', area: 'centre' }).sort()).toEqual(['19185', '19212', '19219']);
  });
});
