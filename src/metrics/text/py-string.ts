/**
 * Python's notion of whitespace, so that our ports split and strip exactly where the Python
 * reference tools (sacremoses, sacreBLEU, lexical_diversity) do. JavaScript's `\s` differs:
 * it includes U+FEFF but not U+001C..U+001F or U+0085, which Python's `str.split()`, `strip()` and
 * `re`'s `\s` treat as whitespace.
 */
export const PY_WS_CLASS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

const WS_RUN = new RegExp(`[${PY_WS_CLASS}]+`, 'gu');
const LEADING_WS = new RegExp(`^[${PY_WS_CLASS}]+`, 'u');

/** `str.split()` with no argument: split on whitespace runs, no empty strings. */
export function pySplit(s: string): string[] {
  return s.split(WS_RUN).filter((t) => t !== '');
}

/** `str.strip()` with no argument. */
export function pyStrip(s: string): string {
  return pyRstrip(s.replace(LEADING_WS, ''));
}

/** Python's whitespace, one UTF-16 unit at a time (every character of PY_WS_CLASS is in the BMP). */
export function isPyWhitespace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
}

/** `str.rstrip()` with no argument (a scan from the end: the common line has nothing to strip). */
export function pyRstrip(s: string): string {
  let end = s.length;
  while (end > 0 && isPyWhitespace(s.charCodeAt(end - 1))) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** `re.sub(r'\s+', ' ', s)`. */
export function pyCollapseWhitespace(s: string): string {
  return s.replace(WS_RUN, ' ');
}

/**
 * Python's `f'{x:.{digits}f}'`: the exact binary value rounded to `digits` decimals, an exact tie to
 * the even digit. JavaScript's toFixed rounds such ties up (0.25 -> '0.3' where Python prints '0.2').
 */
export function pyFixed(x: number, digits: number): string {
  const fixed = x.toFixed(digits);
  if (!Number.isFinite(x)) return fixed;
  // toFixed(60) is the exact expansion of any double of magnitude >= 2^-8 with digits to spare.
  const exact = Math.abs(x).toFixed(Math.min(100, digits + 60));
  const cut = exact.indexOf('.') + 1 + digits;
  const rest = exact.slice(cut);
  if (!/^50*$/.test(rest)) return fixed;
  // An exact half: keep the truncated value when its last digit is even.
  const truncated = exact.slice(0, digits === 0 ? cut - 1 : cut);
  const lastDigit = Number(truncated.replace('.', '').slice(-1));
  if (lastDigit % 2 === 0) return (x < 0 ? '-' : '') + truncated;
  return fixed;
}
