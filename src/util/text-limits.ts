/**
 * Characters of one text (an utterance, a premise, a hypothesis) that todeval reads: longer texts
 * are cut to this before tokenizing and before sentence splitting, so no text costs more than this
 * many characters' work. The NLI model reads at most 512 tokens of a side; 16,384 characters is 32
 * a token, where English runs at 4 to 5, so the cut never changes what the model sees in any
 * natural text (a 60,000-character "word" is cut, as are megabyte pastes).
 */
export const MAX_TEXT_CHARS = 16_384;

/** `text` cut to MAX_TEXT_CHARS characters. */
export function capText(text: string): string {
  return text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text;
}
