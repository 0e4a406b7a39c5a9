import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as todeval from '../../src/index.js';
import { REPO_ROOT } from '../helpers/shared.js';

// The package entry point is what library users import; this walks the data flow through it alone.
describe('library entry point', () => {
  it('takes the bundled example from adapters through rules to SER without reaching into modules', () => {
    const mini = path.join(REPO_ROOT, 'examples', 'sgd-mini');
    const data = todeval.loadDataset({
      dataset: 'sgd',
      input: path.join(mini, 'dialogues.json'),
      schemaFile: path.join(mini, 'schema.json'),
    });
    expect(data.turns.length).toBeGreaterThan(0);
    const rules = todeval.loadRules('sgd');
    const values = todeval.buildValueIndex(data.turns);
    for (const turn of data.turns) {
      for (const refs of todeval.expandTurn(turn, data.schema, rules, values)) {
        expect(refs.candidates.length, `${refs.id} ${refs.act}`).toBeGreaterThanOrEqual(2);
      }
    }
    const ser = todeval.computeSer(data.turns, { isCategorical: todeval.serIsCategorical('sgd', data.schema) });
    expect(ser.utterancesWithValues).toBeGreaterThan(0);
    expect(ser.ser).toBe(0); // the example's gold utterances carry their values verbatim
  });

  it('exposes sacreBLEU-compatible BLEU: identical corpora score 100', () => {
    const hyps = ['the cat sat on the mat today .'];
    expect(todeval.corpusBleu(hyps, [hyps]).score).toBeCloseTo(100, 10);
  });
});
