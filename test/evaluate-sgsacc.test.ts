import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { lexicalizedText } from '../src/metrics/mwz/sgsacc-merge.js';
import { evaluateSgsacc } from '../src/pipeline/evaluate-sgsacc.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { getTinyModelDir } from './helpers/tiny-model.js';

describe('which turns --sgsacc scores', () => {
  it('takes the utterance field, else a response without any placeholder style', () => {
    expect(lexicalizedText({ response: '[value_name] is cheap', utterance: 'Nandos is cheap' })).toBe('Nandos is cheap');
    expect(lexicalizedText({ response: 'Nandos is cheap' })).toBe('Nandos is cheap');
    expect(lexicalizedText({ response: '[restaurant_name] is cheap' })).toBeUndefined();
    expect(lexicalizedText({ response: 'the [attraction name] is free' })).toBeUndefined();
  });
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))(
  'SGSAcc and SER merged into evaluate (tiny random NLI model: checks plumbing and SER, not SGSAcc values)',
  () => {
    // Read in beforeAll, not in the suite body: vitest runs the body of a skipped suite too.
    let convlab!: Record<string, { log: { text: string }[] }>;
    beforeAll(() => {
      convlab = JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'), 'utf8'));
    });
    const gold = (id: string) => convlab[id].log.filter((_, i) => i % 2 === 1).map((t) => t.text);

    it('scores lexicalized turns against the test set acts; SER sees dropped values', async () => {
      const model = await getTinyModelDir();
      const sng0580 = gold('SNG0580'); // turn 2 is "The postcode is cb21db"
      const input = {
        sng0580: sng0580.map((text, k) => ({ response: k === 2 ? 'The postcode is [value_postcode]' : text })),
        pmul4648: gold('PMUL4648').map((text) => ({ response: '[value_name] ok', utterance: text })),
      };
      // One turn holds a placeholder: refused without the flag, left out with it.
      await expect(evaluateSgsacc(input, { dataDir: DATA_DIR, nli: { model, device: 'cpu' } })).rejects.toThrow(/1 of \d+ turns hold delexicalization placeholders \(\[value_postcode\]\)/);
      const r = await evaluateSgsacc(input, { dataDir: DATA_DIR, nli: { model, device: 'cpu' }, skipDelexicalized: true });
      expect(r).not.toBeNull();
      expect(r!.skipDelexicalized).toBe(true);
      expect(r!.counts.delexicalizedTurns).toBe(1);
      expect(r!.counts.lexicalizedTurns).toBe(sng0580.length - 1 + gold('PMUL4648').length);
      expect(r!.ser.errors).toBe(0); // the gold texts contain their own values
      expect(r!.model.modelId).toMatch(/tiny-random-roberta/);
      expect(r!.signed).not.toHaveProperty('validation');
      expect(r!.signed).not.toHaveProperty('context');

      // A library call may turn validation and the context pass off (the CLI cannot): both change
      // the SGSAcc numbers, so both reach the signature (evaluateSgsaccSignature reads `signed`).
      // SER does not depend on either.
      const dropped = { sng0580: sng0580.map((text) => ({ response: text.replace('Charlie Chan', 'It') })) };
      const r2 = await evaluateSgsacc(dropped, { dataDir: DATA_DIR, nli: { model, device: 'cpu' }, validation: false, context: false });
      expect(r2!.ser.errors).toBe(1);
      expect(r2!.signed).toMatchObject({ validation: false, context: false });
    });
  },
);
