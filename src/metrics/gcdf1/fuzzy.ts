/**
 * fuzzywuzzy's `token_sort_ratio` as the reference runs it (fuzzywuzzy with python-Levenshtein):
 * drop non-ASCII, turn every non-word character into a space, lowercase, sort the tokens, then
 * 100 * (len1 + len2 - indel distance) / (len1 + len2), rounded half-to-even like Python's round().
 * fuzzball's token_sort_ratio computes the same ratio but rounds halves up and also blanks `_`,
 * so we keep our own to stay on the same side of the 0.9 threshold.
 */

function fullProcess(s: string): string {
  return s
    .replace(/[^\x00-\x7F]/g, '')
    .replace(/\W/g, ' ')
    .toLowerCase()
    .trim();
}

function sortTokens(s: string): string {
  return s
    .split(/\s+/)
    .filter((t) => t !== '')
    .sort()
    .join(' ');
}

/** Insertion/deletion distance (a substitution costs 2), i.e. len1 + len2 - 2 * LCS. */
export function indelDistance(a: string, b: string): number {
  if (a.length < b.length) [a, b] = [b, a];
  const n = b.length;
  let prev = new Array<number>(n + 1).fill(0);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= n; j++) {
      cur[j] = ca === b.charCodeAt(j - 1) ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    }
    [prev, cur] = [cur, prev];
  }
  return a.length + b.length - 2 * prev[n];
}

/** Python 3 round(): halves go to the even neighbour. */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const diff = x - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** Levenshtein ratio (python-Levenshtein `ratio`) of two already processed strings, 0..100 integer. */
export function ratio(a: string, b: string): number {
  if (a === b) return 100;
  if (a.length === 0 || b.length === 0) return 0;
  const lensum = a.length + b.length;
  return roundHalfEven((100 * (lensum - indelDistance(a, b))) / lensum);
}

export function tokenSortRatio(a: string, b: string): number {
  return ratio(sortTokens(fullProcess(a)), sortTokens(fullProcess(b)));
}
