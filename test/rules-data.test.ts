import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../src/adapters/load.js';
import { Expander } from '../src/rules/expand.js';
import { loadRules } from '../src/rules/load.js';
import type { ActionReferences } from '../src/rules/types.js';
import { buildValueIndex } from '../src/rules/value-index.js';
import { SGDX_VARIANTS } from '../src/schema/sgd.js';
import { loadSgdxSchema, renameTurnsForSgdx, sgdxRenaming } from '../src/schema/sgd-x.js';
import { DATA_DIR, hasData } from './helpers/shared.js';

// Two test files cover every SGD system act and keep the suite fast; `todeval refs --summary` covers the whole set.
const SGD_SLICE = ['dialogues_001.json', 'dialogues_030.json'];

function expandAll(ds: ReturnType<typeof loadDataset>, rules = loadRules(ds.turns[0].dataset)) {
  const ex = new Expander(ds.schema, rules, buildValueIndex(ds.turns));
  return ds.turns.flatMap((t) => ex.expandTurn(t));
}

function byAct(refs: ActionReferences[]): Map<string, ActionReferences[]> {
  const m = new Map<string, ActionReferences[]>();
  for (const r of refs) m.set(r.act, [...(m.get(r.act) ?? []), r]);
  return m;
}

describe.skipIf(!hasData('sgd', 'test', 'dialogues_001.json'))('rules on SGD test data', () => {
  // Read in beforeAll, not in the suite body: vitest runs the body of a skipped suite too.
  let turns!: ReturnType<typeof loadDataset>['turns'];
  let ds!: ReturnType<typeof loadDataset>;
  beforeAll(() => {
    const slices = SGD_SLICE.map((f) =>
      loadDataset({ dataset: 'sgd', dataDir: DATA_DIR, input: path.join(DATA_DIR, 'sgd', 'test', f) }),
    );
    turns = slices.flatMap((s) => s.turns);
    ds = { ...slices[0], turns };
  });

  it('every action of every SGD system act gets >= 2 candidates from a rule', () => {
    const refs = expandAll(ds);
    const acts = byAct(refs);
    for (const act of ['INFORM', 'REQUEST', 'CONFIRM', 'OFFER', 'INFORM_COUNT', 'NOTIFY_SUCCESS', 'NOTIFY_FAILURE', 'OFFER_INTENT', 'REQ_MORE', 'GOODBYE']) {
      expect(acts.get(act)?.length ?? 0, act).toBeGreaterThan(0);
    }
    const bad = refs.filter((r) => r.rule === undefined || r.candidates.length < 2);
    expect(bad).toEqual([]);
    // candidates never leak an unfilled placeholder
    expect(refs.some((r) => r.candidates.some((c) => /[{}]/.test(c) && !r.values.some((v) => /[{}]/.test(v))))).toBe(false);
  });

  it('negatives never repeat a candidate and never contain the true value of a tampered free-text slot', () => {
    const refs = expandAll(ds);
    for (const r of refs) {
      const cands = new Set(r.candidates.map((c) => c.toLowerCase()));
      for (const n of r.negatives) expect(cands.has(n.toLowerCase())).toBe(false);
    }
    const offers = refs.filter((r) => r.act === 'OFFER' && r.values.length === 1 && r.negatives.length);
    expect(offers.length).toBeGreaterThan(100);
    for (const r of offers) expect(r.negatives.every((n) => !n.includes(`${r.values[0]}.`))).toBe(true);
  });

  it.each(SGDX_VARIANTS)('SGD-X %s schema: rules still give >= 2 candidates for every action', (variant) => {
    const schema = loadSgdxSchema(DATA_DIR, variant);
    const renamed = renameTurnsForSgdx(turns, sgdxRenaming(ds.schema, schema));
    // the renaming really changed names, so the rules run on the variant's own wording
    expect(renamed.some((t, i) => t.actions.some((a, j) => a.slot !== turns[i].actions[j].slot))).toBe(true);
    const ex = new Expander(schema, loadRules('sgd'), buildValueIndex(renamed));
    const refs = renamed.flatMap((t) => ex.expandTurn(t));
    const bad = refs.filter((r) => r.rule === undefined || r.candidates.length < 2);
    expect(bad).toEqual([]);
    for (const r of refs) {
      if (r.slot && r.slot !== 'count' && r.slot !== 'intent') expect(schema.slot(r.service, r.slot), `${r.service}.${r.slot}`).toBeDefined();
    }
  });
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('rules on MultiWOZ 2.1 test data', () => {
  let ds!: ReturnType<typeof loadDataset>;
  beforeAll(() => {
    ds = loadDataset({ dataset: 'multiwoz', dataDir: DATA_DIR, limit: 2500 });
  });

  it('every MultiWOZ system act gets >= 2 candidates from a rule', () => {
    const refs = expandAll(ds);
    const acts = byAct(refs);
    for (const act of ['Inform', 'Recommend', 'Select', 'NoOffer', 'Book', 'NoBook', 'OfferBook', 'OfferBooked', 'Request', 'reqmore', 'bye', 'greet', 'welcome']) {
      expect(acts.get(act)?.length ?? 0, act).toBeGreaterThan(0);
    }
    expect(refs.filter((r) => r.rule === undefined || r.candidates.length < 2)).toEqual([]);
  });

  it('Choice reads as a number of options and booleans as answered questions', () => {
    const refs = expandAll(ds);
    const choice = refs.find((r) => r.slot === 'restaurant-choice' && r.act === 'Inform')!;
    expect(choice.candidates).toContain(`There are ${choice.values[0]} restaurant options.`);
    const parking = refs.find((r) => r.slot === 'hotel-parking' && r.act === 'Inform' && r.values[0] === 'yes')!;
    expect(parking.candidates).toContain('Whether the hotel has parking? Yes.');
    expect(parking.negatives).toContain('Whether the hotel has parking? No.');
  });
});
