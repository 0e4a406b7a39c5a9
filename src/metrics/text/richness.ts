/**
 * Lexical richness of system responses as mwzeval's `get_richness` reports it (Table 6 of
 * "Shades of BLEU"): tokens come from lexical_diversity's `tokenize`, n-gram counts are over
 * tokens within one response, entropies in bits over the whole corpus, MSTTR over all tokens
 * concatenated. Feed it responses already normalized with `normalizeResponse`.
 */
import { pyCollapseWhitespace } from './py-string.js';

export interface LexicalRichness {
  /** Shannon entropy (bits) of the unigram distribution. */
  entropy: number;
  /** mwzeval's bigram "conditional entropy" (bits), see `lexicalRichness`. */
  cond_entropy: number;
  /** Mean number of tokens per response. */
  avg_lengths: number;
  /** Mean segmental type-token ratio over consecutive 50-token windows. */
  msttr: number;
  num_unigrams: number;
  num_bigrams: number;
  num_trigrams: number;
  /** Number of responses and tokens counted (not in mwzeval's output; for reports). */
  num_responses: number;
  num_tokens: number;
}

// lexical_diversity removes these strings (in this order) anywhere in the text, not as tokens:
// "don't" becomes "dont" and "e-mail" becomes "email". "-LRB-"/"-RRB-" never match because "-"
// is removed before them, and "SYM" is matched case-sensitively before lower-casing.
const LD_PUNCTUATION = ['``', "''", "'", '.', ',', '?', '!', ')', '(', '%', '/', '-', '_', '-LRB-', '-RRB-', 'SYM', ':', ';'];

/**
 * lexical_diversity's `lex_div.tokenize`: strip its punctuation strings, collapse whitespace,
 * lower-case, split on single spaces. Leading or trailing whitespace therefore yields empty-string
 * tokens ("thank you ." -> ["thank", "you", ""]), and mwzeval counts them like any other token.
 */
export function ldTokenize(text: string): string[] {
  for (const p of LD_PUNCTUATION) text = text.replaceAll(p, '');
  return pyCollapseWhitespace(text).toLowerCase().split(' ');
}

/** lexical_diversity's `msttr`: whole-text TTR below window+1 tokens, else mean TTR of full windows. */
export function msttr(tokens: readonly string[], windowLength = 50): number {
  if (tokens.length < windowLength + 1) {
    return tokens.length === 0 ? 0 : new Set(tokens).size / tokens.length;
  }
  const segments = Math.floor(tokens.length / windowLength);
  let sum = 0;
  for (let s = 0; s < segments; s++) {
    const window = tokens.slice(s * windowLength, (s + 1) * windowLength);
    sum += new Set(window).size / window.length;
  }
  return sum / segments;
}

// Python's math.log(x, 2) is log(x)/log(2); Math.log2 can differ in the last bit.
const LN2 = Math.log(2);
const log2 = (x: number) => Math.log(x) / LN2;

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

interface ResponseGrams {
  tokens: string[];
  /** bigramKeys[i]: tokens i and i + 1. */
  bigramKeys: string[];
  trigramKeys: string[];
}

/** One response's tokens and n-gram keys (tokens never contain a space, so space-joined keys identify n-grams uniquely). */
function responseGrams(tokens: string[]): ResponseGrams {
  const bigramKeys: string[] = [];
  const trigramKeys: string[] = [];
  for (let i = 0; i + 1 < tokens.length; i++) bigramKeys.push(`${tokens[i]} ${tokens[i + 1]}`);
  for (let i = 0; i + 2 < tokens.length; i++) trigramKeys.push(`${tokens[i]} ${tokens[i + 1]} ${tokens[i + 2]}`);
  return { tokens, bigramKeys, trigramKeys };
}

/**
 * Richness of a list of responses. Definitions follow mwzeval exactly, including its
 * "conditional entropy": -sum over seen bigrams (h, w) of c(h,w)/N * log2(c(h,w)/c(h)), where c(h)
 * is h's unigram count (also counting h at the end of a response) and N the number of tokens.
 * Maps iterate in first-seen order like Python's Counter, so sums are added in the same order.
 */
export function lexicalRichness(responses: readonly string[]): LexicalRichness {
  const unigrams = new Map<string, number>();
  const bigrams = new Map<string, [string, number]>();
  const trigrams = new Set<string>();
  const allTokens: string[] = [];
  let totalLength = 0;

  // Systems repeat their responses (DAMD's 7,354 turns have 1,416 distinct ones): each distinct
  // response is tokenized and its n-gram keys built once; every occurrence is still counted in order.
  const split = new Map<string, ResponseGrams>();
  for (const response of responses) {
    let grams = split.get(response);
    if (grams === undefined) {
      grams = responseGrams(ldTokenize(response));
      split.set(response, grams);
    }
    const { tokens, bigramKeys, trigramKeys } = grams;
    for (const t of tokens) allTokens.push(t);
    totalLength += tokens.length;
    for (const t of tokens) bump(unigrams, t);
    for (let i = 0; i < bigramKeys.length; i++) {
      const key = bigramKeys[i];
      const seen = bigrams.get(key);
      if (seen) seen[1] += 1;
      else bigrams.set(key, [tokens[i], 1]);
    }
    for (const key of trigramKeys) trigrams.add(key);
  }

  const count = responses.length;
  const total = allTokens.length;
  let entropy = 0;
  for (const c of unigrams.values()) {
    const p = c / total;
    entropy += p * log2(p);
  }
  let condEntropy = 0;
  for (const [head, c] of bigrams.values()) {
    const cond = c / unigrams.get(head)!;
    const joint = c / total;
    condEntropy += joint * log2(cond);
  }

  return {
    entropy: -entropy,
    cond_entropy: -condEntropy,
    avg_lengths: count === 0 ? 0 : totalLength / count,
    msttr: msttr(allTokens, 50),
    num_unigrams: unigrams.size,
    num_bigrams: bigrams.size,
    num_trigrams: trigrams.size,
    num_responses: count,
    num_tokens: total,
  };
}
