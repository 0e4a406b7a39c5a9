import { formatConfidence, type ConfidenceBlock } from '../significance/confidence.js';
import type { BleuResult } from '../text/bleu.js';
import type { SerReport } from '../ser.js';
import { formatSignature, type Signature } from '../../util/signature.js';
import { isStandinModelId } from '../../nli/onnx-builder/standins.js';
import type { SgsaccCounts, SgsaccSummary, SplitScores } from './aggregate.js';
import type { HallucinationSummary } from './aggregate-hallucination.js';
import type { SentenceSummary } from './aggregate-sentences.js';

export interface SgsaccReport {
  signature: Signature;
  /** formatSignature(signature): the one-line form to paste next to a score. */
  signatureText: string;
  system: string;
  dataset: { name: string; source: string; turns: number; limit: number | null };
  sgsacc: Omit<SgsaccSummary, 'counts'>;
  counts: SgsaccCounts & { missingPredictions: number };
  /** The gold utterances scored as a system: the metric's ceiling on these turns. */
  groundTruth: {
    sgsacc: { validated: SplitScores | null; unvalidated: SplitScores };
    counts: SgsaccCounts;
    /** With --hallucination: the premises' validation on the gold utterance (its unvalidated rate is the share that failed). */
    hallucination?: HallucinationSummary;
    /** Turns the section covers, of the report's turns (fewer only when resuming --turns without --references). */
    coverage: { turns: number; of: number; complete: boolean };
  } | null;
  /** With --hallucination: the facts => text direction and the four-way labels. */
  hallucination?: HallucinationSummary;
  /**
   * With --granularity sentence: the sentence-level hallucination rate (percent of checked sentences
   * no fact supports), per service and act, with bootstrap 95% intervals of the rate, per service and act.
   */
  sentences?: SentenceSummary & { confidence?: SentenceConfidence };
  /** Slot error rate (percent) over the same turns, with its details. */
  ser: Pick<SerReport, 'ser' | 'errors' | 'utterancesWithValues' | 'perService' | 'turnsScored'> & { erroneousTurns?: string[] };
  /** sacreBLEU-compatible corpus BLEU against the gold utterances. */
  bleu: { score: number; signature: string; sysLen: number; refLen: number; bp: number } | null;
  predictions: { file: string | null; missing: string[]; extra: string[] };
  /** Turns whose references this run computed, reused from --references, or lacks (see groundTruth.coverage). */
  references: { file: string | null; reused: number; computed: number; missing: number };
  /** Turns whose scores were read back from --turns rather than computed by this run. */
  resumed: number;
  /** NLI runner counters for this run (pairs requested, issued to the model, cache hits). */
  nli: Record<string, number>;
  /** With --confidence: bootstrap 95% intervals of SGSAcc, SER, BLEU (and hallucination), docs/significance.md. */
  confidence?: ConfidenceBlock;
}

/**
 * The context-only control's line, printed whether it is on or off, so the risk of context rescues
 * is visible in every run: with it off, how many rescues the context alone entails (what the control
 * would withdraw); with it on, how many it withdrew.
 */
export function contextControlLine(c: Pick<SgsaccCounts, 'contextRescued' | 'contextOnly' | 'referenceContextRescued' | 'referenceContextOnly'>, on: boolean): string {
  // Counts of reports written before the control existed are absent: shown as unknown.
  const n = (x: number | undefined) => (x === undefined ? '?' : String(x));
  return on
    ? `context-only control on: withdrew ${n(c.contextOnly)} context rescues (${n(c.contextRescued)} kept); ` +
        `references only the context entails: ${n(c.referenceContextOnly)} of ${n(c.referenceContextRescued)} context-rescued (their turns excluded)`
    : `context-only control off: the context alone entails ${n(c.contextOnly)} of ${n(c.contextRescued)} context rescues ` +
        `and ${n(c.referenceContextOnly)} of ${n(c.referenceContextRescued)} context-rescued references (--context-control would withdraw them)`;
}

/** Bootstrap intervals of the sentence-level rate: overall (validated and all), per service and per act (all). */
export interface SentenceConfidence {
  overall: ConfidenceBlock;
  perService: Record<string, ConfidenceBlock['metrics'][string]>;
  perAct: Record<string, ConfidenceBlock['metrics'][string]>;
}

export function bleuSummary(b: BleuResult): SgsaccReport['bleu'] {
  return { score: b.score, signature: b.signature, sysLen: b.sysLen, refLen: b.refLen, bp: b.bp };
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '   -  ' : x.toFixed(2).padStart(6));

/** The terminal table: headline scores, counts, then per service and per act. */
export function formatSgsaccReport(r: SgsaccReport): string {
  const lines: string[] = [];
  lines.push(`SGSAcc  system: ${r.system}  data: ${r.dataset.source}  turns: ${r.dataset.turns}`);
  lines.push(`                       all    seen  unseen`);
  const row = (name: string, s: SplitScores | null) =>
    lines.push(`${name.padEnd(20)} ${pct(s?.all)}  ${pct(s?.seen)}  ${pct(s?.unseen)}`);
  row('validated', r.sgsacc.validated);
  row('unvalidated', r.sgsacc.unvalidated);
  if (r.groundTruth) {
    const partial = r.groundTruth.coverage.complete ? '' : ` (${r.groundTruth.coverage.turns} of ${r.groundTruth.coverage.of} turns)`;
    row(`ground truth (val.)${partial}`, r.groundTruth.sgsacc.validated);
    row(`ground truth (all)${partial}`, r.groundTruth.sgsacc.unvalidated);
  }
  lines.push(`SER ${r.ser.ser.toFixed(2)}% (${r.ser.errors}/${r.ser.utterancesWithValues})   BLEU ${r.bleu ? r.bleu.score.toFixed(2) : '-'}`);
  const c = r.counts;
  lines.push(
    `turns ${c.turns}  evaluated ${c.evaluated}  excluded ${c.excluded}  context-rescued actions ${c.contextRescued}` +
      (c.missingPredictions ? `  missing predictions ${c.missingPredictions}` : ''),
  );
  lines.push(contextControlLine(c, r.signature.contextControl === true));
  const groups = (title: string, g: SgsaccSummary['perService']) => {
    const keys = Object.keys(g);
    if (keys.length === 0) return;
    lines.push(`${title.padEnd(24)} valid.     n    all      n`);
    for (const k of keys) {
      const x = g[k];
      lines.push(`  ${k.padEnd(22)} ${pct(x.validated)} ${String(x.validatedN).padStart(5)} ${pct(x.unvalidated)} ${String(x.unvalidatedN).padStart(6)}`);
    }
  };
  groups('per service (turns)', r.sgsacc.perService);
  groups('per act (actions)', r.sgsacc.perAct);
  if (r.hallucination) {
    const h = r.hallucination;
    lines.push(`hallucination rate (turns)   all    seen  unseen`);
    row('validated', h.validated);
    row('unvalidated', h.unvalidated);
    if (r.groundTruth?.hallucination) row('ground truth (all)', r.groundTruth.hallucination.unvalidated);
    const l = (x: HallucinationSummary['labels']['all'] | null) => (x ? `ok ${x.ok}  omission ${x.omission}  hallucination ${x.hallucination}  both ${x.both}` : '-');
    lines.push(`labels (validated): ${l(h.labels.validated)}`);
    lines.push(`labels (all):       ${l(h.labels.all)}`);
    const c = h.counts;
    const reasons = Object.entries(c.excludedByReason).map(([k, n]) => `${k} ${n}`).join(', ');
    lines.push(
      `checked ${c.checked}  evaluated ${c.evaluated}  excluded ${c.excluded}${reasons ? ` (${reasons})` : ''}  content-free ${c.contentFree}  unscorable ${c.unscorable}  user-turn rescued ${c.contextRescued}` +
        `  user turn alone ${c.contextOnly ?? '?'}${r.signature.contextControl === true ? ' (withdrawn)' : ''}`,
    );
    groups('hallucination per service', h.perService);
    groups('hallucination per act', h.perAct);
  }
  if (r.sentences) {
    const h = r.sentences;
    lines.push(`hallucination rate (sentences) all   seen  unseen`);
    row('validated', h.validated);
    row('unvalidated', h.unvalidated);
    const c = h.counts;
    const ci = h.confidence?.overall.metrics['hallucination-sentences-all'];
    lines.push(
      `sentences ${c.sentences}  checked ${c.checked}  supported ${c.supported}  unsupported ${c.unsupported}  contradicted ${c.contradicted}` +
        `  courtesy ${c.courtesy}  unchecked ${c.unchecked}  turns with unsupported sentences ${c.turnsWithUnsupported}` +
        (ci ? `  (all: 95% [${ci.low.toFixed(2)}, ${ci.high.toFixed(2)}], ${ci.units} ${ci.unit}s)` : ''),
    );
    groups('sentences per service', h.perService);
    groups('sentences per act', h.perAct);
  }
  if (r.confidence) lines.push(formatConfidence(r.confidence).trimEnd());
  lines.push(`signature: ${formatSignature(r.signature)}`);
  const model = String(r.signature.model ?? '');
  if (isStandinModelId(model)) {
    lines.push(`NOTE: ${model} is a stand-in NLI model, not a language model: these numbers are NOT SGSAcc.`);
  }
  return lines.join('\n') + '\n';
}
