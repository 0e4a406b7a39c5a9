import { capText } from '../../util/text-limits.js';
import { NONBREAKING_PREFIXES_EN, NUMERIC_ONLY_PREFIXES_EN } from './nonbreaking-prefixes-en.js';

/** One sentence of a text: its trimmed words and where they sit in the text (for highlighting). */
export interface SentenceSpan {
  text: string;
  /** Offset of the sentence's first character in the text (UTF-16 units, as String.slice counts). */
  start: number;
  /** Offset just past its last non-space character. */
  end: number;
}

export interface SplitOptions {
  /**
   * Strings that must stay inside one sentence wherever they occur (a turn's slot values: "Arc The.
   * Hotel Washington D.C.", "520 8th Ave. - Personal Valet Parking"). Matched case-insensitively.
   */
  keep?: readonly string[];
}

// ICU's sentence rules (UAX #29) end a sentence at ". " before a capital, so "Mr. Smith" and
// "2660 Tulare St. The bus" look alike to it. The guards below undo its breaks after an abbreviation
// unless a word that starts sentences follows, and add the breaks it misses before a digit.
// Made on first use: building ICU's sentence break iterator costs about 13 ms of CPU, paid at import
// by every command that loads this module (score, serve, rerank), most of which never split a reply.
let segmenter: Intl.Segmenter | undefined;

/** Abbreviations that never end a sentence in a reply (titles before a name). */
const TITLES = new Set(['Mr', 'Mrs', 'Ms', 'Messrs', 'Mme', 'Mlle', 'Prof', 'Rev', 'Hon', 'Gov', 'Sen', 'Rep', 'Capt', 'Col', 'Gen', 'Lt', 'Sgt', 'Mt', 'Ft']);

/**
 * Abbreviations that may end a sentence: initials ("Rahima S."), the Moses list's other
 * nonbreaking prefixes, and street types ("Tulare St.", "8th Ave.", "Alpine Dr." — St and Dr are
 * also Saint and Doctor). After one of them the break stays only when a sentence starter follows.
 */
const AMBIGUOUS = new Set([
  ...NONBREAKING_PREFIXES_EN.filter((p) => !TITLES.has(p)),
  ...['Ave', 'Blvd', 'Rd', 'Ln', 'Ct', 'Pkwy', 'Hwy', 'Ste', 'Apt', 'Pl', 'Sq', 'Co', 'Inc', 'Ltd', 'Jr', 'Bros', 'Corp', 'a.m', 'p.m', 'D.C', 'U.S', 'etc'],
]);

const NUMERIC_ONLY = new Set(NUMERIC_ONLY_PREFIXES_EN);

/**
 * Words that start a new sentence in task-oriented replies: after an ambiguous abbreviation a
 * break before one of these is kept ("... 2660 Tulare St. It leaves at 4 pm."), before anything
 * else it is undone ("St. Helena", "Christina M. Walker").
 */
const STARTERS = new Set(
  (
    'a an the this that these those there it its they their them i i\'m i\'ve i\'ll you your you\'re we our he she his her ' +
    'is are was were will would do does did can could shall should may might must have has had ' +
    'what which where when why how anything something everything nothing please sure okay ok yes no ' +
    'thanks thank great perfect alright also and but so then enjoy let here unfortunately sorry'
  ).split(' '),
);

/** The word a segment ends with before its final period ("St" of "Tulare St. "), or undefined. */
function abbreviationAtEnd(segment: string): string | undefined {
  const m = /(?:^|[\s(])((?:[A-Za-z]\.)*[A-Za-z]+)\.\s*$/.exec(segment);
  return m?.[1];
}

function firstWord(segment: string): string {
  const m = /^\s*([A-Za-z']+)/.exec(segment);
  return m ? m[1].toLowerCase() : '';
}

/** Should the break between `before` and `after` (two of ICU's segments) be undone? */
function joins(before: string, after: string): boolean {
  const abbr = abbreviationAtEnd(before);
  // After a period, a sentence never starts in lower case or with punctuation ("520 8th Ave. -
  // Personal Valet"); after ! or ? ICU's break stands ("Sure! i can do that.").
  if (/\.\s*$/.test(before) && /^\s*[a-z\-–,;:)]/.test(after)) return true;
  if (abbr === undefined) return false;
  if (TITLES.has(abbr)) return true;
  if (NUMERIC_ONLY.has(abbr)) return /^\s*\d/.test(after);
  if (AMBIGUOUS.has(abbr) || /^[A-Z]$/.test(abbr)) return !STARTERS.has(firstWord(after));
  return false;
}

/** ICU keeps "I found it. 4:30 pm works." whole: a break before a digit after a plain word's period. */
function splitBeforeDigits(segment: string, offset: number): { text: string; start: number }[] {
  const out: { text: string; start: number }[] = [];
  let from = 0;
  // The lookbehind starts a match only at a word's first letter: without it every letter of a long
  // word started one that ran to the word's end, quadratic in its length (a 200,000-letter word
  // held a turn for 18 s).
  const re = /(?<![A-Za-z])([A-Za-z]{2,})([.!?])\s+(?=\d)/g;
  for (let m = re.exec(segment); m !== null; m = re.exec(segment)) {
    const word = m[1];
    if (m[2] === '.' && (NUMERIC_ONLY.has(word) || AMBIGUOUS.has(word) || TITLES.has(word))) continue;
    const cut = m.index + m[0].length;
    out.push({ text: segment.slice(from, cut), start: offset + from });
    from = cut;
  }
  out.push({ text: segment.slice(from), start: offset + from });
  return out;
}

/** Spans [start, end) of every occurrence of the kept strings, case-insensitively. */
function keptSpans(text: string, keep: readonly string[]): [number, number][] {
  const lower = text.toLowerCase();
  const spans: [number, number][] = [];
  for (const k of keep) {
    const needle = k.trim().toLowerCase();
    if (needle.length < 2) continue;
    for (let i = lower.indexOf(needle); i !== -1; i = lower.indexOf(needle, i + 1)) spans.push([i, i + needle.length]);
  }
  return spans;
}

/**
 * Splits a reply into sentences: Intl.Segmenter (ICU's UAX #29 rules), then guards so that
 * abbreviations and initials ("Mr. Smith", "Christina M. Walker", "St. Helena"), times ("4:30 pm",
 * "4 p.m. today"), prices ("$45.50") and the turn's slot values (`keep`) stay whole. Empty and
 * whitespace-only pieces are dropped; each sentence is trimmed, with its offsets in `text`.
 */
export function splitSentences(whole: string, opts: SplitOptions = {}): SentenceSpan[] {
  // Only the first MAX_TEXT_CHARS characters are split (and checked): bounded work per text.
  const text = capText(whole);
  const pieces: { text: string; start: number }[] = [];
  for (const s of (segmenter ??= new Intl.Segmenter('en', { granularity: 'sentence' })).segment(text)) pieces.push(...splitBeforeDigits(s.segment, s.index));
  const spans = keptSpans(text, opts.keep ?? []);
  const merged: { text: string; start: number }[] = [];
  for (const p of pieces) {
    const last = merged[merged.length - 1];
    // A break inside a kept value is no break ("Arc The. Hotel Washington D.C.").
    const insideKept = spans.some(([a, b]) => p.start > a && p.start < b);
    // ...and a break ICU makes right after one stands, though it ends in an abbreviation ("D.C.").
    const afterKept = spans.some(([, b]) => text.slice(b, p.start).trim() === '' && b <= p.start);
    if (last && (insideKept || (!afterKept && joins(last.text, p.text)))) last.text += p.text;
    else merged.push({ ...p });
  }
  const out: SentenceSpan[] = [];
  for (const m of merged) {
    const lead = m.text.length - m.text.trimStart().length;
    const trimmed = m.text.trim();
    if (trimmed === '') continue;
    out.push({ text: trimmed, start: m.start + lead, end: m.start + lead + trimmed.length });
  }
  return out;
}
