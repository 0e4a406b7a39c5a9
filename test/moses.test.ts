// Expected values were traced by hand through sacremoses' English rules (MosesTokenizer.tokenize
// and MosesDetokenizer.tokenize with default arguments); each case names the rule it pins.
import { describe, expect, it } from 'vitest';
import { mosesDetokenize, mosesTokenize } from '../src/metrics/text/moses.js';

describe('mosesTokenize (sacremoses en defaults)', () => {
  it('pads punctuation outside IsAlnum and splits a comma not between digits', () => {
    // PAD_NOT_ISALNUM pads "!" ; COMMA_SEPARATE_1 turns "o," into "o , "
    expect(mosesTokenize('Hello, world!')).toEqual(['Hello', ',', 'world', '!']);
  });

  it('keeps commas inside numbers and splits the final period', () => {
    // COMMA_SEPARATE_* need a non-number on one side; "pounds." is the last token and not a prefix
    expect(mosesTokenize('It costs 5,300 pounds.')).toEqual(['It', 'costs', '5,300', 'pounds', '.']);
  });

  it('splits English clitics off to the right and XML-escapes the apostrophe', () => {
    // EN_SPECIFIC_4: letter ' letter -> "letter 'letter"; escape_xml: ' -> &apos;
    expect(mosesTokenize("I'm sure they're here, aren't they?")).toEqual([
      'I', '&apos;m', 'sure', 'they', '&apos;re', 'here', ',', 'aren', '&apos;t', 'they', '?',
    ]);
    expect(mosesTokenize("I'm", { escape: false })).toEqual(['I', "'m"]);
  });

  it('splits an apostrophe after a space as its own token', () => {
    // EN_SPECIFIC_2: non-letter ' letter -> "x ' letter" (so "i 'm" stays three tokens)
    expect(mosesTokenize("i 'm here", { escape: false })).toEqual(['i', "'", 'm', 'here']);
  });

  it('keeps periods of nonbreaking prefixes and of dotted abbreviations', () => {
    // "Mr" is in the prefix list; "p.m" contains a period and a letter; "left." is final -> split
    expect(mosesTokenize('Mr. Smith arrived at 5 p.m. Then he left.')).toEqual([
      'Mr.', 'Smith', 'arrived', 'at', '5', 'p.m.', 'Then', 'he', 'left', '.',
    ]);
  });

  it('keeps a period when the next word starts lower-case (matters for lower-cased MultiWOZ text)', () => {
    expect(mosesTokenize('the hotel. thanks')).toEqual(['the', 'hotel.', 'thanks']);
    // ...but splits it before an upper-case word
    expect(mosesTokenize('the hotel. Thanks')).toEqual(['the', 'hotel', '.', 'Thanks']);
  });

  it('treats numeric-only prefixes as nonbreaking only before a number', () => {
    // "No #NUMERIC_ONLY#" in the prefix file
    expect(mosesTokenize('No. 5 is here')).toEqual(['No.', '5', 'is', 'here']);
    expect(mosesTokenize('No. That is wrong')).toEqual(['No', '.', 'That', 'is', 'wrong']);
  });

  it('keeps an ellipsis together through the DOTMULTI protection', () => {
    expect(mosesTokenize('wait... what')).toEqual(['wait', '...', 'what']);
  });

  it('pads symbols and escapes & | [ ] < > "', () => {
    expect(mosesTokenize('cost: $5 & more|less')).toEqual(['cost', ':', '$', '5', '&amp;', 'more', '&#124;', 'less']);
    expect(mosesTokenize('[x] <b> "q"')).toEqual(['&#91;', 'x', '&#93;', '&lt;', 'b', '&gt;', '&quot;', 'q', '&quot;']);
  });

  it('leaves hyphens alone by default and splits them as @-@ when aggressive', () => {
    expect(mosesTokenize('a well-known e-mail')).toEqual(['a', 'well-known', 'e-mail']);
    expect(mosesTokenize('a well-known e-mail', { aggressiveDashSplits: true })).toEqual([
      'a', 'well', '@-@', 'known', 'e', '@-@', 'mail',
    ]);
  });

  it("splits a sentence-final .' (TRAILING_DOT_APOSTROPHE)", () => {
    expect(mosesTokenize("He said 'stop.'", { escape: false })).toEqual(['He', 'said', "'", 'stop', '.', "'"]);
  });

  it('collapses whitespace (including Python-only whitespace) and drops control characters', () => {
    // \x1c is whitespace to Python's \s but not to JavaScript's
    expect(mosesTokenize('  a\t\x1cb\x01c  ')).toEqual(['a', 'bc']);
  });

  it('splits CJK ideographs apart: the Perl property lists behind sacremoses lack them', () => {
    // Han characters are not in sacremoses' IsAlnum, so PAD_NOT_ISALNUM pads each one
    expect(mosesTokenize('Tokyo is 東京 city')).toEqual(['Tokyo', 'is', '東', '京', 'city']);
  });

  it('returns the joined string with returnStr', () => {
    expect(mosesTokenize('Hello, world!', { returnStr: true })).toBe('Hello , world !');
  });
});

describe('mosesDetokenize (sacremoses en defaults)', () => {
  it('attaches closing punctuation to the left', () => {
    expect(mosesDetokenize(['Hello', ',', 'world', '!'])).toBe('Hello, world!');
  });

  it('attaches currency and openers to the right', () => {
    expect(mosesDetokenize(['it', 'is', '$', '5', '(', 'cheap', ')'])).toBe('it is $5 (cheap)');
  });

  it('unescapes XML and attaches English clitics to the left', () => {
    expect(mosesDetokenize(['I', '&apos;m', 'here', '&amp;', 'there'])).toBe("I'm here & there");
  });

  it('alternates double quotes between opening and closing', () => {
    expect(mosesDetokenize(['he', 'said', '"', 'hi', '"', 'to', 'me'])).toBe('he said "hi" to me');
  });

  it("attaches a lone ' after a word ending in s as a possessive", () => {
    expect(mosesDetokenize(['the', 'jones', "'", 'house'])).toBe("the jones' house");
  });

  it('a lone apostrophe after other words opens a quote', () => {
    expect(mosesDetokenize(['i', "'", 'm', 'here'])).toBe("i 'm here");
  });

  it('glues consecutive CJK tokens back together', () => {
    // is_cjk: a CJK token right after a token ending in a CJK character gets no space
    expect(mosesDetokenize(['Tokyo', 'is', '東', '京', 'city'])).toBe('Tokyo is 東京 city');
  });

  it('joins aggressive hyphen splits', () => {
    expect(mosesDetokenize(['a', 'well', '@-@', 'known'])).toBe('a well-known');
  });

  it('leaves a space after a colon inside a time (known Moses behaviour mwzeval inherits)', () => {
    // PAD_NOT_ISALNUM pads ":" -> [at, 10, :, 15]; the detokenizer attaches ":" to the left only
    expect(mosesDetokenize(mosesTokenize('at 10:15 today'))).toBe('at 10: 15 today');
  });

  it('re-attaches a currency symbol to the following number', () => {
    // "£" is padded as non-alphanumeric, then shifted right as a currency symbol (IsSc)
    expect(mosesTokenize('costs £5')).toEqual(['costs', '£', '5']);
    expect(mosesDetokenize(['costs', '£', '5'])).toBe('costs £5');
  });

  it('round-trips typical MultiWOZ system text into conventional spacing', () => {
    const text = 'there are 5 hotel that meet your criteria . is there a particular area you prefer ?';
    expect(mosesDetokenize(mosesTokenize(text))).toBe(
      'there are 5 hotel that meet your criteria. is there a particular area you prefer?',
    );
  });
});
