/** Plain-text summary table of GCDF1 scores for the terminal. */
import type { Gcdf1Scores } from './evaluate.js';

const COLUMN_ORDER = ['combined', 'attraction', 'hotel', 'restaurant', 'taxi', 'train'];

export function formatSummary(scores: Gcdf1Scores, behaviours?: Record<string, Record<string, number>>): string {
  const keys = new Set([...Object.keys(scores.igcd_f1), ...Object.keys(scores.rgcd_f1)]);
  const columns = [...COLUMN_ORDER.filter((c) => keys.has(c)), ...[...keys].filter((k) => !COLUMN_ORDER.includes(k)).sort()];
  const rows: string[][] = [['', ...columns]];
  const add = (label: string, table: Record<string, number>) =>
    rows.push([label, ...columns.map((c) => (table[c] === undefined ? '-' : table[c].toFixed(3)))]);
  add('I-GCDF1 F1', scores.igcd_f1);
  add('  precision', scores.igcd_precision);
  add('  recall', scores.igcd_recall);
  rows.push(['  dialogues', ...columns.map((c) => String(scores.counts.igcd_f1[c] ?? '-'))]);
  add('R-GCDF1 F1', scores.rgcd_f1);
  add('  precision', scores.rgcd_precision);
  add('  recall', scores.rgcd_recall);
  rows.push(['  dialogues', ...columns.map((c) => String(scores.counts.rgcd_f1[c] ?? '-'))]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '));
  if (behaviours) {
    for (const [metric, counts] of Object.entries(behaviours)) {
      const entries = Object.entries(counts).filter(([, n]) => n > 0);
      if (!entries.length) continue;
      lines.push('', `${metric === 'igcd_f1' ? 'I-GCDF1' : 'R-GCDF1'} behaviours (observations over all dialogues):`);
      for (const [name, n] of entries) lines.push(`  ${name.padEnd(56)} ${String(n).padStart(6)}`);
    }
  }
  return lines.join('\n');
}
