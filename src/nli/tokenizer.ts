import { readFileSync } from 'node:fs';
import { MissingResourceError } from '../util/errors.js';
import { filesStamp, StampedCache } from '../util/stamped-cache.js';
import { BoundedMemo } from './bounded-memo.js';
import { capPairText } from './limits.js';
import { modelFamily, positionsLimit } from './family.js';
import { pairEncodingOf, type PairEncoding } from './pair-encoding.js';
import { SegmentEncoder } from './segment-encoder.js';

/** One encoded (premise, hypothesis) pair, ready to pad into a batch. */
export interface EncodedPair {
  ids: number[];
  /** The segment id of every token (token_type_ids), as the model's post-processor sets them. */
  typeIds: number[];
  /**
   * Premise tokens dropped to fit the model maximum: more than 0 exactly when the premise was cut,
   * counted among its first maxLength tokens only (encoding a side stops there).
   */
  premiseTruncated: number;
  /** Hypothesis tokens dropped (only when the premise alone could not make room), counted as premiseTruncated. */
  hypothesisTruncated: number;
}

export interface PairTokenizerOptions {
  /** Upper bound on the encoded length, special tokens included; defaults to the model's maximum. */
  maxLength?: number;
}

/**
 * How many premise tokens a pair keeps within `maxLength`, `specials` of which the pair encoding
 * adds: the premise is cut first, and the hypothesis only when the premise alone cannot make room
 * (keptHypothesis).
 */
export function keptPremise(premiseLength: number, hypothesisLength: number, maxLength: number, specials: number): number {
  const room = maxLength - specials;
  return premiseLength + hypothesisLength <= room ? premiseLength : Math.max(0, room - hypothesisLength);
}

/** How many hypothesis tokens a pair keeps, given the premise tokens it keeps. */
export function keptHypothesis(hypothesisLength: number, keptPremiseLength: number, maxLength: number, specials: number): number {
  return Math.min(hypothesisLength, maxLength - specials - keptPremiseLength);
}

/**
 * Tokenizer files as parsed, by path, kept while the file's size and mtime stay the same (the
 * project's StampedCache, one entry a path). A process that opens runners again and again (the warm
 * `todeval stdio` process, a library user, the tests) parses a 2 MB tokenizer.json once and, as the
 * same object, builds the library's BPE from it once (SegmentEncoder), not at each open; a file that
 * changed is parsed again. The objects are shared: never modified.
 */
const parsedFiles = new StampedCache<object>();

function parsedTokenizerFile(file: string): object {
  return parsedFiles.get(file, filesStamp([file]), () => JSON.parse(readFileSync(file, 'utf8')) as object);
}

/**
 * A model's pair encoding (its tokenizer's post-processor: `<s> premise </s></s> hypothesis </s>`
 * for RoBERTa, `[CLS] premise [SEP] hypothesis [SEP]` with segment ids 0 then 1 for BERT, ...) with
 * truncation that shortens the premise first: in our use the premise is a whole system turn and the
 * hypothesis a short template, so the hypothesis carries the claim being tested and must survive
 * intact whenever possible.
 *
 * Each side is encoded on its own and the two are joined with the special tokens, which is exactly
 * the library's pair encoding; so a text's ids are kept once per text (a system turn is the premise
 * of dozens of pairs, a template the hypothesis of hundreds).
 */
export class PairTokenizer {
  readonly maxLength: number;
  /**
   * The model's own limit (positions, the tokenizer's model_max_length, at most 512): maxLength
   * unless a shorter one was asked for, which changes the scores of long pairs and so joins the
   * model's signature (runner/lifecycle.ts).
   */
  readonly naturalMaxLength: number;
  readonly padId: number;
  /** The special tokens and segment ids of a pair, from the tokenizer's post-processor. */
  readonly pairEncoding: PairEncoding;
  /** config.json's model_type (family.ts). */
  readonly family: string;
  readonly encoder: SegmentEncoder;
  /** What the tokenizer was built from, so worker threads can build the same one. */
  readonly source: { tokenizerJson: object; tokenizerConfig: object };
  /** Bytes of texts and their ids kept; past this the memo starts over (a long-running server's bound). */
  static readonly MEMO_BYTES = 16 * 2 ** 20;
  private readonly memo = new BoundedMemo(PairTokenizer.MEMO_BYTES);
  /**
   * Texts this instance encoded itself, on the thread that owns it (not those `remember`ed from a
   * tokenizer thread): in a server, tokenizing done on the event loop, which /metrics shows.
   */
  encodedHere = 0;

  constructor(tokenizerJson: object, tokenizerConfig: object, modelConfig: Record<string, unknown> = {}, opts: PairTokenizerOptions = {}, file?: string) {
    this.encoder = new SegmentEncoder(tokenizerJson, tokenizerConfig);
    this.source = { tokenizerJson, tokenizerConfig };
    this.family = modelFamily(modelConfig);
    this.pairEncoding = pairEncodingOf(tokenizerJson, (t) => this.encoder.tokenId(t), file);
    const cfg = tokenizerConfig as { model_max_length?: number };
    const fromModel = positionsLimit(this.family, modelConfig) ?? Number.POSITIVE_INFINITY;
    const fromTokenizer = cfg.model_max_length && cfg.model_max_length < 1e9 ? cfg.model_max_length : Number.POSITIVE_INFINITY;
    const natural = Math.min(fromModel, fromTokenizer, 512);
    this.naturalMaxLength = natural;
    this.maxLength = Math.min(opts.maxLength ?? natural, natural);
    if (this.maxLength < this.pairEncoding.specials + 1) throw new Error(`maxLength ${this.maxLength} leaves no room for a pair`);
    this.padId = padIdOf(tokenizerJson, modelConfig, (t) => this.encoder.tokenId(t));
    // Without our BPE every word goes to the library: build it now, so that a file it refuses (a key
    // missing, an unknown decoder) fails here, at open, not at the first turn or never. Ours applies
    // only where ByteLevelBpe.fromTokenizerJson found those keys and decoder; pairEncodingOf above
    // has refused a post-processor todeval does not know, in its own words.
    if (!this.encoder.ownBpe) void this.encoder.library;
  }

  /**
   * The token limit the model's signature carries (NliModelSignature.maxLength): maxLength where it
   * is shorter than the model's own, else undefined, so a default run signs nothing new.
   */
  get signedMaxLength(): number | undefined {
    return this.maxLength < this.naturalMaxLength ? this.maxLength : undefined;
  }

  static fromFiles(tokenizerPath: string, tokenizerConfigPath: string | undefined, modelConfig: Record<string, unknown> = {}, opts: PairTokenizerOptions = {}): PairTokenizer {
    const read = (file: string): object => {
      try {
        return parsedTokenizerFile(file);
      } catch (e) {
        throw new MissingResourceError(`cannot load tokenizer file (${(e as Error).message})`, { file });
      }
    };
    const tokJson = read(tokenizerPath);
    const tokCfg = tokenizerConfigPath ? read(tokenizerConfigPath) : {};
    return new PairTokenizer(tokJson, tokCfg, modelConfig, opts, tokenizerPath);
  }

  /**
   * Token ids of one side of a pair, without special tokens (memoised). Both sides are cut to
   * their first MAX_PAIR_TEXT_CHARS characters before tokenizing: far more than the model's 512
   * tokens, so the kept tokens are the same, and a 50 MB utterance never reaches the tokenizer
   * (or its memo) whole. The array is shared: never modify it.
   */
  ids(text: string): Int32Array {
    const key = capPairText(text);
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    this.encodedHere++;
    // Only the first maxLength ids of a side can reach the model (keptPremise, keptHypothesis).
    const ids = this.encoder.encode(key, this.maxLength);
    this.remember(key, ids);
    return ids;
  }

  /** The memoised ids of a side, if it was encoded already. */
  known(text: string): Int32Array | undefined {
    return this.memo.get(capPairText(text));
  }

  /** Keep ids encoded elsewhere (a worker thread) for `text`, as `ids` would. */
  remember(text: string, ids: Int32Array): void {
    const key = capPairText(text);
    this.memo.set(key, ids);
  }

  /** Token ids of a text without special tokens, as a plain array (a copy). */
  textIds(text: string): number[] {
    return plainArray(this.ids(text));
  }

  encodePair(premise: string, hypothesis: string): EncodedPair {
    const p = this.ids(premise);
    const h = this.ids(hypothesis);
    const e = this.pairEncoding;
    const keepP = keptPremise(p.length, h.length, this.maxLength, e.specials);
    const keepH = keptHypothesis(h.length, keepP, this.maxLength, e.specials);
    const length = keepP + keepH + e.specials;
    const ids = new Int32Array(length);
    const typeIds = new Int32Array(length);
    writePair(e, p, keepP, h, keepH, ids, typeIds);
    return { ids: plainArray(ids), typeIds: plainArray(typeIds), premiseTruncated: p.length - keepP, hypothesisTruncated: h.length - keepH };
  }

  /** The library's own pair encoding, untruncated: used to check our assembly matches it. */
  referencePairIds(premise: string, hypothesis: string): number[] {
    return this.encoder.library.encode(premise, { text_pair: hypothesis }).ids;
  }
}

/**
 * The values of an Int32Array as a plain array. A loop, not Array.from: V8 takes a typed array
 * through the iterator protocol there, about 2.4 us for a 24-id row against 0.2 us this way, and
 * encodePair makes two arrays a pair.
 */
function plainArray(a: Int32Array): number[] {
  const out = new Array<number>(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i];
  return out;
}

/**
 * One pair's row: the encoding's special tokens around the first `keepP` premise ids and the first
 * `keepH` hypothesis ids, into `out` (room for them all); with `types`, each token's segment id too.
 * Returns the row's length. The runner packs every batch row through this.
 */
export function writePair(e: PairEncoding, p: Int32Array, keepP: number, h: Int32Array, keepH: number, out: Int32Array, types?: Int32Array): number {
  let k = 0;
  out.set(e.prefix, k);
  types?.set(e.prefixTypes, k);
  k += e.prefix.length;
  out.set(p.length === keepP ? p : p.subarray(0, keepP), k);
  types?.fill(e.premiseType, k, k + keepP);
  k += keepP;
  out.set(e.middle, k);
  types?.set(e.middleTypes, k);
  k += e.middle.length;
  out.set(h.length === keepH ? h : h.subarray(0, keepH), k);
  types?.fill(e.hypothesisType, k, k + keepH);
  k += keepH;
  out.set(e.suffix, k);
  types?.set(e.suffixTypes, k);
  return k + e.suffix.length;
}

/**
 * The padding id: config.json's pad_token_id, else the tokenizer's padding setting, else its
 * `<pad>` or `[PAD]` token, else 1 (RoBERTa's, what todeval always used). Padding is masked out,
 * so it only has to be a valid id.
 */
function padIdOf(tokenizerJson: object, config: Record<string, unknown>, tokenId: (token: string) => number | undefined): number {
  if (typeof config.pad_token_id === 'number') return config.pad_token_id;
  const padding = (tokenizerJson as { padding?: { pad_id?: number } | null }).padding;
  if (typeof padding?.pad_id === 'number') return padding.pad_id;
  return tokenId('<pad>') ?? tokenId('[PAD]') ?? 1;
}
