import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  delexicalizeBySpans,
  groundTruthCacheDir,
  loadBookedDomains,
  loadGroundTruth,
  parseGoal,
  resolveSource,
  stateFromMetadata,
  wordSpansToChars,
} from '../src/metrics/mwz/ground-truth.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';

describe('reference delexicalization from span annotations', () => {
  it('replaces spans in start order, skipping overlaps and dontcare values', () => {
    const text = 'Charlie Chan is in the centre and it is cheap';
    expect(
      delexicalizeBySpans(text, [
        { slot: 'pricerange', value: 'cheap', start: 40, end: 45 },
        { slot: 'name', value: 'Charlie Chan', start: 0, end: 12 },
        { slot: 'name', value: 'Chan', start: 8, end: 12 }, // overlaps the previous span
        { slot: 'area', value: 'dontcare', start: 23, end: 29 },
      ]),
    ).toBe('[name] is in the centre and it is [pricerange]');
  });

  it('maps MultiWOZ 2.1 word-offset spans (inclusive end word) to characters and 2.2 slot names', () => {
    const text = 'The address is Regent Street City Centre .  Phone 0122';
    const spans = wordSpansToChars(text, [
      ['Restaurant-Inform', 'Addr', 'Regent Street City Centre', 3, 6],
      ['Restaurant-Inform', 'Phone', '0122', 9, 9],
      ['Restaurant-Inform', 'Bogus', 'x', 1, 1], // unknown slot: ignored
      ['Restaurant-Inform', 'Post', 'x', 40, 41], // out of range: ignored
    ]);
    expect(delexicalizeBySpans(text, spans)).toBe('The address is [address] .  Phone [phone]');
  });
});

describe('goal parsing (original MultiWOZ evaluator rules)', () => {
  it('keeps phone/address/postcode requests, adds REFERENCE for bookings, TRAINID only when asked', () => {
    const goal = parseGoal({
      restaurant: { info: { food: 'chinese', pricerange: 'cheap' }, reqt: ['address', 'postcode', 'area'], fail_info: {} },
      hotel: { info: { type: 'guest house', parking: 'free' }, book: { day: 'monday', invalid: false }, fail_info: {} },
      train: { info: { leaveAt: '4pm', destination: 'ely' }, reqt: ['trainID', 'price'], book: { people: '2' } },
      taxi: { info: { leaveAt: '10:00' }, reqt: ['car type', 'phone'] },
      police: {},
      message: ['ignored'],
    });
    expect(goal.restaurant.requestable).toEqual(['ADDRESS', 'POST']);
    expect(goal.hotel.requestable).toEqual(['REFERENCE']);
    expect(goal.hotel.informable).toEqual({ type: 'guesthouse', parking: 'yes' });
    expect(goal.hotel.booking).toEqual({ day: 'monday' });
    expect(goal.train.requestable).toEqual(['REFERENCE', 'TRAINID']);
    expect(goal.train.informable).toEqual({ leave: '16:00', destination: 'ely' });
    expect(goal.taxi.requestable).toEqual(['PHONE']);
    expect(Object.keys(goal).sort()).toEqual(['hotel', 'restaurant', 'taxi', 'train']);
  });

  it('reads belief states from 2.1 metadata: empty, "not mentioned" and dontcare dropped, book slots prefixed', () => {
    expect(
      stateFromMetadata({
        hotel: { semi: { name: 'not mentioned', type: 'guest house', area: 'dontcare', parking: '' }, book: { booked: [], day: 'monday', people: '' } },
        taxi: { semi: { leaveAt: '' }, book: { booked: [] } },
        train: { semi: { arriveBy: '5pm' }, book: { booked: [], people: '2' } },
      }),
    ).toEqual({ hotel: { type: 'guesthouse', bookday: 'monday' }, train: { arrive: '17:00', bookpeople: '2' } });
  });
});

describe('ground truth sources and cache', () => {
  function fakeDataDir(): string {
    const dir = tempDir('mwz');
    const mwz = path.join(dir, 'multiwoz');
    mkdirSync(path.join(mwz, 'mwz22', 'test'), { recursive: true });
    // a fake one-dialogue test set in both formats
    const convlab = {
      'SNG0001.json': {
        goal: { restaurant: { info: { food: 'thai' }, reqt: ['phone'], fail_info: {} } },
        log: [
          { text: 'I want thai food', metadata: {}, span_info: [] },
          {
            text: 'Try Bangkok City ! Phone 01223 .',
            metadata: { restaurant: { semi: { food: 'thai' }, book: { booked: [] } } },
            dialog_act: { 'Restaurant-Inform': [['Name', 'Bangkok City']] },
            span_info: [
              ['Restaurant-Inform', 'Name', 'Bangkok City', 1, 2],
              ['Restaurant-Inform', 'Phone', '01223', 5, 5],
            ],
          },
        ],
      },
    };
    writeFileSync(path.join(mwz, 'convlab_mwz21_test.json'), JSON.stringify(convlab));
    const mwz22 = [
      {
        dialogue_id: 'SNG0001.json',
        turns: [
          {
            turn_id: '0',
            speaker: 'USER',
            utterance: "I'd like Thai food in the north",
            frames: [{ service: 'restaurant', state: { slot_values: { 'restaurant-food': ['thai'], 'restaurant-area': ['dontcare'] } } }],
          },
          { turn_id: '1', speaker: 'SYSTEM', utterance: 'Try Bangkok City! Phone 01223.', frames: [] },
        ],
      },
      { dialogue_id: 'PMUL9999.json', turns: [] }, // a train dialogue: ignored
    ];
    writeFileSync(path.join(mwz, 'mwz22', 'test', 'dialogues_001.json'), JSON.stringify(mwz22));
    return dir;
  }

  it('derives references and states from the 2.1 file, or prefers the 2.2 files when present', () => {
    const dir = fakeDataDir();
    expect(resolveSource(dir)).toBe('multiwoz21-convlab'); // no dialog_acts.json yet
    const gt21 = loadGroundTruth(dir, { noCache: true });
    expect(gt21.dialogues.sng0001.references).toEqual(['Try [name] ! Phone [phone] .']);
    expect(gt21.dialogues.sng0001.states).toEqual([{ restaurant: { food: 'thai' } }]);
    expect(gt21.dialogues.sng0001.goldDomains).toEqual([['restaurant']]);

    writeFileSync(
      path.join(dir, 'multiwoz', 'mwz22', 'dialog_acts.json'),
      JSON.stringify({
        'SNG0001.json': {
          '1': {
            dialog_act: { 'Restaurant-Inform': [['name', 'Bangkok City']] },
            span_info: [
              ['Restaurant-Inform', 'name', 'Bangkok City', 4, 16],
              ['Restaurant-Inform', 'phone', '01223', 24, 29],
            ],
          },
        },
      }),
    );
    expect(resolveSource(dir)).toBe('multiwoz22');
    const gt22 = loadGroundTruth(dir);
    expect(gt22.source).toBe('multiwoz22');
    expect(gt22.dialogues.sng0001.references).toEqual(['Try [name]! Phone [phone].']);
    expect(gt22.dialogues.sng0001.states).toEqual([{ restaurant: { food: 'thai' } }]);
    expect(gt22.dialogues.sng0001.goal.restaurant.requestable).toEqual(['PHONE']);
    // written to the writable data dir, and read back from there
    expect(gt22.cacheFile?.startsWith(path.join(dir, '.todeval-cache'))).toBe(true);
    expect(loadGroundTruth(dir).dialogues).toEqual(gt22.dialogues);
    // the 2.1 source can still be forced
    expect(loadGroundTruth(dir, { source: 'multiwoz21-convlab' }).source).toBe('multiwoz21-convlab');
  });

  it('falls back to the user cache when the data dir is read-only', () => {
    const dir = tempDir('ro');
    chmodSync(dir, 0o555);
    const cacheHome = tempDir('cache');
    const got = groundTruthCacheDir(dir, { XDG_CACHE_HOME: cacheHome });
    chmodSync(dir, 0o755);
    // root ignores permission bits, so only check the fallback when the check could fail
    if (process.getuid?.() !== 0) expect(got).toBe(path.join(cacheHome, 'todeval'));
    expect(groundTruthCacheDir(dir, { XDG_CACHE_HOME: cacheHome })).toBe(path.join(dir, '.todeval-cache'));
  });

  it('refuses a forced 2.2 source without the files', () => {
    const dir = tempDir('none');
    expect(() => resolveSource(dir, 'multiwoz22')).toThrow(/dialog_acts\.json/);
  });
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('ground truth of the real test set', () => {
  it('has the 1000 test dialogues with one reference and state per system turn', () => {
    const gt = loadGroundTruth(DATA_DIR);
    expect(Object.keys(gt.dialogues)).toHaveLength(1000);
    const turns = Object.values(gt.dialogues).reduce((n, d) => n + d.references.length, 0);
    expect(turns).toBe(7372); // system turns of the MultiWOZ test set
    for (const d of Object.values(gt.dialogues)) expect(d.states).toHaveLength(d.references.length);
    expect(gt.dialogues.sng0580.references[1]).toBe('The address is [address] . What day and time would you like to book ? How many people ?');
  });

  it('matches the turn counts of booked_domains.json (mwzeval, derived from MultiWOZ 2.2)', () => {
    const booked = loadBookedDomains(DATA_DIR);
    const gt = loadGroundTruth(DATA_DIR);
    const mismatched = Object.entries(gt.dialogues).filter(([id, d]) => booked[id]?.length !== d.references.length);
    expect(mismatched.map(([id]) => id)).toEqual([]);
  });
});
