/**
 * What `evaluate` says about the responses as a whole, one line per kind of problem however many
 * turns have it: a system with an odd placeholder has it in hundreds of turns, and lexicalized
 * output is a property of the file, not of a turn.
 */

/** Unknown slot placeholders (dropped, as mwzeval drops them): how many turns, which ones how often, where first. */
export function unknownPlaceholdersWarning(unknown: readonly { where: string; placeholders: string[] }[]): string | undefined {
  if (unknown.length === 0) return undefined;
  const counts = new Map<string, number>();
  for (const u of unknown) for (const p of u.placeholders) counts.set(p, (counts.get(p) ?? 0) + 1);
  const byCount = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = byCount.slice(0, 5).map(([p, n]) => `[${p}] x${n}`).join(', ') + (byCount.length > 5 ? `, ... (${byCount.length} kinds)` : '');
  return (
    `${unknown.length} turn${unknown.length === 1 ? '' : 's'} had unknown slot placeholders (${shown}; first at ${unknown[0].where}), ` +
    'removed (mwzeval drops them too; --strict makes them errors)'
  );
}

/** A placeholder as MultiWOZ delexicalization writes it: `[restaurant_name]`, `[value_food]`. */
const PLACEHOLDER = /\[[a-z][a-z_]*\]/i;

/** Fewer than this share of the turns whose reference has a placeholder have one: lexicalized. */
const LEXICALIZED_SHARE = 0.1;
/** Below this many such turns the share says little (a handful of dialogues): no warning. */
const MIN_TURNS = 20;

/**
 * Responses that name slot values where the references have `[placeholders]` (lexicalized output,
 * the gold `text` instead of `text_delex`, say): Inform and Success then find no offered venue, BLEU
 * compares values with placeholders, and richness counts the values as vocabulary. Returns the
 * warning naming the metrics asked for that it affects, or undefined.
 */
export function lexicalizedWarning(
  turns: readonly { response: string; reference: string }[],
  metrics: { bleu?: boolean; success?: boolean; richness?: boolean; chrf?: boolean; ter?: boolean },
): string | undefined {
  const expected = turns.filter((t) => PLACEHOLDER.test(t.reference));
  const withPlaceholder = expected.filter((t) => PLACEHOLDER.test(t.response)).length;
  if (expected.length < MIN_TURNS || withPlaceholder >= LEXICALIZED_SHARE * expected.length) return undefined;
  // BLEU, chrF and TER score the same strings against the same delexicalized references.
  const text = [metrics.bleu && 'BLEU', metrics.chrf && 'chrF', metrics.ter && 'TER'].filter((x): x is string => typeof x === 'string');
  const affected = [
    metrics.success ? 'Inform/Success (they find the venues offered through placeholders such as [restaurant_name])' : undefined,
    text.length > 0 ? `${text.join('/')} (${text.length === 1 ? 'its' : 'their'} references are delexicalized)` : undefined,
    metrics.richness ? 'richness (slot values count as words)' : undefined,
  ].filter((x): x is string => x !== undefined);
  if (affected.length === 0) return undefined;
  const list = affected.length === 1 ? affected[0] : `${affected.slice(0, -1).join(', ')} and ${affected.at(-1)}`;
  return (
    `the responses look lexicalized (${withPlaceholder} of the ${expected.length} turns whose reference has a [slot] placeholder have one): ` +
    `${list} ${affected.length === 1 ? 'means' : 'mean'} little for them; delexicalize the responses, or use --sgsacc, which scores lexicalized text`
  );
}
