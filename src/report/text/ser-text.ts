import type { SerReport } from '../../metrics/ser.js';

function pct(x: number): string {
  return `${x.toFixed(2)}%`;
}

/** `todeval ser`'s tables: the overall rate, per service (robust beside it), then the first `showErrors` missing values. */
export function formatSerReport(r: SerReport, showErrors: number): string {
  const lines: string[] = [];
  const robust = r.robust;
  lines.push(
    `SER ${pct(r.ser)} (${r.errors} of ${r.utterancesWithValues} utterances with non-categorical values; ${r.turnsScored} system turns)` +
      (robust ? `   robust SER ${pct(robust.ser)} (${robust.errors})` : ''),
  );
  if (r.skippedValues.length > 0) lines.push(`values not checked (dontcare/?/none): ${r.skippedValues.length}`);
  const services = Object.keys(r.perService);
  const width = Math.max(7, ...services.map((s) => s.length));
  lines.push('');
  lines.push(`${'service'.padEnd(width)}  ${'utts'.padStart(6)}  ${'errors'.padStart(6)}  ${'SER'.padStart(7)}${robust ? `  ${'robust'.padStart(7)}` : ''}`);
  for (const s of services) {
    const c = r.perService[s];
    const rob = robust?.perService[s];
    lines.push(
      `${s.padEnd(width)}  ${String(c.total).padStart(6)}  ${String(c.errors).padStart(6)}  ${pct(c.ser).padStart(7)}` +
        (robust ? `  ${pct(rob?.ser ?? 0).padStart(7)}` : ''),
    );
  }
  if (showErrors > 0 && r.erroneous.length > 0) {
    lines.push('');
    lines.push(`first ${Math.min(showErrors, r.erroneous.length)} of ${r.erroneous.length} missing values:`);
    for (const e of r.erroneous.slice(0, showErrors)) lines.push(`  ${e.id}  ${e.service} ${e.act}(${e.slot}=${e.value})`);
  }
  return `${lines.join('\n')}\n`;
}
