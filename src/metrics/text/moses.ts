/**
 * Moses tokenizer and detokenizer for English, behaving like sacremoses' `MosesTokenizer(lang='en')`
 * and `MosesDetokenizer(lang='en')` with their default arguments, which is how mwzeval normalizes
 * responses before BLEU and richness. Written from the rules of the Perl/sacremoses originals; the
 * rule order matters (each rule sees the previous rules' output), so it is kept.
 *
 * Character classes: sacremoses uses Perl Unicode property lists; we use the equivalent Unicode
 * properties (IsAlpha = Alphabetic, IsAlnum = Alphabetic + decimal digits, IsN = Number,
 * IsSc = currency symbol, IsLower = Lowercase) minus what those lists lack: everything outside the
 * BMP, CJK ideographs and precomposed Hangul syllables (so "日本" splits into two tokens, as in
 * sacremoses). Not supported: the Indic virama/nukta additions, custom prefix files, protected
 * patterns, languages other than English.
 */
import { NONBREAKING_PREFIXES_EN, NUMERIC_ONLY_PREFIXES_EN } from './nonbreaking-prefixes-en.js';
import { PY_WS_CLASS, pyCollapseWhitespace, pySplit, pyStrip } from './py-string.js';

export interface MosesTokenizeOptions {
  /** XML-escape `& | < > ' " [ ]` in the output (sacremoses default: true). */
  escape?: boolean;
  /** Split intra-word hyphens as `@-@` (sacremoses default: false). */
  aggressiveDashSplits?: boolean;
}

// Characters the Perl property lists leave out although Unicode gives them the property.
const NOT_IN_PERL_LISTS = '[\\p{Script=Han}\\uAC00-\\uD7A3\\u{10000}-\\u{10FFFF}]';
const perlClass = (prop: string) => `(?:(?!${NOT_IN_PERL_LISTS})[${prop}])`;
const ALPHA = perlClass('\\p{Alphabetic}');
const ALNUM = perlClass('\\p{Alphabetic}\\p{Nd}');
const NUM = perlClass('\\p{N}');
/** One code point in none of the given classes (a negated class). */
const noneOf = (...classes: string[]) => `(?:${classes.map((c) => `(?!${c})`).join('')}[^])`;

const re = (src: string, flags = 'gu') => new RegExp(src, flags);

// Everything that is not alphanumeric, whitespace, or one of . ' ` , - is a token of its own.
const PAD_NOT_ALNUM = re(`((?!${ALNUM})[^${PY_WS_CLASS}.'\`,\\-])`);
const AGGRESSIVE_HYPHEN = re(`(${ALNUM})-(?=${ALNUM})`);
const ASCII_JUNK = /[\x00-\x1f]/g;

// Commas split off unless between digits (5,300 stays).
const COMMA_SEPARATE = [
  [re(`(${noneOf(NUM)})[,]`), '$1 , '],
  [re(`[,](${noneOf(NUM)})`), ' , $1'],
  [re(`(${NUM})[,]$`), '$1 , '],
] as const;

// English apostrophes: split "'" off, except that it stays on a clitic after a letter ("aren't" -> "aren 't").
const ENGLISH_APOSTROPHE = [
  [re(`(${noneOf(ALPHA)})['](${noneOf(ALPHA)})`), "$1 ' $2"],
  [re(`(${noneOf(ALPHA, NUM)})['](${ALPHA})`), "$1 ' $2"],
  [re(`(${ALPHA})['](${noneOf(ALPHA)})`), "$1 ' $2"],
  [re(`(${ALPHA})['](${ALPHA})`), "$1 '$2"],
  [re(`(${NUM})[']([s])`), "$1 '$2"],
] as const;

const TRAILING_DOT_APOSTROPHE = /\.' ?$/u;

const XML_ESCAPES: ReadonlyArray<readonly [RegExp, string]> = [
  [/&/g, '&amp;'],
  [/\|/g, '&#124;'],
  [/</g, '&lt;'],
  [/>/g, '&gt;'],
  [/'/g, '&apos;'],
  [/"/g, '&quot;'],
  [/\[/g, '&#91;'],
  [/\]/g, '&#93;'],
];

// Order matters: &amp; last so that "&amp;lt;" becomes "&lt;", not "<".
const XML_UNESCAPES: ReadonlyArray<readonly [RegExp, string]> = [
  [/&bar;/g, '|'],
  [/&#124;/g, '|'],
  [/&lt;/g, '<'],
  [/&gt;/g, '>'],
  [/&bra;/g, '['],
  [/&ket;/g, ']'],
  [/&quot;/g, '"'],
  [/&apos;/g, "'"],
  [/&#91;/g, '['],
  [/&#93;/g, ']'],
  [/&amp;/g, '&'],
];

const NONBREAKING = new Set(NONBREAKING_PREFIXES_EN);
const NUMERIC_ONLY = new Set(NUMERIC_ONLY_PREFIXES_EN);
const ENDS_WITH_PERIOD = re(`^([^${PY_WS_CLASS}]+)\\.$`, 'u');
const ANY_ALPHA = re(ALPHA, 'u');
const IS_LOWER = re(`^${perlClass('\\p{Lowercase}')}$`, 'u');

/** Protect runs of 2+ dots (ellipses) from the period rules by turning them into words. */
function replaceMultidots(text: string): string {
  text = text.replace(/\.([.]+)/g, ' DOTMULTI$1');
  while (/DOTMULTI\./.test(text)) {
    text = text.replace(/DOTMULTI\.([^.])/gu, 'DOTDOTMULTI $1');
    text = text.replace(/DOTMULTI\./g, 'DOTDOTMULTI');
  }
  return text;
}

function restoreMultidots(text: string): string {
  while (/DOTDOTMULTI/.test(text)) text = text.replace(/DOTDOTMULTI/g, 'DOTMULTI.');
  return text.replace(/DOTMULTI/g, '.');
}

/**
 * A word ending in "." keeps its period when it looks like an abbreviation: it contains another
 * period and a letter ("u.s."), it is a known prefix ("Mr."), or the next word starts lower-case;
 * numeric-only prefixes ("No.") keep it before a number. Otherwise the period is split off.
 */
function handleNonbreakingPrefixes(text: string): string {
  const tokens = pySplit(text);
  const n = tokens.length;
  for (let i = 0; i < n; i++) {
    const m = ENDS_WITH_PERIOD.exec(tokens[i]);
    if (!m) continue;
    const prefix = m[1];
    const next = i + 1 < n ? tokens[i + 1] : undefined;
    const nextFirst = next ? String.fromCodePoint(next.codePointAt(0)!) : '';
    const keep =
      (prefix.includes('.') && ANY_ALPHA.test(prefix)) ||
      NONBREAKING.has(prefix) ||
      (next !== undefined && next !== '' && IS_LOWER.test(nextFirst));
    if (keep) continue;
    if (NUMERIC_ONLY.has(prefix) && next !== undefined && /^[0-9]+/.test(next)) continue;
    tokens[i] = `${prefix} .`;
  }
  return tokens.join(' ');
}

export function escapeXml(text: string): string {
  for (const [pattern, replacement] of XML_ESCAPES) text = text.replace(pattern, replacement);
  return text;
}

export function unescapeXml(text: string): string {
  for (const [pattern, replacement] of XML_UNESCAPES) text = text.replace(pattern, replacement);
  return text;
}

/** The tokenized text as one space-joined string (sacremoses `return_str=True`). */
export function mosesTokenizeToString(text: string, opts: MosesTokenizeOptions = {}): string {
  const escape = opts.escape ?? true;
  text = pyCollapseWhitespace(text).replace(ASCII_JUNK, '');
  text = pyStrip(text);
  text = text.replace(PAD_NOT_ALNUM, ' $1 ');
  if (opts.aggressiveDashSplits) text = text.replace(AGGRESSIVE_HYPHEN, '$1 @-@ ');
  text = replaceMultidots(text);
  for (const [pattern, replacement] of COMMA_SEPARATE) text = text.replace(pattern, replacement);
  for (const [pattern, replacement] of ENGLISH_APOSTROPHE) text = text.replace(pattern, replacement);
  text = handleNonbreakingPrefixes(text);
  text = pyStrip(pyCollapseWhitespace(text));
  text = text.replace(TRAILING_DOT_APOSTROPHE, " . ' ");
  text = restoreMultidots(text);
  if (escape) text = escapeXml(text);
  return text;
}

/** Moses-tokenize one sentence into tokens (sacremoses `MosesTokenizer('en').tokenize`). */
export function mosesTokenize(text: string, opts: MosesTokenizeOptions & { returnStr: true }): string;
export function mosesTokenize(text: string, opts?: MosesTokenizeOptions & { returnStr?: false }): string[];
export function mosesTokenize(text: string, opts: MosesTokenizeOptions & { returnStr?: boolean } = {}): string[] | string {
  const out = mosesTokenizeToString(text, opts);
  return opts.returnStr ? out : pySplit(out);
}

// CJK blocks as sacremoses checks them (start exclusive, end exclusive, first range that ends past
// the code point decides): English text rarely has them, but a CJK word glues to a CJK neighbour.
const CJK_RANGES: ReadonlyArray<readonly [number, number]> = [
  [4352, 4607], [11904, 42191], [43072, 43135], [44032, 55215], [63744, 64255], [65072, 65103],
  [65381, 65500], [94208, 101119], [110592, 110895], [110960, 111359], [131072, 196607],
];

function isCjk(cp: number): boolean {
  for (const [start, end] of CJK_RANGES) if (cp < end) return cp > start;
  return false;
}

const IS_CURRENCY_OR_OPENER = re(`^(?:${perlClass('\\p{Sc}')}|[([{¿¡])+$`, 'u');
const IS_CLOSING_PUNCT = /^[,.?!:;\\%}\])]+$/u;
const IS_CONTRACTION = re(`^[']${ALPHA}`, 'u');
const IS_QUOTE = /^['"„“`]+$/u;

export interface MosesDetokenizeOptions {
  /** Undo the tokenizer's XML escaping first (sacremoses default: true). */
  unescape?: boolean;
}

/**
 * Join Moses tokens back into text (sacremoses `MosesDetokenizer('en').detokenize`): closing
 * punctuation attaches left, currency and openers attach right, English clitics attach left, and
 * quotes alternate between opening and closing.
 */
export function mosesDetokenize(tokens: readonly string[], opts: MosesDetokenizeOptions = {}): string {
  let text = ` ${tokens.join(' ')} `;
  text = text.replace(/ @-@ /g, '-');
  if (opts.unescape ?? true) text = unescapeXml(text);

  const quoteCounts = new Map<string, number>([["'", 0], ['"', 0], ['``', 0], ['`', 0], ["''", 0]]);
  let prependSpace = ' ';
  let out = '';
  const words = pySplit(text);
  for (let i = 0; i < words.length; i++) {
    const token = words[i];
    if (isCjk(token.codePointAt(0)!)) {
      const prev = i > 0 ? Array.from(words[i - 1]).at(-1)! : '';
      out += i > 0 && isCjk(prev.codePointAt(0)!) ? token : prependSpace + token;
      prependSpace = ' ';
    } else if (IS_CURRENCY_OR_OPENER.test(token)) {
      out += prependSpace + token;
      prependSpace = '';
    } else if (IS_CLOSING_PUNCT.test(token)) {
      out += token;
      prependSpace = ' ';
    } else if (i > 0 && IS_CONTRACTION.test(token)) {
      out += token;
      prependSpace = ' ';
    } else if (IS_QUOTE.test(token)) {
      const quote = /^[„“”]+$/u.test(token) ? '"' : token;
      const count = quoteCounts.get(quote) ?? 0;
      if (count % 2 === 0) {
        if (token === "'" && i > 0 && /s$/u.test(words[i - 1])) {
          // Possessive of a word ending in s ("the jones' house"): attach left, not an opener.
          out += token;
          prependSpace = ' ';
          quoteCounts.set(quote, count);
        } else {
          out += prependSpace + token;
          prependSpace = '';
          quoteCounts.set(quote, count + 1);
        }
      } else {
        out += token;
        prependSpace = ' ';
        quoteCounts.set(quote, count + 1);
      }
    } else {
      out += prependSpace + token;
      prependSpace = ' ';
    }
  }
  return pyStrip(out.replace(/ {2,}/g, ' '));
}
