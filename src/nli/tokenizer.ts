import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { MissingResourceError } from '../util/errors.js';
import { capPairText } from './limits.js';

/** One encoded (premise, hypothesis) pair, ready to pad into a batch. */
export interface EncodedPair {
  ids: number[];
  /** How many premise tokens were dropped to fit the model maximum. */
  premiseTruncated: number;
  /** How many hypothesis tokens were dropped (only when the premise alone could not make room). */
  hypothesisTruncated: number;
}

export interface PairTokenizerOptions {
  /** Upper bound on the encoded length, special tokens included; defaults to the model's maximum. */
  maxLength?: number;
}

/**
 * RoBERTa pair encoding `<s> premise </s></s> hypothesis </s>` with truncation that shortens the
 * premise first: in our use the premise is a whole system turn and the hypothesis a short template,
 * so the hypothesis carries the claim being tested and must survive intact whenever possible.
 */
export class PairTokenizer {
  readonly maxLength: number;
  readonly padId: number;
  private readonly clsId: number;
  private readonly sepId: number;
  private readonly tokenizer: Tokenizer;
  // System turns repeat across many candidate hypotheses; encoding each text once saves most BPE work.
  private readonly memo = new Map<string, number[]>();
  private static readonly MEMO_LIMIT = 50_000;

  constructor(tokenizerJson: object, tokenizerConfig: object, modelConfig: Record<string, unknown> = {}, opts: PairTokenizerOptions = {}) {
    this.tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
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
    const pad = typeof modelConfig.pad_token_id === 'number' ? modelConfig.pad_token_id : this.tokenizer.token_to_id('<pad>');
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
    const id = this.tokenizer.token_to_id(token);
    if (id === undefined) throw new Error(`tokenizer has no ${token} token: not a RoBERTa tokenizer`);
    return id;
  }

  /** Token ids of a text without special tokens (memoised). */
  textIds(text: string): number[] {
    const known = this.memo.get(text);
    if (known) return known;
    const ids = this.tokenizer.encode(text, { add_special_tokens: false }).ids;
    if (this.memo.size >= PairTokenizer.MEMO_LIMIT) this.memo.clear();
    this.memo.set(text, ids);
    return ids;
  }

  encodePair(premise: string, hypothesis: string): EncodedPair {
    // Both sides are cut to their first MAX_PAIR_TEXT_CHARS characters before tokenizing: far more
    // than the model's 512 tokens, so the kept tokens are the same, and a 50 MB utterance never
    // reaches the tokenizer (or its memo) whole.
    let p = this.textIds(capPairText(premise));
    let h = this.textIds(capPairText(hypothesis));
    const room = this.maxLength - 4; // <s> ... </s></s> ... </s>
    let premiseTruncated = 0;
    let hypothesisTruncated = 0;
    if (p.length + h.length > room) {
      const keepP = Math.max(0, room - h.length);
      premiseTruncated = p.length - keepP;
      p = p.slice(0, keepP);
      if (p.length + h.length > room) {
        const keepH = room - p.length;
        hypothesisTruncated = h.length - keepH;
        h = h.slice(0, keepH);
      }
    }
    const ids = new Array<number>(p.length + h.length + 4);
    let k = 0;
    ids[k++] = this.clsId;
    for (const t of p) ids[k++] = t;
    ids[k++] = this.sepId;
    ids[k++] = this.sepId;
    for (const t of h) ids[k++] = t;
    ids[k++] = this.sepId;
    return { ids, premiseTruncated, hypothesisTruncated };
  }

  /** The library's own pair encoding, untruncated: used to check our assembly matches it. */
  referencePairIds(premise: string, hypothesis: string): number[] {
    return this.tokenizer.encode(premise, { text_pair: hypothesis }).ids;
  }
}

