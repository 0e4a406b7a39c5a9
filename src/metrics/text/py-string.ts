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

/**
 * `' '.join(s.split())`: the words joined by single spaces. Every whitespace run made one space
 * and the ends stripped is the same string, without an array of the words (the BLEU tokenizers
 * end every line with this).
 */
export function pyJoinWords(s: string): string {
  const t = s.replace(WS_RUN, ' ');
  // Each run is one space now: at most one to strip at either end.
  const from = t.charCodeAt(0) === 0x20 ? 1 : 0;
  const to = t.length > from && t.charCodeAt(t.length - 1) === 0x20 ? t.length - 1 : t.length;
  return from === 0 && to === t.length ? t : t.slice(from, to);
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
  // toFixed takes at most 100 digits; Python prints any number of them (`bleu -w 1000`).
  if (digits > 100 && Number.isFinite(x)) return exactFixed(x, digits);
  const fixed = x.toFixed(digits);
  if (!Number.isFinite(x)) return fixed;
  // toFixed rounds the exact binary value, as Python does, except at an exact tie. At a tie
  // |x| * 10^digits is k + 1/2 exactly, and its rounded product y lies within half an ulp of that;
  // a y whose fraction is farther from 1/2 is no tie, and toFixed's answer stands. This spares the
  // 60-digit expansion below for nearly every number (a sentence-level run prints several a line).
  if (digits <= 22) {
    const y = Math.abs(x) * 10 ** digits;
    if (y < 2 ** 52 && Math.abs(y - Math.floor(y) - 0.5) > y * 2 ** -52 + Number.MIN_VALUE) return fixed;
  }
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

/**
 * `x` to `digits` decimals from its exact binary value (mantissa x 2^exponent, in BigInt), a tie to
 * the even digit, as Python formats it: for widths past toFixed's 100.
 */
function exactFixed(x: number, digits: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  // value = mantissa * 2^exponent (subnormals have no implicit leading bit).
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  const scaled = mantissa * 10n ** BigInt(digits);
  let q: bigint;
  if (exponent >= 0) q = scaled << BigInt(exponent);
  else {
    const shift = BigInt(-exponent);
    q = scaled >> shift;
    const rest = scaled - (q << shift);
    const half = 1n << (shift - 1n);
    if (rest > half || (rest === half && (q & 1n) === 1n)) q += 1n;
  }
  const text = q.toString().padStart(digits + 1, '0');
  const body = `${text.slice(0, text.length - digits)}.${text.slice(text.length - digits)}`;
  return negative ? `-${body}` : body;
}
