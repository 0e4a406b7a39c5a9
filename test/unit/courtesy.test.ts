import { describe, expect, it } from 'vitest';
import { courtesyKind, normaliseCourtesy } from '../../src/metrics/sgsacc/courtesy.js';

describe('courtesy rule', () => {
  it("recognises the generic acts' own references (rules/general.json)", () => {
    expect(courtesyKind('What else can I help you with?', ['What else do you need?', 'What else can I help you with?'])).toBe('generic-act');
    expect(courtesyKind('see you', ['Have a good day.', 'Bye bye.', 'See you.'])).toBe('generic-act');
  });

  it('recognises the documented list, whole sentences only', () => {
    const cases: [string, string][] = [
      ['Is there anything else I can help you with?', 'anything-else'],
      ['Anything else?', 'anything-else'],
      ['Can I help you with anything else today?', 'anything-else'],
      ["You're welcome!", 'welcome'],
      ['You’re very welcome.', 'welcome'],
      ['Have a great day!', 'goodbye'],
      ['Enjoy your meal.', 'goodbye'],
      ['Sure.', 'acknowledgement'],
      ['Okay, anything else?', 'anything-else'],
      ['Hello there!', 'greeting'],
      ['Thank you for using our service.', 'thanks'],
      ['Let me check that for you.', 'wait'],
      ['Is that correct?', 'confirm-question'],
      ['Does that sound good to you?', 'confirm-question'],
      ['Can I do anything more for you?', 'anything-else'],
    ];
    for (const [s, kind] of cases) expect([s, courtesyKind(s)]).toEqual([s, kind]);
  });

  it('never takes a sentence with a fact in it', () => {
    expect(courtesyKind('Sure, your table at 7 pm is booked.')).toBeNull();
    expect(courtesyKind('Have a great day at Tasty Grill!')).toBeNull();
    expect(courtesyKind('Yes.')).toBeNull(); // answers a question: a boolean slot's value
    expect(courtesyKind('No.')).toBeNull();
    expect(courtesyKind('Enjoy', [], ['Enjoy'])).toBeNull(); // a slot value is never courtesy
    expect(courtesyKind('Anything else at 5?')).toBeNull();
    expect(courtesyKind('The restaurant is in San Jose.')).toBeNull();
    expect(courtesyKind('')).toBeNull();
  });

  it('normalises case, punctuation and curly apostrophes', () => {
    expect(normaliseCourtesy('  You’re  WELCOME!! ')).toBe("you're welcome");
  });
});
