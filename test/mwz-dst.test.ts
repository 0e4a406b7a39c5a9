import { describe, expect, it } from 'vitest';
import { dstScores } from '../src/metrics/mwz/dst.js';

describe('DST scores (mwzeval get_dst, hand-computed)', () => {
  it('counts a turn as joint-correct only with equal keys and all values matching', () => {
    const s = dstScores([
      // identical: joint hit, 2 tp
      { hyp: { hotel: { area: 'east', stars: '4' } }, ref: { hotel: { area: 'east', stars: '4' } } },
      // partial_ratio('cambridge', 'cambridge station')=100 > 95: match; missing slot -> fn, no joint
      { hyp: { train: { departure: 'cambridge' } }, ref: { train: { departure: 'cambridge station', day: 'monday' } } },
      // wrong value: 1 fp and 1 fn; extra slot: 1 fp
      { hyp: { hotel: { area: 'west', parking: 'yes' } }, ref: { hotel: { area: 'east' } } },
      // both empty: joint hit, nothing counted
      { hyp: {}, ref: {} },
    ]);
    // tp = 2 + 1 = 3; fp = 2; fn = 1 + 1 = 2
    expect(s.joint_accuracy).toBeCloseTo(50, 6);
    expect(s.slot_precision).toBeCloseTo(3 / 5, 9);
    expect(s.slot_recall).toBeCloseTo(3 / 5, 9);
    expect(s.slot_f1).toBeCloseTo(60, 6);
  });

  it('uses a strict threshold: a ratio of exactly 95 does not match', () => {
    // 'abcdefghijklmnopqrst' vs one substitution in 20 chars: ratio = 95 -> not a match
    const s = dstScores([{ hyp: { x: { s: 'abcdefghijklmnopqrsX' } }, ref: { x: { s: 'abcdefghijklmnopqrst' } } }]);
    expect(s.joint_accuracy).toBe(0);
    expect(s.slot_precision).toBe(0);
  });

  it('keeps mwzeval scales: joint and F1 in percent, precision and recall as fractions', () => {
    const s = dstScores([{ hyp: { a: { b: 'c' } }, ref: { a: { b: 'c' } } }]);
    expect(s.joint_accuracy).toBeCloseTo(100, 6);
    expect(s.slot_f1).toBeCloseTo(100, 6);
    expect(s.slot_precision).toBeCloseTo(1, 9);
  });
});
