/**
 * The lookup tables the lexical stand-in bakes into its graph, derived from the RoBERTa BPE vocabulary:
 * every token id maps to a canonical word id (case and the leading-space marker folded away) or to 0
 * when the token carries no content (special tokens, punctuation, stop words, negation words), and to
 * a negation flag.
 */

/** Function words ignored by the overlap: a template's "The ... is ..." must not count as evidence. */
export const LEXICAL_STOP_WORDS: readonly string[] = [
  'a', 'an', 'the', 'is', 'are', 'was', 'were', 'be', 'been', 'am', 'of', 'to', 'for', 'in', 'on', 'at',
  'by', 'and', 'or', 'it', 'its', 'this', 'that', 'these', 'those', 'with', 'as', 'i', 'you', 'your',
  'we', 'our', 'me', 'my', 'there', 'what', 'which', 'would', 'will', 'can', 'could', 'do', 'does',
  'did', 'have', 'has', 'had', 'please', 'so', 'any', 'some', "'s", "'re", "'m", "'ll", "'d", "'ve",
];

/** A negation on one side only turns the pair into a contradiction. */
export const LEXICAL_NEGATION_WORDS: readonly string[] = ['not', "n't", "'t", 'no', 'never', 'cannot', 'none', 'nothing'];

/** RoBERTa's byte-level BPE writes a leading space as U+0120 ('Ġ'). */
const SPACE_MARK = '\u0120';

export interface LexicalTables {
  /** Per token id: canonical word id (>= 1), or 0 for a token that is not content. */
  canon: Int32Array;
  /** Per token id: 1 for a negation word. */
  negation: Uint8Array;
  /**
   * Per token id: 1 for a token that looks like a slot value: a word capitalised after a space (a
   * name, a day, a city; a text's first word has no leading space in RoBERTa's BPE, so sentence
   * starts do not count) or anything with a digit. Such a token missing from the premise blocks
   * entailment however many template words match: "the day the order is collected" must not entail
   * "... is Saturday" when Saturday was never said.
   */
  valueLike: Uint8Array;
  /** Distinct canonical words. */
  words: number;
}

/** The word a token stands for: leading-space mark dropped, ASCII folded to lower case. */
export function canonicalWord(token: string): string {
  const bare = token.startsWith(SPACE_MARK) ? token.slice(1) : token;
  return bare.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * Tables for a vocabulary (token -> id, as in tokenizer.json's model.vocab). Canonical ids are given
 * in order of the lowest token id that has the word, so the same vocabulary gives the same tables.
 */
export function lexicalTables(vocab: Record<string, number>, specialIds: readonly number[]): LexicalTables {
  const size = Math.max(...Object.values(vocab), ...specialIds) + 1;
  const canon = new Int32Array(size);
  const negation = new Uint8Array(size);
  const valueLike = new Uint8Array(size);
  const stop = new Set(LEXICAL_STOP_WORDS);
  const neg = new Set(LEXICAL_NEGATION_WORDS);
  const special = new Set(specialIds);
  const wordIds = new Map<string, number>();
  const byId = Object.entries(vocab).sort((a, b) => a[1] - b[1]);
  for (const [token, id] of byId) {
    if (special.has(id)) continue;
    const word = canonicalWord(token);
    if (neg.has(word)) {
      negation[id] = 1;
      continue;
    }
    // Punctuation, symbols and byte fragments carry no content; a token needs a letter or digit.
    if (stop.has(word) || !/[a-z0-9]/.test(word)) continue;
    let w = wordIds.get(word);
    if (w === undefined) {
      w = wordIds.size + 1;
      wordIds.set(word, w);
    }
    canon[id] = w;
    if (/^\u0120[A-Z]/.test(token) || /[0-9]/.test(token)) valueLike[id] = 1;
  }
  return { canon, negation, valueLike, words: wordIds.size };
}
