/**
 * Characters of one side of a pair that can matter: a token spans at most a few dozen characters,
 * so 64 Ki characters hold well over 512 tokens (the model's window).
 */
export const MAX_PAIR_TEXT_CHARS = 65_536;

/** A pair side cut to MAX_PAIR_TEXT_CHARS characters (the tokenizer would drop the rest anyway). */
export function capPairText(text: string): string {
  return text.length > MAX_PAIR_TEXT_CHARS ? text.slice(0, MAX_PAIR_TEXT_CHARS) : text;
}
