/**
 * sacreBLEU's short flags of more than one letter, which commander cannot take as they are (it
 * reads `-tok` as `-t ok`): spelled out before parsing, for `bleu` only (`sacrebleu` parses its own argv as sacreBLEU does).
 */
const SACREBLEU_SHORT: Record<string, string> = {
  '-tok': '--tokenize',
  '-lc': '--lowercase',
  '-cc': '--chrf-char-order',
  '-cw': '--chrf-word-order',
  '-ci': '--confidence',
  '-cin': '--confidence-n',
  '-pbs': '--paired-bs',
  '-par': '--paired-ar',
  '-pbsn': '--paired-bs-n',
  '-parn': '--paired-ar-n',
};

/** argv with sacreBLEU's multi-letter short flags spelled out when the command is `bleu`. */
export function spellOutSacrebleuFlags(argv: readonly string[]): string[] {
  const command = argv.slice(2).find((a) => !a.startsWith('-'));
  if (command !== 'bleu') return [...argv];
  return argv.map((a) => SACREBLEU_SHORT[a] ?? a);
}
