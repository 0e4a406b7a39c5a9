import { writeFileSync } from 'node:fs';
import path from 'node:path';
import * as fuzz from 'fuzzball';
import { describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig } from '../src/metrics/gcdf1/config.js';
import { aggregate, loadDialogues } from '../src/metrics/gcdf1/evaluate.js';
import { ratio, roundHalfEven, tokenSortRatio } from '../src/metrics/gcdf1/fuzzy.js';
import { canonicalValueOf, findBestValueMatch } from '../src/metrics/gcdf1/normalization.js';
import { parseCanonicalValues } from '../src/metrics/gcdf1/canonical-values.js';
import { computeF1, DialogueRecord } from '../src/metrics/gcdf1/record.js';
import { validateDialogue } from '../src/metrics/gcdf1/validate.js';
import { InputError } from '../src/util/errors.js';
import { conversation, system, user } from './gcdf1-conversations.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';

describe('token sort ratio (fuzzywuzzy with python-Levenshtein)', () => {
  it('agrees with fuzzball token_sort_ratio (force_ascii) away from .5 ties', () => {
    const pairs = [
      ['the oak bistro', 'oak bistro the'],
      ['pizza hut city centre', 'pizza hut'],
      ['expensiv', 'expensive'],
      ['4:45', '4:45 pm'],
      ['San Francisco', 'San Fran'],
      ['cambridge', 'cmabridge'],
    ];
    for (const [a, b] of pairs) {
      expect(tokenSortRatio(a, b)).toBe(fuzz.token_sort_ratio(a, b, { force_ascii: true }));
    }
  });

  it('reproduces the documented fuzzywuzzy examples', () => {
    // from the reference's value_generated docstring
    expect(tokenSortRatio('San Francisco', 'San Fran')).toBe(76);
    expect(tokenSortRatio('4:45', '4:45 pm')).toBe(73);
    expect(tokenSortRatio('Hakka Restaurant', 'restaurant hakka')).toBe(100);
    expect(tokenSortRatio('2:00', '$2,000')).toBe(89);
  });

  it('rounds halves to even like Python 3 (fuzzball rounds them up)', () => {
    expect(roundHalfEven(88.5)).toBe(88);
    expect(roundHalfEven(89.5)).toBe(90);
    // "ab" vs "abcd": 100 * 4 / 6 is not a tie; "a" vs "ab" is 66.67; "abc" vs "abcd" 85.71
    expect(ratio('abc', 'abcd')).toBe(86);
    // 2 * 3 / 8 = 75 exactly, no rounding
    expect(ratio('abc', 'abcde')).toBe(75);
  });

  it('keeps the first of equally good candidates and applies the 0.9 threshold inclusively', () => {
    expect(findBestValueMatch(['cheap', 'cheep'], 'cheap', 0.9)).toBe('cheap');
    expect(findBestValueMatch(['expensive'], 'expensiv', 0.9)).toBe('expensive');
    expect(findBestValueMatch(['moderate'], 'modern', 0.9)).toBeUndefined();
  });

  it('resolves a paraphrase to the first canonical value listing it, then to not_in_goal values', () => {
    const cmap = parseCanonicalValues(
      {
        leaveat: {
          train: { '01:30': ['1:30', '01:30'], '13:30': ['1:30', '13:30'], special_keys: { not_in_goal: { '24:00': ['midnight'] } } },
        },
      },
      'inline',
    );
    expect(canonicalValueOf(cmap, 'train', 'leaveat', '1:30')).toBe('01:30');
    expect(canonicalValueOf(cmap, 'train', 'leaveat', 'midnight')).toBe('24:00');
    expect(canonicalValueOf(cmap, 'train', 'leaveat', 'noon')).toBeUndefined();
  });
});

describe('scores and aggregation', () => {
  it('computes F1 over multisets, with empty sides scoring 1 as in the reference', () => {
    expect(computeF1(['a', 'b'], ['a', 'a', 'b'])).toEqual({ f1: 0.8, precision: 2 / 3, recall: 1 });
    expect(computeF1([], ['a'])).toEqual({ f1: 0, precision: 0, recall: 1 });
    expect(computeF1(['a'], [])).toEqual({ f1: 0, precision: 1, recall: 0 });
  });

  it('averages each domain over the dialogues that have it (macro over dialogues)', () => {
    const a = new DialogueRecord('a');
    a.score('igcd_f1', 'hotel', { f1: 1, precision: 1, recall: 1 });
    a.score('igcd_f1', 'combined', { f1: 1, precision: 1, recall: 1 });
    const b = new DialogueRecord('b');
    b.score('igcd_f1', 'train', { f1: 0.5, precision: 0.5, recall: 0.5 });
    b.score('igcd_f1', 'combined', { f1: 0.5, precision: 0.5, recall: 0.5 });
    b.score('rgcd_f1', 'combined', { f1: 0.2, precision: 0.4, recall: 0.1 });
    const s = aggregate([a, b]);
    expect(s.igcd_f1).toEqual({ combined: 0.75, hotel: 1, train: 0.5 });
    expect(s.rgcd_recall).toEqual({ combined: 0.1 });
    expect(s.counts).toEqual({ igcd_f1: { combined: 2, hotel: 1, train: 1 }, rgcd_f1: { combined: 1 } });
  });
});

describe('configuration', () => {
  it.skipIf(!hasData('gcdf1', 'multiwoz_user_evaluator.yaml'))('reads the published YAML into the built-in defaults', () => {
    expect(loadConfig(path.join(DATA_DIR, 'gcdf1', 'multiwoz_user_evaluator.yaml'))).toEqual(defaultConfig());
  });

  it('overrides given keys and rejects unknown keys and wrong types with the file named', () => {
    const dir = tempDir('gcdf1-cfg');
    const ok = path.join(dir, 'ok.yaml');
    writeFileSync(ok, 'igcd_f1:\n  repetitions:\n    max_repetitions: 2\n');
    const c = loadConfig(ok);
    expect(c.igcd_f1.repetitions.max_repetitions).toBe(2);
    expect(c.igcd_f1.repetitions.count_fp).toBe(true);
    const typo = path.join(dir, 'typo.yaml');
    writeFileSync(typo, 'igcd_f1:\n  repetition: {}\n');
    expect(() => loadConfig(typo)).toThrow(/unknown configuration key igcd_f1.repetition/);
    const wrong = path.join(dir, 'wrong.yaml');
    writeFileSync(wrong, 'rgcd_f1:\n  repetitions_warning: many\n');
    expect(() => loadConfig(wrong)).toThrow(InputError);
  });
});

describe('malformed conversations', () => {
  const good = () => conversation({ hotel: { info: { area: 'north' } } }, [user([['Hotel-Inform', 'area', 'north']]), system([['Hotel-Inform', 'phone', '1']])]);
  const where = (raw: unknown): string => {
    try {
      validateDialogue(raw, 'dialogues_001.json', 0);
    } catch (e) {
      return (e as InputError).oneLine();
    }
    return 'valid';
  };

  it('accepts a well-formed conversation and a slotless inform (a domain intent)', () => {
    const d = good();
    d.turns[0].frames!.push({ service: 'attraction', actions: [{ act: 'Attraction-Inform' }] });
    expect(where(d)).toBe('valid');
  });

  it('names the dialogue (and turn) of a missing goal, an unknown domain, an act without slot', () => {
    const noGoal = { ...good(), goal: undefined };
    expect(where(noGoal)).toBe('dialogues_001.json: dialogue TEST0001.json: missing goal');
    const unknown = { ...good(), goal: { spaceship: { info: {} } } };
    expect(where(unknown)).toMatch(/dialogue TEST0001.json: unknown domain "spaceship" in goal/);
    const noSlot = good();
    noSlot.turns[0].frames![0].actions!.push({ act: 'Hotel-Inform', values: ['cheap'] });
    expect(where(noSlot)).toBe('dialogues_001.json: dialogue TEST0001.json turn 0: act Hotel-Inform without slot (values ["cheap"])');
    const frameDomain = good();
    frameDomain.turns[1].frames!.push({ service: 'spaceship', actions: [] });
    expect(where(frameDomain)).toMatch(/turn 1: unknown domain "spaceship"/);
    const noValue = good();
    noValue.turns[0].frames![0].actions!.push({ act: 'Hotel-Inform', slot: 'stars' });
    expect(where(noValue)).toMatch(/turn 0: act Hotel-Inform slot stars without value/);
  });

  it('lists malformed dialogues and keeps the rest with skipInvalid', () => {
    const dir = tempDir('gcdf1-dir');
    const bad = { ...good(), dialogue_id: 'BAD.json', goal: undefined };
    writeFileSync(path.join(dir, 'dialogues_001.json'), JSON.stringify([good(), bad]));
    expect(() => loadDialogues(dir)).toThrow(expect.objectContaining({ where: 'dialogue BAD.json', message: 'missing goal' }));
    const loaded = loadDialogues(dir, true);
    expect(loaded.dialogues.map((d) => d.dialogue_id)).toEqual(['TEST0001.json']);
    expect(loaded.invalid).toEqual([{ file: path.join(dir, 'dialogues_001.json'), where: 'dialogue BAD.json', message: 'missing goal' }]);
  });
});
