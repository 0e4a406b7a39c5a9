import { createRequire } from 'node:module';
import type { Tokenizer } from '@huggingface/tokenizers';
import { BoundedMemo } from './bounded-memo.js';
import { ByteLevelBpe } from './byte-level-bpe.js';

/**
 * GPT-2's pre-tokenization, the one ByteLevel applies (`use_regex`): contractions, runs of letters,
 * of digits or of other symbols (each with at most one leading space), and whitespace. The library
 * splits a text with this pattern and runs BPE on each piece on its own, so a piece's ids never
 * depend on its neighbours.
 */
const PRE_TOKEN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/**
 * Where a text is cut into sentences: at a single space after . ! or ? and before a non-space. No
 * piece of PRE_TOKEN crosses a space that has a non-space on both sides (only a piece's first
 * character may be a space, and runs of whitespace stop short of a non-space), so the pieces of a
 * text are the pieces of its sentences, the later ones keeping their leading space.
 */
const SENTENCE_END = /[.!?] (?=\S)/g;

/**
 * Longest pre-token, in UTF-16 units, handed to a BPE at once. BPE takes time quadratic in a piece's
 * length (a 1,000-letter word cost 50 ms, a 60,000-letter one seconds, blocking the server), so a
 * longer run of letters, digits, symbols or whitespace is encoded in slices of this many units (one
 * less where the cut would part a surrogate pair, whose halves alone would each become U+FFFD).
 * Pre-tokens of at most LONG_PIECE_CHARS units (every word of natural text) are never cut. A longer
 * one gets the library's ids exactly when the library's encoding of the whole run has no token that
 * spans a cut (our BPE never merges across one, and where the library does not either, each slice
 * merges as the library merges that part of the run); where it does, the ids there differ.
 */
export const LONG_PIECE_CHARS = 128;

/**
 * The library's tokenizers by the very objects they were built from: building one (its BPE maps of
 * 50,000 merges) costs most of a second, and PairTokenizer.fromFiles hands the same parsed objects to
 * every runner a process opens from the same files. A library tokenizer keeps nothing of a text
 * but its BPE cache of words, so sharing one changes no ids; each SegmentEncoder keeps its own memos.
 */
const libraries = new WeakMap<object, WeakMap<object, Tokenizer>>();

/**
 * The library's Tokenizer class, loaded on first need: where our BPE applies (every RoBERTa-style
 * model) a run never builds the library, and compiling its 100 KB module cost every model-backed
 * start, and every tokenizer thread, about 15 ms of CPU. Its CommonJS build, which a synchronous
 * getter can load; the package ships both builds of the same code.
 */
let tokenizerClass: typeof Tokenizer | undefined;

function libraryClass(): typeof Tokenizer {
  tokenizerClass ??= (createRequire(import.meta.url)('@huggingface/tokenizers') as typeof import('@huggingface/tokenizers')).Tokenizer;
  return tokenizerClass;
}

function libraryTokenizer(tokenizerJson: object, tokenizerConfig: object): Tokenizer {
  let byConfig = libraries.get(tokenizerJson);
  if (!byConfig) libraries.set(tokenizerJson, (byConfig = new WeakMap()));
  let built = byConfig.get(tokenizerConfig);
  if (!built) byConfig.set(tokenizerConfig, (built = new (libraryClass())(tokenizerJson, tokenizerConfig)));
  return built;
}

/**
 * Our BPE by the parsed tokenizer.json it was built from, for the same reason as `libraries`: a
 * process that opens runners again and again builds the merge ranks once. Null where it does not apply.
 */
const bpes = new WeakMap<object, ByteLevelBpe | null>();

function byteLevelBpe(tokenizerJson: object): ByteLevelBpe | undefined {
  let bpe = bpes.get(tokenizerJson);
  if (bpe === undefined) bpes.set(tokenizerJson, (bpe = ByteLevelBpe.fromTokenizerJson(tokenizerJson) ?? null));
  return bpe ?? undefined;
}

interface TokenizerJson {
  normalizer?: unknown;
  pre_tokenizer?: { type?: string; add_prefix_space?: boolean; use_regex?: boolean } | null;
  added_tokens?: { content: string }[];
}

/**
 * Token ids of texts (no special tokens), memoized per sentence and per pre-token. The library
 * re-runs its whole pipeline on every text (added-token split, regex, byte mapping, an LRU lookup
 * per word), so a data set's worth of turns costs seconds. Sentences repeat across texts (a context
 * premise is the user turn, the slot description and the system turn, each seen before) and words
 * far more, so encoding each distinct piece once and concatenating gives the same ids for a
 * fraction of the work.
 *
 * Only where that is exactly the library's result: a ByteLevel pre-tokenizer with the regex and
 * no prefix space, no normalizer (nor the config's space removal or lowercasing), and a text
 * without any added token's content (the library splits those out first, with their own stripping
 * rules). Anything else goes to the library whole.
 * test/tokenizer-segments.test.ts checks the equality on every text of the SGD test set.
 */
export class SegmentEncoder {
  /** The library tokenizer, built on first need (see `library`). */
  private built: Tokenizer | undefined;
  /**
   * Our BPE of a pre-token where it is exactly the library's (byte-level-bpe.ts): with it a process
   * that only encodes words never builds the library's tables.
   */
  private readonly bpe: ByteLevelBpe | undefined;
  private readonly wordwise: boolean;
  private readonly addedTokens: string[];
  /** Bytes of pre-tokens and of sentences kept; past these a memo starts over (a long-running server's bound). */
  static readonly WORD_BYTES = 8 * 2 ** 20;
  static readonly SENTENCE_BYTES = 8 * 2 ** 20;
  private readonly words = new BoundedMemo(SegmentEncoder.WORD_BYTES);
  private readonly sentences = new BoundedMemo(SegmentEncoder.SENTENCE_BYTES);
  private scratch = new Int32Array(1024);

  constructor(
    private readonly tokenizerJson: object,
    private readonly tokenizerConfig: object,
  ) {
    const json = tokenizerJson as TokenizerJson;
    const pre = json.pre_tokenizer;
    const cfg = tokenizerConfig as { remove_space?: boolean; do_lowercase_and_remove_accent?: boolean };
    this.wordwise =
      (json.normalizer === null || json.normalizer === undefined) &&
      cfg.remove_space !== true &&
      cfg.do_lowercase_and_remove_accent !== true &&
      pre?.type === 'ByteLevel' &&
      pre.add_prefix_space !== true &&
      pre.use_regex !== false;
    this.addedTokens = (json.added_tokens ?? []).map((t) => t.content).filter((c) => typeof c === 'string' && c !== '');
    this.bpe = this.wordwise ? byteLevelBpe(tokenizerJson) : undefined;
  }

  /** The underlying library tokenizer (pair encodings for checks, token lookups). */
  get library(): Tokenizer {
    return (this.built ??= libraryTokenizer(this.tokenizerJson, this.tokenizerConfig));
  }

  /** A token's id as `library.token_to_id` gives it, without building the library where our BPE can say. */
  tokenId(token: string): number | undefined {
    return this.bpe ? this.bpe.tokenId(token) : this.library.token_to_id(token);
  }

  /** Whether words go to our byte-level BPE (byte-level-bpe.ts) rather than the library's. */
  get ownBpe(): boolean {
    return this.bpe !== undefined;
  }

  /** Whether texts are encoded piece by piece (else each goes to the library whole). */
  get memoizesWords(): boolean {
    return this.wordwise;
  }

  /**
   * Ids of `text` exactly as `library.encode(text, { add_special_tokens: false })` gives them (but
   * for runs longer than LONG_PIECE_CHARS, see there). With `maxTokens`, encoding may stop once that
   * many ids are made: the ids then start with the text's first `maxTokens` and may be cut anywhere
   * after them (a model that reads 512 tokens needs no more, and a long text costs no more than its
   * first 512 tokens). The array may be shared with the memo: never modify it.
   */
  encode(text: string, maxTokens = Number.POSITIVE_INFINITY): Int32Array {
    if (!this.wordwise || this.hasAddedToken(text)) return Int32Array.from(this.libraryIds(text));
    SENTENCE_END.lastIndex = 0;
    let m = SENTENCE_END.exec(text);
    // One sentence: its memoized array itself (callers never modify ids).
    if (m === null) return this.sentenceIds(text, maxTokens);
    let n = 0;
    let from = 0;
    for (;;) {
      const to = m === null ? text.length : m.index + 1;
      n = this.append(this.sentenceIds(text.slice(from, to), maxTokens - n), n);
      if (m === null || n >= maxTokens) break;
      from = to;
      m = SENTENCE_END.exec(text);
    }
    return this.scratch.slice(0, n);
  }

  /**
   * A sentence's ids (with its leading space, if any), memoized; its words memoized on a miss. A
   * sentence stopped at `maxTokens` is not memoized (its ids are not all of it).
   */
  private sentenceIds(sentence: string, maxTokens = Number.POSITIVE_INFINITY): Int32Array {
    const known = this.sentences.get(sentence);
    if (known !== undefined) return known;
    const pieces = sentence.match(PRE_TOKEN) ?? [];
    const parts: Int32Array[] = [];
    let total = 0;
    let whole = true;
    pieces: for (const piece of pieces) {
      for (let at = 0; at < piece.length; ) {
        if (total >= maxTokens) {
          whole = false;
          break pieces;
        }
        const end = sliceEnd(piece, at);
        const ids = this.wordIds(at === 0 && end === piece.length ? piece : piece.slice(at, end));
        parts.push(ids);
        total += ids.length;
        at = end;
      }
    }
    const ids = concatIds(parts, total);
    if (!whole) return ids;
    this.sentences.set(sentence, ids);
    return ids;
  }

  private wordIds(piece: string): Int32Array {
    let ids = this.words.get(piece);
    if (ids === undefined) {
      ids = Int32Array.from(this.bpeIds(piece) ?? this.libraryIds(piece));
      this.words.set(piece, ids);
    }
    return ids;
  }

  private append(ids: Int32Array, n: number): number {
    if (n + ids.length > this.scratch.length) {
      const grown = new Int32Array(Math.max(this.scratch.length * 2, n + ids.length));
      grown.set(this.scratch.subarray(0, n));
      this.scratch = grown;
    }
    this.scratch.set(ids, n);
    return n + ids.length;
  }

  /**
   * A piece's ids by our BPE, the piece split by the library's pattern first as the library would
   * split it (a pre-token, or a slice of one at LONG_PIECE_CHARS, is a single match); undefined
   * where our BPE does not apply or meets a token outside the vocabulary.
   */
  private bpeIds(piece: string): number[] | undefined {
    if (!this.bpe) return undefined;
    const out: number[] = [];
    for (const part of piece.match(PRE_TOKEN) ?? []) {
      const ids = this.bpe.ids(part);
      if (ids === undefined) return undefined;
      for (const id of ids) out.push(id);
    }
    return out;
  }

  private libraryIds(text: string): number[] {
    return this.library.encode(text, { add_special_tokens: false }).ids;
  }

  private hasAddedToken(text: string): boolean {
    for (const t of this.addedTokens) if (text.includes(t)) return true;
    return false;
  }
}

/**
 * Where the slice of `piece` from `at` ends: LONG_PIECE_CHARS units on, or the piece's end, but never
 * right after a high surrogate. Cut between the two halves of a pair (an emoji), each half would be
 * a lone surrogate, which UTF-8 encodes as U+FFFD (EF BF BD) where the library encodes the
 * character's own four bytes.
 */
function sliceEnd(piece: string, at: number): number {
  let end = Math.min(piece.length, at + LONG_PIECE_CHARS);
  if (end < piece.length) {
    const unit = piece.charCodeAt(end - 1);
    if (unit >= 0xd800 && unit <= 0xdbff) end -= 1;
  }
  return end;
}

/** Token-id arrays end to end in one array (`total` is the sum of their lengths). */
export function concatIds(parts: readonly Int32Array[], total: number): Int32Array<ArrayBuffer> {
  const ids = new Int32Array(total);
  let at = 0;
  for (const p of parts) {
    ids.set(p, at);
    at += p.length;
  }
  return ids;
}
