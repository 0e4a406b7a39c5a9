import { readFileSync } from 'node:fs';
import { MissingResourceError } from '../util/errors.js';
import { BoundedMemo } from './bounded-memo.js';
import { capPairText } from './limits.js';
import { SegmentEncoder } from './segment-encoder.js';

/** One encoded (premise, hypothesis) pair, ready to pad into a batch. */
export interface EncodedPair {
  ids: number[];
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

/** Special tokens around a pair: `<s> premise </s></s> hypothesis </s>`. */
export const PAIR_SPECIAL_TOKENS = 4;

/**
 * How many premise tokens a pair keeps within `maxLength`: the premise is cut first, and the
 * hypothesis only when the premise alone cannot make room (keptHypothesis).
 */
export function keptPremise(premiseLength: number, hypothesisLength: number, maxLength: number): number {
  const room = maxLength - PAIR_SPECIAL_TOKENS;
  return premiseLength + hypothesisLength <= room ? premiseLength : Math.max(0, room - hypothesisLength);
}

/** How many hypothesis tokens a pair keeps, given the premise tokens it keeps. */
export function keptHypothesis(hypothesisLength: number, keptPremiseLength: number, maxLength: number): number {
  return Math.min(hypothesisLength, maxLength - PAIR_SPECIAL_TOKENS - keptPremiseLength);
}

/**
 * RoBERTa pair encoding `<s> premise </s></s> hypothesis </s>` with truncation that shortens the
 * premise first: in our use the premise is a whole system turn and the hypothesis a short template,
 * so the hypothesis carries the claim being tested and must survive intact whenever possible.
 *
 * Each side is encoded on its own and the two are joined with the special tokens, which is exactly
 * the library's pair encoding (RobertaProcessing); so a text's ids are kept once per text (a system
 * turn is the premise of dozens of pairs, a template the hypothesis of hundreds).
 */
export class PairTokenizer {
  readonly maxLength: number;
  readonly padId: number;
  readonly clsId: number;
  readonly sepId: number;
  readonly encoder: SegmentEncoder;
  /** What the tokenizer was built from, so worker threads can build the same one. */
  readonly source: { tokenizerJson: object; tokenizerConfig: object };
  /** Bytes of texts and their ids kept; past this the memo starts over (a long-running server's bound). */
  static readonly MEMO_BYTES = 16 * 2 ** 20;
  private readonly memo = new BoundedMemo(PairTokenizer.MEMO_BYTES);

  constructor(tokenizerJson: object, tokenizerConfig: object, modelConfig: Record<string, unknown> = {}, opts: PairTokenizerOptions = {}) {
    this.encoder = new SegmentEncoder(tokenizerJson, tokenizerConfig);
    this.source = { tokenizerJson, tokenizerConfig };
    const cfg = tokenizerConfig as { model_max_length?: number };
    const positions = typeof modelConfig.max_position_embeddings === 'number' ? modelConfig.max_position_embeddings : undefined;
    // RoBERTa reserves two position slots (padding_idx + 1 offset), so 514 positions hold 512 tokens.
    const fromModel = positions !== undefined ? positions - 2 : Number.POSITIVE_INFINITY;
    const fromTokenizer = cfg.model_max_length && cfg.model_max_length < 1e9 ? cfg.model_max_length : Number.POSITIVE_INFINITY;
    const natural = Math.min(fromModel, fromTokenizer, 512);
    this.maxLength = Math.min(opts.maxLength ?? natural, natural);
    if (this.maxLength < 5) throw new Error(`maxLength ${this.maxLength} leaves no room for a pair`);
    this.clsId = this.requireToken('<s>');
    this.sepId = this.requireToken('</s>');
    const pad = typeof modelConfig.pad_token_id === 'number' ? modelConfig.pad_token_id : this.encoder.library.token_to_id('<pad>');
    this.padId = pad ?? 1;
  }

  static fromFiles(tokenizerPath: string, tokenizerConfigPath: string | undefined, modelConfig: Record<string, unknown> = {}, opts: PairTokenizerOptions = {}): PairTokenizer {
    const read = (file: string): object => {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as object;
      } catch (e) {
        throw new MissingResourceError(`cannot load tokenizer file (${(e as Error).message})`, { file });
      }
    };
    const tokJson = read(tokenizerPath);
    const tokCfg = tokenizerConfigPath ? read(tokenizerConfigPath) : {};
    return new PairTokenizer(tokJson, tokCfg, modelConfig, opts);
  }

  private requireToken(token: string): number {
    const id = this.encoder.library.token_to_id(token);
    if (id === undefined) throw new Error(`tokenizer has no ${token} token: not a RoBERTa tokenizer`);
    return id;
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
    return Array.from(this.ids(text));
  }

  encodePair(premise: string, hypothesis: string): EncodedPair {
    const p = this.ids(premise);
    const h = this.ids(hypothesis);
    const keepP = keptPremise(p.length, h.length, this.maxLength);
    const keepH = keptHypothesis(h.length, keepP, this.maxLength);
    const ids = new Array<number>(keepP + keepH + PAIR_SPECIAL_TOKENS);
    let k = 0;
    ids[k++] = this.clsId;
    for (let i = 0; i < keepP; i++) ids[k++] = p[i];
    ids[k++] = this.sepId;
    ids[k++] = this.sepId;
    for (let i = 0; i < keepH; i++) ids[k++] = h[i];
    ids[k++] = this.sepId;
    return { ids, premiseTruncated: p.length - keepP, hypothesisTruncated: h.length - keepH };
  }

  /** The library's own pair encoding, untruncated: used to check our assembly matches it. */
  referencePairIds(premise: string, hypothesis: string): number[] {
    return this.encoder.library.encode(premise, { text_pair: hypothesis }).ids;
  }
}
