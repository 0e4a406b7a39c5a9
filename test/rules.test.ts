import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DialogueAction, Turn } from '../src/adapters/types.js';
import { SchemaIndex } from '../src/schema/schema-index.js';
import type { SchemaService } from '../src/schema/types.js';
import { Expander, expandTurn } from '../src/rules/expand.js';
import { loadRules } from '../src/rules/load.js';
import { rulesDir } from '../src/util/rules-dir.js';
import { buildValueIndex } from '../src/rules/value-index.js';
import { descriptionPhrase, descriptionQuestion, joinValues, nameWords, negateSlotVerb, nounPhrase } from '../src/rules/text.js';
import { InputError } from '../src/util/errors.js';
import { tempDir } from './helpers/temp.js';

// Schemas written for these tests, with the descriptions the SGSAcc paper quotes in its worked examples.
const fakeServices: SchemaService[] = [
  {
    name: 'Salon_1',
    description: 'hair salon',
    slots: [
      { name: 'stylist_name', description: 'Name of the hair stylist', isCategorical: false, possibleValues: [] },
      { name: 'kids_friendly', description: 'Whether the place is kids friendly', isCategorical: true, possibleValues: ['True', 'False'] },
      { name: 'is_unisex', description: 'Boolean flag indicating if the salon is unisex', isCategorical: true, possibleValues: ['True', 'False'] },
      { name: 'city', description: 'City of the salon', isCategorical: true, possibleValues: ['Oakland', 'Fremont', 'Napa'] },
      { name: 'appointment_time', description: 'Time of the appointment', isCategorical: false, possibleValues: [] },
    ],
    intents: [
      { name: 'BookAppointment', description: 'Book an appointment with a stylist' },
      { name: 'FindSalon', description: 'Find a salon nearby' },
    ],
  },
  {
    name: 'Flights_4',
    description: 'flights',
    slots: [{ name: 'is_nonstop', description: 'Whether the flight is a direct one', isCategorical: true, possibleValues: ['True', 'False'] }],
    intents: [],
  },
  {
    name: 'Buses_3',
    description: 'buses',
    slots: [
      { name: 'additional_luggage', description: 'Whether to carry excess baggage in the bus', isCategorical: true, possibleValues: ['True', 'False'] },
    ],
    intents: [],
  },
];
const fakeSchema = new SchemaIndex(fakeServices, 'fake-schema');
const sgdRules = loadRules('sgd');

function turnWith(actions: Omit<DialogueAction, 'service'>[], service = 'Salon_1', id = 'd1/1'): Turn {
  return {
    id,
    dialogueId: id.split('/')[0],
    turnIndex: Number(id.split('/')[1]),
    dataset: 'sgd',
    services: [service],
    actions: actions.map((a) => ({ service, ...a })),
    utterance: 'fake utterance',
    previousUserUtterance: '',
  };
}

function one(act: string, slot: string, values: string[], service = 'Salon_1', extra: Partial<DialogueAction> = {}) {
  return expandTurn(turnWith([{ act, slot, values, ...extra }], service), fakeSchema, sgdRules)[0];
}

describe('text helpers', () => {
  it('turn descriptions and names into phrases', () => {
    expect(descriptionPhrase('Name of the hair stylist')).toBe('the name of the hair stylist');
    expect(descriptionPhrase('The city.')).toBe('the city');
    expect(descriptionPhrase('how much is the entrance fee')).toBe('the entrance fee');
    expect(descriptionPhrase('how many train tickets you need')).toBe('the number of train tickets you need');
    expect(nounPhrase('whether the hotel has parking')).toBe('');
    expect(nounPhrase('area of the hotel')).toBe('the area of the hotel');
    expect(descriptionQuestion('Boolean flag indicating if the salon is unisex')).toBe('whether the salon is unisex');
    expect(nameWords('stylist_name')).toBe('stylist name');
    expect(nameWords('ReserveRestaurant')).toBe('reserve restaurant');
    expect(nameWords('restaurant-pricerange', { pricerange: 'price range' })).toBe('price range');
    expect(negateSlotVerb('is nonstop')).toBe('is not nonstop');
    expect(negateSlotVerb('smoking is allowed')).toBe('smoking is not allowed');
    expect(negateSlotVerb('has garage')).toBe('has no garage');
    expect(negateSlotVerb('additional luggage')).toBe('');
    expect(joinValues(['A', 'B', 'C'])).toBe('A, B or C');
  });
});

describe('paper worked examples (SGSAcc Appendix B, Table 3)', () => {
  it('inform(stylist_name=Queens) reads from the description and from the slot name', () => {
    const r = one('INFORM', 'stylist_name', ['Queens']);
    expect(r.candidates).toContain('The name of the hair stylist is Queens.');
    expect(r.candidates).toContain('Stylist name is Queens.');
    expect(r.slotDescription).toBe('Name of the hair stylist');
  });

  it('INFORM(kids_friendly=True) becomes an answered question and "Is kids friendly."', () => {
    const r = one('INFORM', 'kids_friendly', ['True']);
    expect(r.candidates).toContain('Whether the place is kids friendly? Yes.');
    expect(r.candidates).toContain('Is kids friendly.');
    // the opposite boolean is the negative
    expect(r.negatives).toContain('Whether the place is kids friendly? No.');
    expect(r.negatives).not.toContain('Whether the place is kids friendly? Yes.');
  });

  it('inform(is_nonstop=False) gives exactly the four candidates of Table 3', () => {
    const r = one('INFORM', 'is_nonstop', ['False'], 'Flights_4');
    expect(r.candidates).toEqual([
      'Whether the flight is a direct one? No.',
      'Is nonstop? No.',
      'Is not nonstop.',
      'Flights is not nonstop.',
    ]);
  });

  it('inform(additional_luggage=False) gives the Table 3 candidates and the has not / have not forms', () => {
    const r = one('INFORM', 'additional_luggage', ['False'], 'Buses_3');
    for (const c of [
      'Whether to carry excess baggage in the bus? No.',
      'Additional luggage? No.',
      'Has no additional luggage.',
      'Is not additional luggage.',
      'Does not additional luggage.',
      'Has not additional luggage.',
      'Have not additional luggage.',
    ]) {
      expect(r.candidates).toContain(c);
    }
  });

  it('"Boolean flag indicating if" descriptions read as a whether-question', () => {
    const r = one('INFORM', 'is_unisex', ['True']);
    expect(r.candidates).toContain('Whether the salon is unisex? Yes.');
    expect(r.candidates).toContain('Salon is unisex.');
  });

  it('multi-valued slots read "A or B"', () => {
    const r = one('OFFER', 'stylist_name', ['Queens', 'Kings']);
    expect(r.candidates).toContain('The name of the hair stylist is Queens or Kings.');
  });

  it('REQUEST, GOODBYE and REQ_MORE use the paper sentences', () => {
    const req = one('REQUEST', 'city', []);
    expect(req.candidates).toContain('Request the city of the salon.');
    expect(req.candidates).toContain('Request city.');
    expect(req.negatives).toEqual([]);
    expect(one('GOODBYE', '', []).candidates).toEqual(['Have a good day.', 'Bye bye.', 'See you.']);
    expect(one('REQ_MORE', '', []).candidates).toEqual([
      'What else do you need?',
      'What else can I help you with?',
      'Is there anything else?',
    ]);
  });
});

describe('our act families', () => {
  it('CONFIRM and OFFER state the value; negatives tamper a categorical value with another possible value', () => {
    for (const act of ['CONFIRM', 'OFFER', 'INFORM']) {
      const r = one(act, 'city', ['Fremont']);
      expect(r.candidates.length).toBeGreaterThanOrEqual(2);
      expect(r.candidates.every((c) => c.includes('Fremont'))).toBe(true);
      expect(r.negatives.length).toBeGreaterThan(0);
      expect(r.negatives.some((n) => n.includes('Fremont'))).toBe(false);
      expect(r.negatives.some((n) => n.includes('Oakland') || n.includes('Napa'))).toBe(true);
    }
  });

  it('INFORM_COUNT has a rule-supplied description of `count`', () => {
    const r = one('INFORM_COUNT', 'count', ['4']);
    expect(r.candidates.length).toBeGreaterThanOrEqual(2);
    expect(r.candidates.every((c) => c.includes('4'))).toBe(true);
    expect(r.slotDescription).toBe('Number of results found');
  });

  it('NOTIFY_SUCCESS/FAILURE are phrased from the active intent, negatives are the opposite outcome', () => {
    const ok = one('NOTIFY_SUCCESS', '', [], 'Salon_1', { intent: 'BookAppointment' });
    const ko = one('NOTIFY_FAILURE', '', [], 'Salon_1', { intent: 'BookAppointment' });
    expect(ok.candidates).toContain('The request to book an appointment with a stylist succeeded.');
    expect(ok.slotDescription).toBe('Book an appointment with a stylist');
    expect(ok.negatives).toEqual(ko.candidates);
    expect(ko.negatives).toEqual(ok.candidates);
    // without a known intent there are still two candidates
    expect(one('NOTIFY_SUCCESS', '', []).candidates.length).toBeGreaterThanOrEqual(2);
  });

  it('OFFER_INTENT uses the intent description; the negative offers another intent of the service', () => {
    const r = one('OFFER_INTENT', 'intent', ['BookAppointment']);
    expect(r.candidates).toContain('Would you like to book an appointment with a stylist?');
    expect(r.slotDescription).toBe('Book an appointment with a stylist');
    expect(r.negatives).toContain('Would you like to find a salon nearby?');
  });

  it('free-text negatives come from another value of the same slot in the data, deterministically', () => {
    const turns = ['Queens', 'Kings', 'Jacks', 'Aces'].map((v, i) =>
      turnWith([{ act: 'INFORM', slot: 'stylist_name', values: [v] }], 'Salon_1', `d${i}/1`),
    );
    const index = buildValueIndex(turns);
    const a = new Expander(fakeSchema, sgdRules, index).expandTurn(turns[0])[0];
    const b = new Expander(fakeSchema, sgdRules, index).expandTurn(turns[0])[0];
    expect(a.negatives.length).toBeGreaterThan(0);
    expect(a.negatives).toEqual(b.negatives);
    expect(a.negatives.some((n) => n.includes('Queens'))).toBe(false);
    expect(a.negatives.some((n) => /Kings|Jacks|Aces/.test(n))).toBe(true);
    // without any other value there is nothing to tamper with
    const lone = new Expander(fakeSchema, sgdRules, buildValueIndex([turns[0]])).expandTurn(turns[0])[0];
    expect(lone.negatives).toEqual([]);
  });

  it('a value with the same canonical form or number is never a negative', () => {
    const seen: [string, string][] = [
      ['12 pm', '12:00'],
      ['afternoon 12', '12:00'],
      ['noon', '12:00'],
      ['3 pm', '15:00'],
    ];
    const turns = seen.map(([v, c], i) =>
      turnWith([{ act: 'INFORM', slot: 'appointment_time', values: [v], canonicalValues: [c] }], 'Salon_1', `t${i}/1`),
    );
    const ex = new Expander(fakeSchema, sgdRules, buildValueIndex(turns));
    for (let i = 0; i < 40; i++) {
      const t = turnWith([{ act: 'CONFIRM', slot: 'appointment_time', values: ['12 pm'], canonicalValues: ['12:00'] }], 'Salon_1', `x${i}/1`);
      const r = ex.expandTurn(t)[0];
      expect(r.negatives).toContain('The time of the appointment is 3 pm.');
      expect(r.negatives.join(' ')).not.toMatch(/afternoon 12|noon|12 pm/);
    }
    const counts = ['two', '2', '5'].map((v, i) => turnWith([{ act: 'INFORM_COUNT', slot: 'count', values: [v] }], 'Salon_1', `c${i}/1`));
    const cx = new Expander(fakeSchema, sgdRules, buildValueIndex(counts));
    for (let i = 0; i < 20; i++) {
      const r = cx.expandTurn(turnWith([{ act: 'INFORM_COUNT', slot: 'count', values: ['2'] }], 'Salon_1', `y${i}/1`))[0];
      expect(r.negatives).toContain('I found 5 results.');
    }
  });

  it('an act no rule covers is reported, not guessed', () => {
    const r = one('MADE_UP_ACT', 'city', ['Napa']);
    expect(r.rule).toBeUndefined();
    expect(r.candidates).toEqual([]);
  });

  it('a blank value gives no candidate and is never drawn as another value of the slot', () => {
    // Before: "The name of the hair stylist is   ." — a hypothesis that names no value.
    expect(one('INFORM', 'stylist_name', ['  ']).candidates).toEqual([]);
    const turns = ['Queens', ' ', 'Kings'].map((v, i) =>
      turnWith([{ act: 'INFORM', slot: 'stylist_name', values: [v] }], 'Salon_1', `b${i}/1`),
    );
    const ex = new Expander(fakeSchema, sgdRules, buildValueIndex(turns));
    // 40 seeds: the pool held the blank value, which most seeds drew as the tamper.
    for (let i = 0; i < 40; i++) {
      const r = ex.expandTurn(turnWith([{ act: 'INFORM', slot: 'stylist_name', values: ['Queens'] }], 'Salon_1', `q${i}/1`))[0];
      expect(r.negatives).toEqual(['The name of the hair stylist is Kings.', 'Stylist name is Kings.']);
    }
  });
});

describe('rules hash', () => {
  it('is stable across loads and changes when a rules file changes', () => {
    expect(loadRules('sgd').hash).toBe(sgdRules.hash);
    expect(loadRules('multiwoz').hash).not.toBe(sgdRules.hash);
    const dir = tempDir('rules');
    cpSync(rulesDir(), dir, { recursive: true });
    expect(loadRules('sgd', dir).hash).toBe(sgdRules.hash);
    const f = path.join(dir, 'general.json');
    writeFileSync(f, readFileSync(f, 'utf8').replace('See you.', 'See you soon.'));
    const changed = loadRules('sgd', dir);
    expect(changed.hash).not.toBe(sgdRules.hash);
    expect(one('GOODBYE', '', []).candidates).toContain('See you.');
    expect(expandTurn(turnWith([{ act: 'GOODBYE', slot: '', values: [] }]), fakeSchema, changed)[0].candidates).toContain(
      'See you soon.',
    );
  });

  it('the generic ruleset holds both the SGD and the MultiWOZ act families', () => {
    const generic = loadRules('generic');
    for (const act of ['INFORM', 'OFFER_INTENT', 'GOODBYE', 'Inform', 'OfferBooked', 'bye']) expect(generic.byAct.has(act), act).toBe(true);
    expect(sgdRules.byAct.has('Inform')).toBe(false);
    expect(loadRules('multiwoz').byAct.has('INFORM')).toBe(false);
    expect(loadRules('multiwoz').files).toContain('multiwoz/slot-map.json');
  });

  it('rejects an unknown placeholder with the file name', () => {
    const dir = tempDir('rules');
    cpSync(rulesDir(), dir, { recursive: true });
    const f = path.join(dir, 'general.json');
    writeFileSync(f, readFileSync(f, 'utf8').replace('See you.', 'See {whom}.'));
    expect(() => loadRules('sgd', dir)).toThrow(/unknown placeholder \{whom\}/);
  });

  it('rejects a misspelt kind, strategy or dataset, a blank template and a malformed rule in one line naming file and rule', () => {
    const broken = (file: string, edit: (text: string) => string): InputError => {
      const dir = tempDir('rules');
      cpSync(rulesDir(), dir, { recursive: true });
      const f = path.join(dir, file);
      const text = readFileSync(f, 'utf8');
      const edited = edit(text);
      expect(edited, 'the edit applies').not.toBe(text);
      writeFileSync(f, edited);
      try {
        loadRules('sgd', dir);
      } catch (e) {
        if (e instanceof InputError) {
          expect(e.file).toBe(f);
          return e;
        }
        throw e;
      }
      throw new Error(`loadRules accepted the edited ${file}`);
    };
    // Each was silently ignored (a GOODBYE without candidates, tamper negatives, the file left out) ...
    expect(broken('general.json', (t) => t.replace('"none": ["Have', '"nones": ["Have')).message).toMatch(/^unknown template kind "nones"/);
    expect(broken('inform.json', (t) => t.replace('"negatives": "tamper"', '"negatives": "tamperr"')).where).toBe('rule #0');
    expect(broken('general.json', (t) => t.replace('"datasets": ["sgd"', '"datasets": ["sgdd"')).message).toMatch(/unknown dataset "sgdd"/);
    // ... an empty NLI hypothesis ...
    const blank = broken('general.json', (t) => t.replace('"See you."', '" "'));
    expect(blank.oneLine()).toMatch(/general\.json: rule #0: templates\.none has a template with no words/);
    // ... or a TypeError with a stack trace.
    expect(broken('general.json', (t) => t.replace('["Have a good day.", "Bye bye.", "See you."]', '"Have a good day."')).message).toBe(
      'templates.none must be a non-empty list of strings',
    );
    expect(broken('general.json', () => 'null').message).toMatch(/needs "datasets" and "rules"/);
  });
});
