/**
 * sacreBLEU 2.x's BLEU tokenizers, rule for rule: '13a' (mteval-v13a, the default), 'none', 'intl'
 * (mteval-v14's international tokenization), 'char' and 'zh'. Each returns the tokens joined by
 * single spaces, as sacreBLEU's do; BLEU then splits on Python whitespace.
 */
import { pySplit, pyStrip } from './py-string.js';

export const BLEU_TOKENIZERS = ['13a', 'none', 'intl', 'char', 'zh'] as const;
export type BleuTokenizerName = (typeof BLEU_TOKENIZERS)[number];

// The mteval-v13a "language-dependent" rules, in order: pad symbols and most ASCII punctuation
// (not ' - . ,), split . and , unless between digits, split - after a digit. 'zh' reuses them for
// everything that is not a Chinese character.
const RULES_13A: ReadonlyArray<readonly [RegExp, string]> = [
  [/([{-~\[-` -&(-+:-@\/])/g, ' $1 '],
  [/([^0-9])([.,])/gu, '$1 $2 '],
  [/([.,])([^0-9])/gu, ' $1 $2'],
  [/([0-9])(-)/g, '$1 $2 '],
];

function postTokenize13a(line: string): string {
  for (const [pattern, replacement] of RULES_13A) line = line.replace(pattern, replacement);
  return pySplit(line).join(' ');
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
  return pySplit(line).join(' ');
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

function isZhChar(codePoint: number): boolean {
  for (const [start, end] of ZH_RANGES) if (codePoint >= start && codePoint <= end) return true;
  return false;
}

/** sacreBLEU's 'zh' tokenizer: each Chinese character padded with spaces, then the 13a rules. */
export function tokenizeZh(line: string): string {
  let out = '';
  for (const ch of pyStrip(line)) out += isZhChar(ch.codePointAt(0)!) ? ` ${ch} ` : ch;
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
