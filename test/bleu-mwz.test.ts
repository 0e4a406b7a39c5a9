// BLEU of the five published MultiWOZ systems against span-delexicalized gold responses, compared
// with the first row (MultiWOZ 2.2 references) of Table 4 in "Shades of BLEU"
// (seeds/shades-of-bleu-multiwoz-evaluation.txt). Our references come from the MultiWOZ 2.1 span
// annotations in the data dir, so agreement is required within 1.0 BLEU, not exactly.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { corpusBleu } from '../src/metrics/text/bleu.js';
import { loadGroundTruth } from '../src/metrics/mwz/ground-truth.js';
import { normalizeResponse } from '../src/metrics/text/normalize-response.js';
import { DATA_DIR, hasData } from './helpers/shared.js';

const TABLE4_MWZ22: Record<string, number> = { damd: 16.4, augpt: 16.8, hdsa: 20.7, uniconv: 18.1, lava: 10.8 };

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('BLEU parity with Table 4 of Shades of BLEU', () => {
  const refs = new Map<string, string[]>();

  beforeAll(() => {
    const gt = loadGroundTruth(DATA_DIR, { noCache: true });
    for (const [id, d] of Object.entries(gt.dialogues)) refs.set(id, d.references.map((r) => normalizeResponse(r).text));
  });

  for (const [system, paper] of Object.entries(TABLE4_MWZ22)) {
    it(`${system}: within 1.0 of ${paper}`, () => {
      const file = path.join(DATA_DIR, 'multiwoz', 'predictions', `${system}.json`);
      const dialogs = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Array<{ response: string }>>;
      const hyps: string[] = [];
      const golds: string[] = [];
      for (const [id, turns] of Object.entries(dialogs)) {
        const gold = refs.get(id);
        expect(gold, `gold references for ${id}`).toBeDefined();
        turns.forEach((t, i) => {
          hyps.push(normalizeResponse(t.response).text);
          golds.push(gold![i]);
        });
      }
      const bleu = corpusBleu(hyps, [golds]);
      expect(Math.abs(bleu.score - paper)).toBeLessThan(1.0);
      expect(bleu.signature).toBe('nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x');
    });
  }
});
