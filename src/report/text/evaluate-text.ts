import type { MwzEvaluation } from '../../metrics/mwz/evaluator.js';
import type { SgsaccMergeResult } from '../../metrics/mwz/sgsacc-merge.js';
import { formatConfidence, type ConfidenceBlock } from '../../metrics/significance/confidence.js';
import { formatSignature } from '../../util/signature.js';

/** What `todeval evaluate` reports (and `todeval merge` of its shards): mwzeval's metrics, SGSAcc, intervals. */
export type EvaluationText = MwzEvaluation & { sgsacc?: SgsaccMergeResult | null; confidence?: ConfidenceBlock };

const fmt = (v: unknown): string => (typeof v === 'number' ? String(Math.round(v * 1e4) / 1e4) : String(v));

/** mwzeval's console layout: one block per metric, keys padded to 15 characters. */
export function formatEvaluation(r: EvaluationText): string {
  const lines: string[] = [];
  const block = (title: string, rows: [string, unknown][]): void => {
    lines.push(`====== ${title} ======`);
    for (const [k, v] of rows) lines.push(`${k.padEnd(15)}${fmt(v)}`);
    lines.push('');
  };
  if (r.bleu) block('BLEU', Object.entries(r.bleu));
  // sacreBLEU's chrF and TER over the same strings (not mwzeval's): their name and signature.
  if (r.chrf && r.details.chrf) block(`${r.details.chrf.name} (sacreBLEU ${r.details.chrf.signature})`, Object.entries(r.chrf));
  if (r.ter && r.details.ter) block(`TER (sacreBLEU ${r.details.ter.signature})`, Object.entries(r.ter));
  if (r.success) {
    // `total` last, after the domains (the JSON keeps mwzeval's key order).
    const domains = Object.keys(r.success.inform).sort((a, b) => Number(a === 'total') - Number(b === 'total'));
    block(
      `INFORM & SUCCESS (state: ${r.success.state_source}, domains: ${r.success.domain_source})`,
      domains.map((d) => [d, `inform ${r.success!.inform[d]}  success ${r.success!.success[d]}`]),
    );
    block(
      'INFORM & SUCCESS, OPTIMISTIC',
      domains.map((d) => [d, `inform ${r.success!.optimistic.inform[d]}  success ${r.success!.optimistic.success[d]}`]),
    );
  }
  if (r.richness) block('RICHNESS', Object.entries(r.richness));
  if (r.dst) block('DST', Object.entries(r.dst));
  const sg = r.sgsacc;
  if (sg) {
    block('SGSACC & SER (lexicalized turns)', [
      ['sgsacc', sg.sgsacc.validated?.all ?? 'n/a'],
      ['sgsacc_unval', sg.sgsacc.unvalidated.all ?? 'n/a'],
      ['ser', sg.ser.ser],
      ['turns', `${sg.counts.lexicalizedTurns} lexicalized, ${sg.counts.delexicalizedTurns} delexicalized (left out${sg.skipDelexicalized ? ' by --skip-delexicalized: not the system\'s SGSAcc' : ''})`],
    ]);
    const st = sg.sentences;
    if (st) {
      const ci = st.confidence.overall.metrics['hallucination-sentences-all'];
      block('SENTENCES NO FACT SUPPORTS (lexicalized turns, percent of checked sentences)', [
        ['unsupported', st.validated?.all ?? 'n/a'],
        ['unsupp_unval', st.unvalidated.all ?? 'n/a'],
        ...(ci ? ([['ci95_unval', `[${ci.low.toFixed(2)}, ${ci.high.toFixed(2)}], ${ci.units} ${ci.unit}s`]] as [string, unknown][]) : []),
        ['sentences', `${st.counts.sentences}: checked ${st.counts.checked}, unsupported ${st.counts.unsupported}, contradicted ${st.counts.contradicted}, courtesy ${st.counts.courtesy}, unchecked ${st.counts.unchecked}`],
        ['turns', `${st.counts.turnsWithUnsupported} with unsupported sentences`],
      ]);
    }
  }
  const confidence = r.confidence;
  if (confidence) lines.push(formatConfidence(confidence).trimEnd(), '');
  lines.push(`${r.details.dialogues} dialogues, ${r.details.turns} turns`);
  if (r.details.invalid.length > 0) lines.push(`${r.details.invalid.length} invalid dialogues skipped`);
  if (r.details.unknown_placeholders.length > 0) {
    lines.push(`${r.details.unknown_placeholders.length} turns had unknown slot placeholders (dropped)`);
  }
  lines.push(`signature: ${formatSignature(r.signature)}`);
  return lines.join('\n') + '\n';
}
