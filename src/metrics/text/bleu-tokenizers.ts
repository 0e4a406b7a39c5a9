/**
 * sacreBLEU 2.x's BLEU tokenizers, rule for rule: '13a' (mteval-v13a, the default), 'none', 'intl'
 * (mteval-v14's international tokenization), 'char' and 'zh'. Each returns the tokens joined by
 * single spaces, as sacreBLEU's do; BLEU then splits on Python whitespace.
 */
import { pyJoinWords, pyStrip } from './py-string.js';

export const BLEU_TOKENIZERS = ['13a', 'none', 'intl', 'char', 'zh'] as const;
export type BleuTokenizerName = (typeof BLEU_TOKENIZERS)[number];

// The mteval-v13a "language-dependent" rules, in order: pad symbols and most ASCII punctuation
// (not ' - . ,), split . and , unless between digits, split - after a digit. 'zh' reuses them for
// everything that is not a Chinese character.
const PAD_SYMBOLS = /([{-~\[-` -&(-+:-@\/])/g;
const SPLIT_AFTER_NON_DIGIT = /([^0-9])([.,])/gu;
const SPLIT_BEFORE_NON_DIGIT = /([.,])([^0-9])/gu;
const SPLIT_DASH_AFTER_DIGIT = /([0-9])(-)/g;

function postTokenize13a(line: string): string {
  line = line.replace(PAD_SYMBOLS, ' $1 ');
  // The other rules match only where a '.', ',' or '-' is: a line without one is not scanned by
  // their regexps (most responses have no comma, many no hyphen). They insert spaces only.
  if (line.includes('.') || line.includes(',')) {
    line = line.replace(SPLIT_AFTER_NON_DIGIT, '$1 $2 ');
    line = line.replace(SPLIT_BEFORE_NON_DIGIT, ' $1 $2');
  }
  if (line.includes('-')) line = line.replace(SPLIT_DASH_AFTER_DIGIT, '$1 $2 ');
  return pyJoinWords(line);
}

/** sacreBLEU's default '13a' tokenizer (mteval-v13a.pl), returning the space-joined tokens. */
export function tokenize13a(line: string): string {
  line = line.replaceAll('<skipped>', '').replaceAll('-\n', '').replaceAll('\n', ' ');
  if (line.includes('&')) {
    line = line
      .replaceAll('&quot;', '"')
      .replaceAll('&amp;', '&')
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>');
  }
  return postTokenize13a(` ${line} `);
}

// mteval-v14's international rules with Unicode properties (sacreBLEU runs them with the `regex`
// module; JavaScript's \p{..} under the u flag means the same classes). Unicode versions differ a
// little between Node's ICU and the regex module, which only matters for characters added lately.
const RULES_INTL: ReadonlyArray<readonly [RegExp, string]> = [
  [/(\P{N})(\p{P})/gu, '$1 $2 '],
  [/(\p{P})(\P{N})/gu, ' $1 $2'],
  [/(\p{S})/gu, ' $1 '],
];

/** sacreBLEU's 'intl' tokenizer: punctuation split off unless between digits, symbols padded. */
export function tokenizeIntl(line: string): string {
  for (const [pattern, replacement] of RULES_INTL) line = line.replace(pattern, replacement);
  return pyJoinWords(line);
}

/** sacreBLEU's 'char' tokenizer: every code point (spaces too) joined by a space. */
export function tokenizeChar(line: string): string {
  return [...line].join(' ');
}

// sacreBLEU's _UCODE_RANGES, as Python compares them. Two of its entries are written '\u20000' and
// '\u2f800', which in Python are two characters ('\u2000' + '0', '\u2f80' + '0'): a single
// character c satisfies '\u20000' <= c <= '\u2a6d6' exactly when U+2000 < c <= U+2A6D, so that
// entry covers U+2001..U+2A6D (general punctuation, currency and arrows included) and the other
// U+2F81..U+2FA1. We keep what sacreBLEU does, not what the comments there intend.
const ZH_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x3400, 0x4db5],
  [0x4e00, 0x9fa5],
  [0x9fa6, 0x9fbb],
  [0xf900, 0xfa2d],
  [0xfa30, 0xfa6a],
  [0xfa70, 0xfad9],
  [0x2001, 0x2a6d],
  [0x2f81, 0x2fa1],
  [0xff00, 0xffef],
  [0x2e80, 0x2eff],
  [0x3000, 0x303f],
  [0x31c0, 0x31ef],
  [0x2f00, 0x2fdf],
  [0x2ff0, 0x2fff],
  [0x3100, 0x312f],
  [0x31a0, 0x31bf],
  [0xfe10, 0xfe1f],
  [0xfe30, 0xfe4f],
  [0x2600, 0x26ff],
  [0x2700, 0x27bf],
  [0x3200, 0x32ff],
  [0x3300, 0x33ff],
];

/** The lowest code point in ZH_RANGES. */
const ZH_FIRST = 0x2001;

function isZhChar(codePoint: number): boolean {
  if (codePoint < ZH_FIRST) return false;
  for (const [start, end] of ZH_RANGES) if (codePoint >= start && codePoint <= end) return true;
  return false;
}

/** sacreBLEU's 'zh' tokenizer: each Chinese character padded with spaces, then the 13a rules. */
export function tokenizeZh(line: string): string {
  const stripped = pyStrip(line);
  // Up to the first unit from U+2001 on (a surrogate is one) nothing is padded: that prefix is
  // copied whole, and a line without such a unit (English text) goes straight to the 13a rules.
  let k = 0;
  while (k < stripped.length && stripped.charCodeAt(k) < ZH_FIRST) k++;
  if (k === stripped.length) return postTokenize13a(stripped);
  let out = stripped.slice(0, k);
  for (const ch of stripped.slice(k)) out += isZhChar(ch.codePointAt(0)!) ? ` ${ch} ` : ch;
  return postTokenize13a(out);
}

const TOKENIZERS: Record<BleuTokenizerName, (line: string) => string> = {
  '13a': tokenize13a,
  none: (line) => line,
  intl: tokenizeIntl,
  char: tokenizeChar,
  zh: tokenizeZh,
};

export function bleuTokenizer(name: BleuTokenizerName): (line: string) => string {
  const t = TOKENIZERS[name];
  if (!t) throw new Error(`unknown BLEU tokenizer ${String(name)} (one of ${BLEU_TOKENIZERS.join(', ')})`);
  return t;
}
