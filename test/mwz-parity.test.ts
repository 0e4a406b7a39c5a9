import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Evaluator } from '../src/metrics/mwz/evaluator.js';
import { DATA_DIR, hasData } from './helpers/shared.js';

// "Shades of BLEU" (seeds/shades-of-bleu-multiwoz-evaluation.txt): Table 4 first row (BLEU against
// MultiWOZ 2.2 references) and Table 5 (Inform/Success, standard and optimistic).
const PAPER = {
  damd: { bleu: 16.4, inform: 57.9, success: 47.6, informOpt: 73.7, successOpt: 63.0 },
  augpt: { bleu: 16.8, inform: 76.6, success: 60.5, informOpt: 78.1, successOpt: 62.4 },
  hdsa: { bleu: 20.7, inform: 87.9, success: 79.4, informOpt: 91.6, successOpt: 83.2 },
  uniconv: { bleu: 18.1, inform: 66.7, success: 58.7, informOpt: 67.5, successOpt: 60.1 },
  lava: { bleu: 10.8, inform: 95.9, success: 93.5, informOpt: 97.5, successOpt: 95.9 },
} as const;

describe.skipIf(!hasData('multiwoz', 'predictions', 'lava.json'))('parity with the paper on the published predictions', () => {
  const ev = new Evaluator({ bleu: true, success: true, dataDir: DATA_DIR });

  for (const [system, want] of Object.entries(PAPER)) {
    it(`${system}: Inform/Success within 2 points, BLEU within 1.0`, () => {
      const file = path.join(DATA_DIR, 'multiwoz', 'predictions', `${system}.json`);
      const r = ev.evaluate(JSON.parse(readFileSync(file, 'utf8')), file);
      const s = r.success!;
      expect(Math.abs(s.inform.total - want.inform)).toBeLessThanOrEqual(2);
      expect(Math.abs(s.success.total - want.success)).toBeLessThanOrEqual(2);
      expect(Math.abs(s.optimistic.inform.total - want.informOpt)).toBeLessThanOrEqual(2);
      expect(Math.abs(s.optimistic.success.total - want.successOpt)).toBeLessThanOrEqual(2);
      expect(Math.abs(r.bleu!.mwz21 - want.bleu)).toBeLessThanOrEqual(1.0);
      // systems with their own predicted states must reproduce the paper exactly (same states,
      // same database); only gold-state systems see the MultiWOZ 2.1 vs 2.2 state difference
      if (s.state_source === 'predicted') {
        expect(s.inform.total).toBe(want.inform);
        expect(s.success.total).toBe(want.success);
      }
    });
  }
});
