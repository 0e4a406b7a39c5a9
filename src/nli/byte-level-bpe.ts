/**
 * Byte-level BPE of one pre-token (GPT-2 / RoBERTa), giving exactly the ids that
 * `@huggingface/tokenizers` gives for it. Why our own: the library builds its BPE tables up front
 * (a Map of the 50,000-entry vocabulary from Object.entries, a JSON.stringify key per merge), about
 * 0.1-0.3 CPU-s at every process start and in every tokenizer thread, for a run that meets a few
 * hundred distinct words. Here the merge ranks are one Map keyed by the merge strings as parsed, and
 * the vocabulary is read from the parsed object itself.
 *
 * Only for the plain case (model BPE, merges "a b" or [a, b] without other spaces, no word-end or
 * continuing-subword suffix, no byte fallback, no ignore_merges) in a file the library accepts (the
 * keys its Tokenizer requires, added_tokens a list, a ByteLevel decoder or none); `fromTokenizerJson`
 * returns undefined otherwise and the caller uses the library. A token the vocabulary lacks makes `ids`
 * return undefined, so the caller asks the library (its unk handling) rather than guess.
 * test/tokenizer-segments.test.ts checks the ids against the library on every text of the SGD test set.
 */

/** GPT-2's byte-to-character table: printable Latin-1 bytes stand for themselves, the rest for 256 + n. */
const BYTE_CHARS: readonly string[] = (() => {
  const chars = new Array<string>(256);
  const printable = (b: number): boolean => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let n = 0;
  for (let b = 0; b < 256; b++) chars[b] = String.fromCharCode(printable(b) ? b : 256 + n++);
  return chars;
})();

/**
 * Keys the library's Tokenizer constructor requires of a tokenizer.json (it refuses a file without
 * one: 'Tokenizer must contain a "decoder" property'); it also reads added_tokens as a list.
 */
const LIBRARY_KEYS = ['model', 'decoder', 'post_processor', 'pre_tokenizer', 'normalizer'] as const;

interface BpeModelJson {
  type?: string;
  vocab?: unknown;
  merges?: unknown;
  end_of_word_suffix?: unknown;
  continuing_subword_suffix?: unknown;
  byte_fallback?: unknown;
  ignore_merges?: unknown;
}

/**
 * Whether the library builds its BPE model from this config: type "BPE", or (older files without a
 * type, such as roberta-large-mnli's) the keys it then tells BPE by.
 */
function isBpeModel(m: BpeModelJson): boolean {
  if (m.type === 'BPE') return true;
  if (m.type === 'WordPiece' || m.type === 'Unigram') return false;
  return Object.hasOwn(m, 'continuing_subword_prefix') && Object.hasOwn(m, 'unk_token') && Object.hasOwn(m, 'merges');
}

export class ByteLevelBpe {
  private readonly utf8 = new TextEncoder();

  private constructor(
    private readonly vocab: Record<string, number>,
    private readonly ranks: Map<string, number>,
    private readonly added: Map<string, number>,
  ) {}

  /** The BPE of a tokenizer.json, or undefined where it is not the plain byte-level case. */
  static fromTokenizerJson(json: { model?: BpeModelJson; added_tokens?: { content?: unknown; id?: unknown }[]; decoder?: unknown }): ByteLevelBpe | undefined {
    // Only a file the library accepts: where ours applies the library is built only when a text needs
    // it, so a file it refuses would open fine and fail at the first text holding <s> or </s>, or
    // never. Without ours the library is built at open (PairTokenizer) and refuses the file there.
    if (!LIBRARY_KEYS.every((k) => k in json) || !Array.isArray(json.added_tokens)) return undefined;
    const decoder = json.decoder as { type?: unknown } | null;
    if (decoder !== null && (typeof decoder !== 'object' || decoder.type !== 'ByteLevel')) return undefined;
    const m = json.model;
    if (!m || !isBpeModel(m) || typeof m.vocab !== 'object' || m.vocab === null || Array.isArray(m.vocab) || !Array.isArray(m.merges)) return undefined;
    if (m.end_of_word_suffix || m.continuing_subword_suffix || m.byte_fallback || m.ignore_merges) return undefined;
    const ranks = new Map<string, number>();
    const merges = m.merges as unknown[];
    // The library reads every merge in the format of the first: after a pair, a string never
    // matches; after a string, a pair makes it throw. Only files all of one format are ours.
    const pairs = Array.isArray(merges[0]);
    for (let i = 0; i < merges.length; i++) {
      const x = merges[i];
      let key: string;
      if (typeof x === 'string' && !pairs) key = x;
      else if (pairs && Array.isArray(x) && x.length === 2 && typeof x[0] === 'string' && typeof x[1] === 'string' && !x[0].includes(' ') && !x[1].includes(' ')) key = `${x[0]} ${x[1]}`;
      else return undefined;
      // Exactly one space, so "left right" names one pair as the library's split(" ", 2) does.
      const space = key.indexOf(' ');
      if (space < 0 || key.indexOf(' ', space + 1) >= 0) return undefined;
      ranks.set(key, i); // a repeated merge keeps its last rank, as the library's Map does
    }
    const added = new Map<string, number>();
    for (const t of json.added_tokens ?? []) {
      if (typeof t.content !== 'string' || typeof t.id !== 'number') return undefined;
      added.set(t.content, t.id);
    }
    return new ByteLevelBpe(m.vocab as Record<string, number>, ranks, added);
  }

  /** A token's id as the library's token_to_id gives it (added tokens over the vocabulary). */
  tokenId(token: string): number | undefined {
    const a = this.added.get(token);
    if (a !== undefined) return a;
    return Object.hasOwn(this.vocab, token) ? this.vocab[token] : undefined;
  }

  private rankOf(left: string, right: string): number {
    return this.ranks.get(`${left} ${right}`) ?? Number.POSITIVE_INFINITY;
  }

  /** Ids of one pre-token, or undefined if a resulting token is not in the vocabulary. */
  ids(preToken: string): number[] | undefined {
    const bytes = this.utf8.encode(preToken);
    const symbols = new Array<string>(bytes.length);
    for (let i = 0; i < bytes.length; i++) symbols[i] = BYTE_CHARS[bytes[i]];
    // Merge the lowest-ranked adjacent pair, the leftmost of equals, until none is a merge: the
    // library's priority queue does the same (rank plus the left symbol's position below 1). The
    // ranks of the pairs are kept, and only the two next to a merge are looked up again.
    const ranks = new Array<number>(Math.max(0, symbols.length - 1));
    for (let i = 0; i < ranks.length; i++) ranks[i] = this.rankOf(symbols[i], symbols[i + 1]);
    for (;;) {
      let best = -1;
      let bestRank = Number.POSITIVE_INFINITY;
      for (let i = 0; i < ranks.length; i++) {
        if (ranks[i] < bestRank) {
          bestRank = ranks[i];
          best = i;
        }
      }
      if (best < 0) break;
      symbols.splice(best, 2, symbols[best] + symbols[best + 1]);
      ranks.splice(best, 1);
      if (best > 0) ranks[best - 1] = this.rankOf(symbols[best - 1], symbols[best]);
      if (best < ranks.length) ranks[best] = this.rankOf(symbols[best], symbols[best + 1]);
    }
    const out = new Array<number>(symbols.length);
    for (let i = 0; i < symbols.length; i++) {
      const id = this.tokenId(symbols[i]);
      if (id === undefined) return undefined;
      out[i] = id;
    }
    return out;
  }
}
