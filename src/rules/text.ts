/** Turning schema names and descriptions into the phrases templates need. */

const KEEP_DETERMINER = new Set([
  'the', 'a', 'an', 'this', 'that', 'these', 'those', 'your', 'his', 'her', 'its', 'their', 'whether', 'if',
  'how', 'what', 'which', 'when', 'where', 'who', 'is', 'are', 'do', 'does', 'can', 'any', 'some',
]);

function lowerFirst(s: string): string {
  // Keep acronyms (ID, USD) and proper-looking first words with a second capital as written.
  if (s.length > 1 && s[1] >= 'A' && s[1] <= 'Z') return s;
  return s.charAt(0).toLowerCase() + s.slice(1);
}

function stripEnd(s: string): string {
  return s.trim().replace(/\s+/g, ' ').replace(/[\s.?!:;,]+$/, '');
}

/**
 * "Name of the hair stylist" -> "the name of the hair stylist": a noun phrase to say "... is X".
 * Question-like descriptions become noun phrases where that is mechanical ("how much is the
 * entrance fee" -> "the entrance fee", "how many people ..." -> "the number of people ...").
 */
export function descriptionPhrase(desc: string): string {
  let d = lowerFirst(stripEnd(desc));
  if (d === '') return '';
  const much = /^how much (?:is |are )?(.+)$/i.exec(d);
  if (much) d = much[1];
  const many = /^how many (.+)$/i.exec(d);
  if (many) d = `the number of ${many[1]}`;
  const first = d.split(' ', 1)[0].toLowerCase();
  return KEEP_DETERMINER.has(first) ? d : `the ${d}`;
}

const CLAUSE_START = new Set(['whether', 'if', 'is', 'are', 'do', 'does', 'can', 'should', 'will', 'would']);

/** descriptionPhrase when it is a noun phrase; '' for clauses ("whether the hotel has parking") so "What is {descnp}?" is skipped. */
export function nounPhrase(desc: string): string {
  const d = descriptionPhrase(desc);
  return CLAUSE_START.has(d.split(' ', 1)[0]) ? '' : d;
}

/**
 * A boolean slot's description as the stem of a yes/no question: SGD writes many as "Boolean flag
 * indicating if the salon is unisex"; the paper's candidates read "Whether the place is ... ? Yes."
 */
export function descriptionQuestion(desc: string): string {
  let d = stripEnd(desc);
  if (d === '') return '';
  const m = /^boolean(?: flag)?(?: indicating)?(?: (?:if|whether))?\s+(.*)$/i.exec(d);
  if (m) d = `whether ${m[1]}`;
  return lowerFirst(d);
}

/** "stylist_name" -> "stylist name", "ReserveRestaurant" -> "reserve restaurant", "restaurant-food" -> "food". */
export function nameWords(name: string, words: Record<string, string> = {}): string {
  const base = name.includes('-') ? name.slice(name.indexOf('-') + 1) : name;
  if (words[base]) return words[base];
  return base
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\s]+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * The slot name negated where it carries its own verb: "is nonstop" -> "is not nonstop" (the
 * paper's rule), and likewise "has garage" -> "has no garage"; '' when it has neither (templates
 * using {slotneg} are then skipped).
 */
export function negateSlotVerb(slotWords: string): string {
  const tokens = slotWords.split(' ');
  const i = tokens.indexOf('is');
  if (i >= 0) {
    tokens.splice(i + 1, 0, 'not');
    return tokens.join(' ');
  }
  if (tokens[0] === 'has' && tokens.length > 1) return ['has', 'no', ...tokens.slice(1)].join(' ');
  return '';
}

/** True when the slot name reads as a predicate on its own ("is nonstop", "has garage"). */
export function slotHasVerb(slotWords: string): boolean {
  return negateSlotVerb(slotWords) !== '';
}

/** ["A"] -> "A"; ["A","B"] -> "A or B"; ["A","B","C"] -> "A, B or C". */
export function joinValues(values: string[]): string {
  if (values.length <= 1) return values[0] ?? '';
  return `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

export function sentenceCase(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

const TRUE_VALUES = new Set(['true', 'yes', 'free']);
const FALSE_VALUES = new Set(['false', 'no']);

/** A categorical slot whose values are only true/false (SGD) or yes/no/free (MultiWOZ internet, parking). */
export function isBooleanSlot(possibleValues: string[]): boolean {
  if (possibleValues.length < 2) return false;
  let t = false;
  let f = false;
  for (const v of possibleValues) {
    const b = booleanValue(v);
    if (b === undefined) return false;
    if (b) t = true;
    else f = true;
  }
  return t && f;
}

/** true / false for a boolean value, undefined when it is not one. */
export function booleanValue(v: string): boolean | undefined {
  const l = v.toLowerCase();
  if (TRUE_VALUES.has(l)) return true;
  if (FALSE_VALUES.has(l)) return false;
  return undefined;
}

/** 32-bit FNV-1a: a cheap stable hash for deterministic picks of tampered values. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A description as written, lower-cased first and without end punctuation ("Reserve a table." -> "reserve a table"). */
export function plainPhrase(desc: string): string {
  return lowerFirst(stripEnd(desc));
}
