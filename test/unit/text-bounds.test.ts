import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitSentences } from '../../src/metrics/text/sentences.js';
import { ByteLevelBpe } from '../../src/nli/byte-level-bpe.js';
import { LONG_PIECE_CHARS } from '../../src/nli/segment-encoder.js';
import { PairTokenizer } from '../../src/nli/tokenizer.js';
import { MAX_TEXT_CHARS } from '../../src/util/text-limits.js';
import { TOKENIZER_DIR } from '../helpers/shared.js';

// Work per text is bounded by what a text can change, not by its length (issue 42: one /v1/nli body
// of 8 pairs x 60,000-letter words held /healthz 4 s; sentence granularity on 200,000-letter words
// took 18 s a turn). These check the bounds by what reaches the costly steps, never by a clock.

/** A 'word' of `n` letters that repeats no short pattern (BPE cannot merge it into a few tokens). */
const longWord = (n: number, seed = 0) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + ((i * 7919 + seed) % 26))).join('');

describe('text bounds', () => {
  it('splitSentences reads the first MAX_TEXT_CHARS characters only, and a long word there stays one sentence', () => {
    const text = `Sure. Q${longWord(200_000)}. Anything else?`;
    const spans = splitSentences(text);
    expect(spans.map((s) => s.text.slice(0, 10))).toEqual(['Sure.', `Q${longWord(9)}`]);
    expect(spans[1].end).toBe(MAX_TEXT_CHARS);
    // Under the cut nothing changes: the same sentences as before.
    expect(splitSentences(`Sure. Q${longWord(300)}. It is 4 pm. Okay? 5 more.`).map((s) => s.text.length)).toEqual([5, 302, 11, 5, 7]);
  });

  it('a tokenizer side: the BPE (ours or the library\'s) sees pieces of at most LONG_PIECE_CHARS characters, and encoding stops past maxLength tokens', () => {
    const tok = PairTokenizer.fromFiles(path.join(TOKENIZER_DIR, 'tokenizer.json'), path.join(TOKENIZER_DIR, 'tokenizer_config.json'));
    const library = tok.encoder.library;
    const seen: number[] = [];
    const encode = library.encode.bind(library);
    library.encode = ((text: string, opts?: object) => {
      seen.push(text.length);
      return encode(text, opts);
    }) as typeof library.encode;
    // RoBERTa's words go to our byte-level BPE (byte-level-bpe.ts), quadratic in a piece's length too.
    const bpeIds = ByteLevelBpe.prototype.ids;
    ByteLevelBpe.prototype.ids = function (this: ByteLevelBpe, preToken: string) {
      seen.push(preToken.length);
      return bpeIds.call(this, preToken);
    };
    let ids: Int32Array;
    try {
      ids = tok.ids(longWord(60_000, 1));
    } finally {
      ByteLevelBpe.prototype.ids = bpeIds;
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(Math.max(...seen)).toBeLessThanOrEqual(LONG_PIECE_CHARS);
    // Each piece gives at most LONG_PIECE_CHARS ids: encoding stopped at the first piece past maxLength.
    expect(ids.length).toBeGreaterThanOrEqual(tok.maxLength);
    expect(ids.length).toBeLessThan(tok.maxLength + LONG_PIECE_CHARS);
    expect(seen.reduce((a, b) => a + b, 0)).toBeLessThan((tok.maxLength + LONG_PIECE_CHARS) * LONG_PIECE_CHARS);
    // A pair of two such sides is the model's maximum, the premise cut first.
    expect(tok.encodePair(longWord(60_000, 2), longWord(60_000, 3)).ids).toHaveLength(tok.maxLength);
    // Natural text is untouched: the library's own ids.
    const sentence = 'I found 3 restaurants in the city centre. How about Tasty Grill?';
    expect(Array.from(tok.ids(sentence))).toEqual(encode(sentence, { add_special_tokens: false }).ids);
  });
});
