import { capText, MAX_TEXT_CHARS } from '../util/text-limits.js';

/** Characters of one side of a pair that can matter: the project's text cut (util/text-limits.ts). */
export const MAX_PAIR_TEXT_CHARS = MAX_TEXT_CHARS;

/** A pair side cut to MAX_PAIR_TEXT_CHARS characters (the tokenizer would drop the rest anyway). */
export function capPairText(text: string): string {
  return capText(text);
}
