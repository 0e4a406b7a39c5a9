import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../src/adapters/load.js';
import { bookingDomain } from '../src/adapters/multiwoz.js';
import { loadSlotMap } from '../src/adapters/multiwoz-slots.js';
import { loadSchemaFile } from '../src/schema/schema-index.js';
import { isUnseenSgdService, sgdDomain, sgdTrainDomains } from '../src/schema/sgd.js';
import { InputError } from '../src/util/errors.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';

const tmp = tempDir('adapters');
const EXAMPLE_SCHEMA = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'schema.json');
const EXAMPLE_DIALOGUES = path.join(REPO_ROOT, 'examples', 'sgd-mini', 'dialogues.json');

function writeTmp(name: string, content: unknown): string {
  const f = path.join(tmp, name);
  writeFileSync(f, typeof content === 'string' ? content : JSON.stringify(content));
  return f;
}

describe('SGD adapter (bundled example)', () => {
  const ds = loadDataset({ dataset: 'sgd', input: EXAMPLE_DIALOGUES, schemaFile: EXAMPLE_SCHEMA });
  const raw = JSON.parse(readFileSync(EXAMPLE_DIALOGUES, 'utf8')) as {
    dialogue_id: string;
    turns: { speaker: string; utterance: string }[];
  }[];

  it('makes one Turn per system turn, id = dialogue/position in turns', () => {
    const expected = raw.flatMap((d) =>
      d.turns.flatMap((t, i) => (t.speaker === 'SYSTEM' ? [`${d.dialogue_id}/${i}`] : [])),
    );
    expect(ds.turns.map((t) => t.id)).toEqual(expected);
    for (const t of ds.turns) {
      const src = raw.find((d) => d.dialogue_id === t.dialogueId)!;
      expect(t.utterance).toBe(src.turns[t.turnIndex].utterance);
      expect(t.previousUserUtterance).toBe(src.turns[t.turnIndex - 1].utterance);
    }
  });

  it("attaches the user's active intent to NOTIFY acts and the offered intent to OFFER_INTENT", () => {
    const notify = ds.turns.flatMap((t) => t.actions).find((a) => a.act === 'NOTIFY_SUCCESS')!;
    expect(notify.intent).toBe('OrderCake');
    const offer = ds.turns.flatMap((t) => t.actions).find((a) => a.act === 'OFFER_INTENT')!;
    expect(offer.intent).toBe('OrderCake');
    expect(offer.service).toBe('Bakery_1');
  });
});

describe('input errors name the file and the dialogue/turn', () => {
  const good = JSON.parse(readFileSync(EXAMPLE_DIALOGUES, 'utf8'));

  it('unknown service, unknown slot, missing utterance', () => {
    const cases: [string, (d: typeof good) => void, RegExp][] = [
      ['svc', (d) => (d[0].turns[1].frames[0].service = 'Nowhere_1'), /unknown service "Nowhere_1"/],
      ['slot', (d) => (d[0].turns[1].frames[0].actions[0].slot = 'frosting'), /unknown slot "frosting"/],
      ['utt', (d) => delete d[0].turns[1].utterance, /system turn has no utterance/],
    ];
    for (const [name, mutate, msg] of cases) {
      const d = structuredClone(good);
      mutate(d);
      const f = writeTmp(`${name}.json`, d);
      let err: unknown;
      try {
        loadDataset({ dataset: 'sgd', input: f, schemaFile: EXAMPLE_SCHEMA });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).oneLine()).toMatch(msg);
      expect((err as InputError).file).toBe(f);
      expect((err as InputError).where).toBe('mini_001/1');
    }
  });

  it('--skip-invalid lists the bad turns and keeps the rest', () => {
    const d = structuredClone(good);
    d[0].turns[1].frames[0].service = 'Nowhere_1';
    delete d[2].turns[3].utterance;
    const f = writeTmp('two-bad.json', d);
    const ds = loadDataset({ dataset: 'sgd', input: f, schemaFile: EXAMPLE_SCHEMA, skipInvalid: true });
    expect(ds.invalid.map((e) => e.where)).toEqual(['mini_001/1', 'mini_003/3']);
    expect(ds.turns.length).toBe(9 - 2);
  });

  it('a schema of the wrong shape and a dataset of the wrong format are reported as such', () => {
    expect(() => loadSchemaFile(EXAMPLE_DIALOGUES)).toThrow(/unsupported schema format/);
    expect(() => loadSchemaFile(writeTmp('obj-schema.json', { services: [] }))).toThrow(/unsupported schema format/);
    const convlab = writeTmp('convlab.json', { X1: { goal: {}, log: [] } });
    expect(() => loadDataset({ dataset: 'sgd', input: convlab, schemaFile: EXAMPLE_SCHEMA })).toThrow(/MultiWOZ ConvLab file/);
    expect(() => loadDataset({ dataset: 'multiwoz', input: EXAMPLE_DIALOGUES, schemaFile: EXAMPLE_SCHEMA })).toThrow(
      /expected a MultiWOZ ConvLab file/,
    );
    expect(() => loadDataset({ dataset: 'sgd', input: writeTmp('broken.json', '[{"dialogue_id": '), schemaFile: EXAMPLE_SCHEMA })).toThrow(
      /not valid JSON/,
    );
  });
});

describe('generic JSONL adapter', () => {
  const line = (o: object) => JSON.stringify(o);

  it('reads turns, splits ids, takes the last context entry as the previous user utterance', () => {
    const f = writeTmp(
      'generic.jsonl',
      [
        line({ id: 'chat7/3', service: 'Bikes_1', actions: [{ act: 'INFORM', slot: 'station', values: ['Dock 4'] }], utterance: 'Pick it up at Dock 4.', context: ['hi', 'where do I get it?'] }),
        line({ id: 'solo', service: 'Bikes_1', actions: [{ act: 'GOODBYE' }], utterance: 'Bye!' }),
      ].join('\n'),
    );
    const ds = loadDataset({ dataset: 'generic', input: f, schemaFile: EXAMPLE_SCHEMA });
    expect(ds.turns.map((t) => [t.id, t.dialogueId, t.turnIndex])).toEqual([
      ['chat7/3', 'chat7', 3],
      ['solo', 'solo', 0],
    ]);
    expect(ds.turns[0].previousUserUtterance).toBe('where do I get it?');
    expect(ds.turns[1].actions[0]).toMatchObject({ service: 'Bikes_1', act: 'GOODBYE', slot: '', values: [] });
  });

  it('reports schema violations, missing utterances and unknown slots with the line', () => {
    const f = writeTmp(
      'generic-bad.jsonl',
      [
        line({ id: 'a/1', service: 'Bikes_1', actions: [{ act: 'INFORM', slot: 'station', values: ['X'] }] }),
        line({ id: 'a/2', service: 'Bikes_1', actions: [{ act: 'INFORM', slot: 'colour', values: ['red'] }], utterance: 'Red.' }),
        line({ id: 'a/3', service: 'Bikes_1', actions: 'INFORM', utterance: 'x' }),
        line({ id: 'a/4', service: 'Bikes_1', actions: [], utterance: 'fine' }),
      ].join('\n'),
    );
    const ds = loadDataset({ dataset: 'generic', input: f, schemaFile: EXAMPLE_SCHEMA, skipInvalid: true });
    expect(ds.turns.map((t) => t.id)).toEqual(['a/4']);
    expect(ds.invalid.map((e) => e.oneLine())).toEqual([
      expect.stringMatching(/line 1 \(a\/1\): system turn has no utterance/),
      expect.stringMatching(/line 2 \(a\/2\): unknown slot "colour"/),
      expect.stringMatching(/line 3 \(a\/3\): \/actions must be array/),
    ]);
  });
});

describe('MultiWOZ Booking-* domain', () => {
  const meta = (booked: Record<string, number>) =>
    Object.fromEntries(['restaurant', 'hotel', 'train'].map((d) => [d, { book: { booked: Array(booked[d] ?? 0).fill({}) } }]));

  it('prefers the domain whose booked list grows, then other acts of the turn, then earlier turns, then the goal', () => {
    const log = [
      { text: 'u', dialog_act: { 'Train-Inform': [['Day', 'monday']] } },
      { text: 's', dialog_act: { 'Booking-Book': [['Ref', 'X']] }, metadata: meta({ restaurant: 1 }) },
      { text: 'u', dialog_act: {} },
      { text: 's', dialog_act: { 'Booking-Inform': [['none', 'none']], 'Hotel-Inform': [['Name', 'acorn']] }, metadata: meta({ restaurant: 1 }) },
      { text: 'u', dialog_act: {} },
      { text: 's', dialog_act: { 'Booking-Request': [['Day', '?']] }, metadata: meta({ restaurant: 1 }) },
    ];
    expect(bookingDomain(log as never, 1, {})).toBe('restaurant');
    expect(bookingDomain(log as never, 3, {})).toBe('hotel');
    expect(bookingDomain(log as never, 5, {})).toBe('hotel');
    const bare = [{ text: 'u', dialog_act: {} }, { text: 's', dialog_act: { 'Booking-Inform': [['none', 'none']] } }];
    expect(bookingDomain(bare as never, 1, { hotel: {}, train: { info: { day: 'monday' }, book: { people: '2' } } })).toBe('train');
  });
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('MultiWOZ ConvLab adapter (real test file)', () => {
  // Read in beforeAll, not in the suite body: vitest runs the body of a skipped suite too.
  let ds!: ReturnType<typeof loadDataset>;
  let raw!: Record<string, { log: { text: string }[] }>;
  beforeAll(() => {
    ds = loadDataset({ dataset: 'multiwoz', dataDir: DATA_DIR, limit: 400 });
    raw = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'), 'utf8'));
  });

  it('takes the odd log positions as system turns and maps 2.1 slots onto 2.2 names', () => {
    expect(ds.turns.every((t) => t.turnIndex % 2 === 1)).toBe(true);
    const t = ds.turns.find((x) => x.id === 'SNG0073/3')!;
    expect(t.utterance).toBe(raw.SNG0073.log[3].text);
    expect(t.previousUserUtterance).toBe(raw.SNG0073.log[2].text);
    expect(t.actions).toEqual([
      { service: 'taxi', act: 'Inform', slot: 'taxi-type', values: ['blue honda'], sourceAct: 'Taxi-Inform' },
      { service: 'taxi', act: 'Inform', slot: 'taxi-phone', values: ['07218068540'], sourceAct: 'Taxi-Inform' },
    ]);
    const req = ds.turns.find((x) => x.id === 'SNG0073/1')!;
    expect(req.actions.map((a) => [a.slot, a.values])).toEqual([
      ['taxi-leaveat', []],
      ['taxi-arriveby', []],
    ]);
  });

  it('every mapped slot is a MultiWOZ 2.2 slot or a described pseudo-slot', () => {
    const schema22 = loadSchemaFile(path.join(DATA_DIR, 'multiwoz', 'schema.json'));
    const map = loadSlotMap();
    const real = new Set(schema22.allServices().flatMap((s) => s.slots.map((x) => x.name.split('-')[1])));
    for (const suffix of Object.values(map.default)) {
      expect(real.has(suffix) || suffix in map.extraSlots, suffix).toBe(true);
    }
    for (const a of ds.turns.flatMap((t) => t.actions)) {
      if (a.slot) expect(ds.schema.slot(a.service, a.slot)?.description, a.slot).toBeTruthy();
    }
    // Addr -> address etc. land on the 2.2 slot with its own description
    const addr = ds.turns.flatMap((t) => t.actions).find((a) => a.sourceAct === 'Restaurant-Inform' && a.slot === 'restaurant-address');
    expect(addr).toBeDefined();
    expect(ds.schema.slot('restaurant', 'restaurant-address')?.description).toBe('address of the restaurant');
  });

  it('reads MultiWOZ 2.2 dialogues with dialog_acts.json (lower-case slot names) into the same Turns', () => {
    const root = mkdtempSync(path.join(tmp, 'mwz22-'));
    const dir = path.join(root, 'test');
    mkdirSync(dir);
    const turn = (turn_id: string, speaker: string, utterance: string) => ({ turn_id, speaker, utterance, frames: [] });
    writeFileSync(
      path.join(dir, 'dialogues_001.json'),
      JSON.stringify([
        {
          dialogue_id: 'PMUL0001.json',
          services: ['restaurant'],
          turns: [
            turn('0', 'USER', 'A cheap place to eat, please.'),
            turn('1', 'SYSTEM', 'There are 3 cheap ones; Nandos is at 33 Bridge St. Booked, ref AB12.'),
            turn('2', 'USER', 'Thanks.'),
            turn('3', 'SYSTEM', 'Bye.'),
          ],
        },
      ]),
    );
    writeFileSync(
      path.join(root, 'dialog_acts.json'),
      JSON.stringify({
        'PMUL0001.json': {
          '0': { dialog_act: { 'Restaurant-Inform': [['pricerange', 'cheap']] }, span_info: [] },
          '1': {
            dialog_act: {
              'Restaurant-Inform': [['choice', '3'], ['price', 'cheap'], ['address', '33 Bridge St']],
              'Booking-Book': [['ref', 'AB12']],
            },
            span_info: [],
          },
          '2': { dialog_act: {}, span_info: [] },
          '3': { dialog_act: { 'general-bye': [['none', 'none']] }, span_info: [] },
        },
      }),
    );
    const mwz22 = loadDataset({ dataset: 'multiwoz', dataDir: DATA_DIR, input: dir });
    expect(mwz22.turns.map((t) => t.id)).toEqual(['PMUL0001/1', 'PMUL0001/3']);
    expect(mwz22.turns[0].previousUserUtterance).toBe('A cheap place to eat, please.');
    expect(mwz22.turns[0].actions.map((a) => [a.service, a.act, a.slot, a.values[0]])).toEqual([
      ['restaurant', 'Inform', 'restaurant-choice', '3'],
      ['restaurant', 'Inform', 'restaurant-pricerange', 'cheap'],
      ['restaurant', 'Inform', 'restaurant-address', '33 Bridge St'],
      ['restaurant', 'Book', 'restaurant-ref', 'AB12'],
    ]);
    expect(mwz22.turns[1].actions).toEqual([{ service: 'general', act: 'bye', slot: '', values: [], sourceAct: 'general-bye' }]);
  });

  it('Internet/Parking "none" means the venue has it', () => {
    const all = loadDataset({ dataset: 'multiwoz', dataDir: DATA_DIR });
    const net = all.turns.flatMap((t) => t.actions).filter((a) => a.slot === 'hotel-internet' && a.act === 'Inform');
    expect(net.length).toBeGreaterThan(50);
    expect(net.every((a) => a.values.length === 1 && ['yes', 'no', 'free'].includes(a.values[0].toLowerCase()))).toBe(true);
    expect(all.turns.length).toBe(Object.values(raw as Record<string, { log: unknown[] }>).reduce((n, d) => n + Math.floor(d.log.length / 2), 0));
  });
});

describe.skipIf(!hasData('sgd', 'train', 'schema.json'))('SGD seen/unseen services', () => {
  it('names Alarm, Messaging, Payment and Trains as the unseen test domains', () => {
    const train = sgdTrainDomains(DATA_DIR);
    const test = loadSchemaFile(path.join(DATA_DIR, 'sgd', 'test', 'schema.json'));
    const unseen = [...new Set(test.serviceNames().filter((s) => isUnseenSgdService(s, train)).map(sgdDomain))].sort();
    expect(unseen).toEqual(['Alarm', 'Messaging', 'Payment', 'Trains']);
  });
});
