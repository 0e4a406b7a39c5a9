/**
 * Delexicalization placeholders: what a delexicalized system writes where a lexicalized one names
 * a value. SGSAcc and SER judge whether the values were said, so a text holding placeholders
 * cannot be scored by them (BLEU, Inform and Success are computed on delexicalized text and keep
 * accepting it).
 */

/** The forms seen in published systems' outputs, first match wins. */
const FORMS: readonly RegExp[] = [
  // mwzeval / MultiWOZ delexicalization: [value_name], [restaurant_name], [hotel_phone]
  /\[[^\]\n]+\]/,
  // angle, brace and double-underscore slots: <slot_name>, {restaurant_name}, __value_time__
  /<[a-z][\w.-]*>/i,
  /\{[a-z][\w.-]*\}/i,
  /(?<!\w)__[a-z][a-z0-9_]*__(?!\w)/i,
];

/** The first placeholder in `text`, or undefined for lexicalized text. */
export function placeholderIn(text: string): string | undefined {
  for (const form of FORMS) {
    const m = form.exec(text);
    if (m) return m[0];
  }
  return undefined;
}

export interface PlaceholderTally {
  /** Texts holding at least one placeholder. */
  withPlaceholders: number;
  /** Texts looked at. */
  total: number;
  /** The most frequent placeholders (first one of each text), most frequent first, at most three. */
  examples: string[];
}

/** How many of `texts` hold placeholders, and which ones most often. */
export function tallyPlaceholders(texts: Iterable<string>): PlaceholderTally {
  const seen = new Map<string, number>();
  let withPlaceholders = 0;
  let total = 0;
  for (const text of texts) {
    total++;
    const p = placeholderIn(text);
    if (p === undefined) continue;
    withPlaceholders++;
    seen.set(p, (seen.get(p) ?? 0) + 1);
  }
  const examples = [...seen].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3).map(([p]) => p);
  return { withPlaceholders, total, examples };
}
