import { describe, expect, it } from 'vitest';
import { splitSentences } from '../../src/metrics/text/sentences.js';

const texts = (t: string, keep?: string[]) => splitSentences(t, { keep }).map((s) => s.text);

describe('splitSentences (Intl.Segmenter plus guards)', () => {
  it('splits ordinary sentences at . ! and ?', () => {
    expect(texts('I found 3 restaurants. How about Tasty Grill? It is great!')).toEqual(['I found 3 restaurants.', 'How about Tasty Grill?', 'It is great!']);
    expect(texts('Okay!How about that?')).toEqual(['Okay!', 'How about that?']);
  });

  it('does not split times, prices or decimals', () => {
    expect(texts('Your table is booked for 4:30 pm. It costs $45.50 per person.')).toEqual(['Your table is booked for 4:30 pm.', 'It costs $45.50 per person.']);
    expect(texts('The show starts at 7 p.m. today and is rated 4.5 stars.')).toEqual(['The show starts at 7 p.m. today and is rated 4.5 stars.']);
    expect(texts('It leaves at 4 p.m. The bus is late.')).toEqual(['It leaves at 4 p.m.', 'The bus is late.']);
    expect(texts('The total is $1,200.50.')).toEqual(['The total is $1,200.50.']);
  });

  it('does not split titles, initials or saints; does split after a street before a sentence starter', () => {
    expect(texts('Mr. Smith will see you.')).toEqual(['Mr. Smith will see you.']);
    expect(texts('How about Christina M. Walker in Novato?')).toEqual(['How about Christina M. Walker in Novato?']);
    expect(texts('There is a Psychologist in St. Helena. Her name is Rahima S.')).toEqual(['There is a Psychologist in St. Helena.', 'Her name is Rahima S.']);
    expect(texts('The bus leaves from 2660 Tulare St. It arrives at noon.')).toEqual(['The bus leaves from 2660 Tulare St.', 'It arrives at noon.']);
    expect(texts('Meet Dr. Who at No. 5 Main St. and bring a pen.')).toEqual(['Meet Dr. Who at No. 5 Main St. and bring a pen.']);
  });

  it('keeps addresses whole, with punctuation after an abbreviation', () => {
    expect(texts('The address is 520 8th Ave. - Personal Valet. The admission is $35.')).toEqual(['The address is 520 8th Ave. - Personal Valet.', 'The admission is $35.']);
  });

  it('never breaks inside a kept slot value, and keeps the break after one', () => {
    const v = 'Arc The. Hotel Washington D.C.';
    expect(texts('Hotel is booked at Arc The. Hotel Washington D.C. Check in is on March 1st.', [v])).toEqual([
      'Hotel is booked at Arc The. Hotel Washington D.C.',
      'Check in is on March 1st.',
    ]);
    // Without the value, ICU's break after "The." stands: the value is what tells them apart.
    expect(texts('Hotel is booked at Arc The. Hotel Washington D.C. Check in is on March 1st.')[0]).toBe('Hotel is booked at Arc The.');
  });

  it('adds the break ICU misses before a digit', () => {
    expect(texts('I found it. 4:30 pm works.')).toEqual(['I found it.', '4:30 pm works.']);
    expect(texts('It is at No. 5 Main Street.')).toEqual(['It is at No. 5 Main Street.']);
  });

  it('gives offsets into the text, trimmed, dropping empty pieces', () => {
    const text = '  Great.  Anything else?\n\nBye. ';
    const spans = splitSentences(text);
    expect(spans.map((s) => s.text)).toEqual(['Great.', 'Anything else?', 'Bye.']);
    for (const s of spans) expect(text.slice(s.start, s.end)).toBe(s.text);
    expect(splitSentences('   ')).toEqual([]);
    expect(splitSentences('no final period')).toEqual([{ text: 'no final period', start: 0, end: 15 }]);
  });
});
