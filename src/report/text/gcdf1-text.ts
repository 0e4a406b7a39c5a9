import type { Gcdf1Report } from '../../metrics/gcdf1/report.js';
import { formatSummary } from '../../metrics/gcdf1/summary.js';

/** `todeval gcdf1`'s tables (and `todeval merge`'s of gcdf1 shards): the scores, counts, behaviours and the signature. */
export function formatGcdf1Report(report: Gcdf1Report): string {
  const { metadata, ...tables } = report;
  const summary = formatSummary({ ...tables, counts: metadata.counts }, metadata.behaviour_counts);
  return `GCDF1 over ${Number(metadata.signature.dialogues)} dialogues\n${summary}\n\nsignature: ${metadata.signature_string}\n`;
}
