import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkPredictionIds } from '../../src/pipeline/predictions-check.js';
import { describeUnmatchedIds } from '../../src/metrics/predictions-file.js';
import { InputError } from '../../src/util/errors.js';

// SGD-like: system turns are the odd indices of each dialogue.
const VALID = ['1_00000/1', '1_00000/3', '1_00000/5', '1_00001/1', '1_00001/3', '2_00010/1'];

describe('prediction ids that match no turn', () => {
  afterEach(() => vi.restoreAllMocks());

  it('ids numbered by system-turn order land on USER turns: said so, with the nearest system turns', () => {
    const hint = describeUnmatchedIds(['1_00000/0', '1_00000/2', '1_00001/2'], VALID);
    expect(hint).toBe(
      'first: 1_00000/0, 1_00000/2, 1_00001/2; nearest valid: 1_00000/1, 1_00000/1, 1_00001/1; these dialogues exist but those turns are not system turns: ' +
        'the turn index counts every turn of the dialogue (USER turns too), so ids numbered by system-turn order land on USER turns',
    );
  });

  it('a colon instead of the slash', () => {
    const hint = describeUnmatchedIds(['1_00000:1', '1_00000:3'], VALID);
    expect(hint).toBe('first: 1_00000:1, 1_00000:3; nearest valid: 1_00000/1, 1_00000/3; ids take a slash: "<dialogue_id>/<turn index>", e.g. "1_00000/1"');
  });

  it('an unknown dialogue: the valid id sharing the longest prefix, and the expected form', () => {
    expect(describeUnmatchedIds(['2_00011/1'], VALID)).toBe(
      'first: 2_00011/1; nearest valid: 2_00010/1; ids are "<dialogue_id>/<turn index>" with the index into the dialogue\'s turns, as `todeval refs` writes them',
    );
  });

  it('exit 2 (an InputError) unless --allow-missing or --skip-invalid; then a warning line', () => {
    const c = { file: 'p.jsonl', missing: ['1_00000/1'], extra: ['1_00000:1'], source: 'sgd/test', validIds: VALID, matched: 2 };
    expect(() => checkPredictionIds(c)).toThrow(InputError);
    expect(() => checkPredictionIds(c)).toThrow(/^1 prediction ids match no turn of sgd\/test \(first: 1_00000:1; nearest valid: 1_00000\/1; ids take a slash.*\); 1 turns have no prediction; pass --allow-missing or --skip-invalid/);
    // The pipeline says it through its notice hook (the CLI prints it as `todeval: <notice>`).
    const notices: string[] = [];
    const hooks = { notice: (m: string) => notices.push(m) };
    expect(() => checkPredictionIds({ ...c, missing: [], skipInvalid: true }, hooks)).not.toThrow();
    expect(() => checkPredictionIds({ ...c, allowMissing: true }, hooks)).not.toThrow();
    expect(notices).toEqual(['1 prediction ids match no turn of sgd/test (first: 1_00000:1)', '1 prediction ids match no turn of sgd/test (first: 1_00000:1)']);
  });

  it('no prediction matching a turn to score is refused whatever the flags (was: --allow-missing gave a 0-turn report, exit 0)', () => {
    const c = { file: 'p.jsonl', missing: ['1_00000/1', '1_00000/3'], extra: ['9_00000/1'], source: 'sgd:test', validIds: VALID, matched: 0 };
    for (const flags of [{}, { allowMissing: true }, { skipInvalid: true }, { allowMissing: true, skipInvalid: true }]) {
      expect(() => checkPredictionIds({ ...c, ...flags })).toThrow(/^all 2 turns of sgd:test have no prediction, nothing to score: 1 prediction ids match no turn of sgd:test \(first: 9_00000\/1; ids are "<dialogue_id>\/<turn index>"/);
    }
    // Ids of turns beyond --limit: valid ids, but none in the slice.
    expect(() => checkPredictionIds({ ...c, extra: [], limit: 2, allowMissing: true })).toThrow('all 2 turns (--limit 2) of sgd:test have no prediction, nothing to score');
  });
});
