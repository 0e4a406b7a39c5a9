/**
 * Python's notion of whitespace, so that our ports split and strip exactly where the Python
 * reference tools (sacremoses, sacreBLEU, lexical_diversity) do. JavaScript's `\s` differs:
 * it includes U+FEFF but not U+001C..U+001F or U+0085, which Python's `str.split()`, `strip()` and
 * `re`'s `\s` treat as whitespace.
 */
export const PY_WS_CLASS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

const WS_RUN = new RegExp(`[${PY_WS_CLASS}]+`, 'gu');
const LEADING_WS = new RegExp(`^[${PY_WS_CLASS}]+`, 'u');
const TRAILING_WS = new RegExp(`[${PY_WS_CLASS}]+$`, 'u');

/** `str.split()` with no argument: split on whitespace runs, no empty strings. */
export function pySplit(s: string): string[] {
  return s.split(WS_RUN).filter((t) => t !== '');
}

/** `str.strip()` with no argument. */
export function pyStrip(s: string): string {
  return s.replace(LEADING_WS, '').replace(TRAILING_WS, '');
}

/** `str.rstrip()` with no argument. */
export function pyRstrip(s: string): string {
  return s.replace(TRAILING_WS, '');
}

/** `re.sub(r'\s+', ' ', s)`. */
export function pyCollapseWhitespace(s: string): string {
  return s.replace(WS_RUN, ' ');
}
