import { Tokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { ByteLevelBpe } from '../../src/nli/byte-level-bpe.js';
import { SegmentEncoder } from '../../src/nli/segment-encoder.js';
import { PairTokenizer } from '../../src/nli/tokenizer.js';

// Our byte-level BPE (src/nli/byte-level-bpe.ts) stands in for the library's only where it gives the
// library's ids and the library would accept the file. The other tests use RoBERTa's whole
// vocabulary; these build a tiny tokenizer.json in RoBERTa's layout (the shipped file's top-level
// keys, a ByteLevel pre-tokenizer, RobertaProcessing) so the cases that file never meets can be made.

/** GPT-2's byte-to-character table, as ByteLevel writes bytes: printable Latin-1 stands for itself, the rest for 256 + n. */
const BYTE_CHARS: string[] = (() => {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let n = 0;
  return Array.from({ length: 256 }, (_, b) => String.fromCharCode(printable(b) ? b : 256 + n++));
})();

const SPECIALS = ['<s>', '<pad>', '</s>', '<unk>'];

/**
 * Merges in the array format of newer files. "a a" has the lowest rank, so a run of a's has several
 * overlapping pairs of equal rank (the leftmost is merged first); "Ġ" is the space byte.
 */
const MERGES: [string, string][] = [
  ['a', 'a'],
  ['Ġ', 'a'],
  ['aa', 'aa'],
  ['Ġ', 'aa'],
  ['aa', 'a'],
];

/** config.json fields of a RoBERTa model: pad_token_id given, so opening looks up no token. */
const ROBERTA_CONFIG = { model_type: 'roberta', max_position_embeddings: 514, pad_token_id: 1 };

/**
 * A tiny byte-level BPE tokenizer.json: every byte but NUL (its character 'Ā' is left out, so "\0"
 * has no token and goes to the library, which gives <unk>), the tokens of MERGES. `model` overrides
 * fields of the model.
 */
function tinyTokenizerJson(model: Record<string, unknown> = {}): Record<string, unknown> {
  const vocab: Record<string, number> = {};
  const add = (token: string) => {
    vocab[token] = Object.keys(vocab).length;
  };
  for (const t of SPECIALS) add(t);
  for (const c of BYTE_CHARS.slice(1)) add(c);
  for (const [left, right] of MERGES) add(left + right);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((content, id) => ({ id, special: true, content, single_word: false, lstrip: false, rstrip: false, normalized: true })),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true },
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 0], trim_offsets: true, add_prefix_space: false },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', fuse_unk: false, byte_fallback: false, vocab, merges: MERGES, ...model },
  };
}

describe('a tokenizer.json the library refuses', () => {
  it('fails when the pair tokenizer is built, not at the first text that needs the library', () => {
    // As it is, the tiny file opens, with our BPE (the library is not built for that).
    expect(new PairTokenizer(tinyTokenizerJson(), {}, ROBERTA_CONFIG).encoder.ownBpe).toBe(true);
    for (const key of ['decoder', 'normalizer', 'post_processor', 'pre_tokenizer']) {
      const json = tinyTokenizerJson();
      delete json[key];
      expect(() => new PairTokenizer(json, {}, ROBERTA_CONFIG), key).toThrow(`Tokenizer must contain a "${key}" property`);
    }
    const noAddedTokens = tinyTokenizerJson();
    delete noAddedTokens.added_tokens;
    expect(() => new PairTokenizer(noAddedTokens, {}, ROBERTA_CONFIG)).toThrow();
    const unknownDecoder = { ...tinyTokenizerJson(), decoder: { type: 'NoSuchDecoder' } };
    expect(() => new PairTokenizer(unknownDecoder, {}, ROBERTA_CONFIG)).toThrow('Unknown Decoder type: NoSuchDecoder');
  });
});

describe('our byte-level BPE against the library on a tiny vocabulary', () => {
  /** A byte without a token, runs of equal-rank overlapping pairs, a leading space, both mixed. */
  const TEXTS = ['\0', 'aaaaa', ' aaa a', 'a\0a'];

  it("gives the library's ids: ours where every token is in the vocabulary, the library's where one is not (with an unk token or without)", () => {
    for (const unk of ['<unk>', null]) {
      const json = tinyTokenizerJson({ unk_token: unk });
      const library = new Tokenizer(json, {});
      const tok = new PairTokenizer(json, {}, ROBERTA_CONFIG);
      expect(tok.encoder.ownBpe).toBe(true);
      for (const text of TEXTS) {
        expect([unk, text, tok.textIds(text)]).toEqual([unk, text, library.encode(text, { add_special_tokens: false }).ids]);
        expect([unk, text, tok.encodePair(text, ' aaa').ids]).toEqual([unk, text, library.encode(text, { text_pair: ' aaa' }).ids]);
      }
    }
    // What the texts exercise, in the library's own tokens: the leftmost of equal-rank pairs merges
    // first (rightmost first would give a + aaaa), and NUL becomes <unk> or nothing.
    const library = new Tokenizer(tinyTokenizerJson(), {});
    expect(library.tokenize('aaaaa')).toEqual(['aaaa', 'a']);
    expect(library.tokenize(' aaa a')).toEqual(['Ġaa', 'a', 'Ġa']);
    expect(library.tokenize('a\0a')).toEqual(['a', '<unk>', 'a']);
    expect(new Tokenizer(tinyTokenizerJson({ unk_token: null }), {}).tokenize('a\0a')).toEqual(['a', 'a']);
  });

  it('steps aside where it would not give the library ids: byte fallback, ignore_merges, suffixes, a merge of three parts', () => {
    expect(ByteLevelBpe.fromTokenizerJson(tinyTokenizerJson() as object)).toBeDefined();
    const variants: [string, Record<string, unknown>][] = [
      ['byte_fallback', { byte_fallback: true }],
      ['ignore_merges', { ignore_merges: true }],
      ['end_of_word_suffix', { end_of_word_suffix: '</w>' }],
      ['continuing_subword_suffix', { continuing_subword_suffix: '##' }],
      ['a string merge of three parts', { merges: ['a a', 'Ġ a', 'a b c'] }],
    ];
    for (const [name, model] of variants) {
      const json = tinyTokenizerJson(model);
      expect(ByteLevelBpe.fromTokenizerJson(json as object), name).toBeUndefined();
      expect(new SegmentEncoder(json, {}).ownBpe, name).toBe(false);
    }
  });

  it('steps aside where the merges mix the two formats, which the library reads by the first merge', () => {
    // After a pair, the library never matches a string merge: " a" stays Ġ + a, where ours merged "Ġ a".
    const stringAfterPair = tinyTokenizerJson({ merges: [['a', 'a'], 'Ġ a', ['aa', 'aa'], ['Ġ', 'aa'], ['aa', 'a']] });
    expect(ByteLevelBpe.fromTokenizerJson(stringAfterPair as object)).toBeUndefined();
    const tok = new PairTokenizer(stringAfterPair, {}, ROBERTA_CONFIG);
    expect(tok.encoder.ownBpe).toBe(false);
    const library = new Tokenizer(stringAfterPair, {});
    expect(library.tokenize(' aaa a')).toEqual(['Ġaa', 'a', 'Ġ', 'a']);
    expect(tok.textIds(' aaa a')).toEqual(library.encode(' aaa a', { add_special_tokens: false }).ids);
    // After a string, the library fails on a pair (it splits every merge as a string): at open.
    const pairAfterString = tinyTokenizerJson({ merges: ['a a', ['Ġ', 'a']] });
    expect(ByteLevelBpe.fromTokenizerJson(pairAfterString as object)).toBeUndefined();
    expect(() => new PairTokenizer(pairAfterString, {}, ROBERTA_CONFIG)).toThrow();
  });
});
