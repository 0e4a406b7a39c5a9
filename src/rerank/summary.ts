import type { LabelCounts } from '../metrics/sgsacc/aggregate-hallucination.js';
import { formatSignature, type Signature } from '../util/signature.js';
import type { RerankResult } from './rerank.js';

export interface SystemSummary {
  chosen: number;
  /** Mean fidelity / number of actions over the items where the system had a candidate. */
  meanFidelityRate: number | null;
  /** Items where this candidate realised every action. */
  fullyFaithful: number;
  items: number;
  /** With hallucination: this system's candidates per four-way label (unscorable ones left out). */
  labels?: LabelCounts;
  /** Actions of this system's candidates the context alone entails (withdrawn with the control on). */
  contextOnly: number;
}

export interface RerankSummary {
  chosenFullyFaithful: number;
  /**
   * Chosen candidates with an action the context alone entails: with the control off, winners that
   * may owe their place to the context; with it on, the withdrawn actions did not count.
   */
  chosenContextOnly: number;
  /** With hallucination: labels of the chosen candidates. */
  chosenLabels?: LabelCounts;
  bySystem: Record<string, SystemSummary>;
}

const noLabels = (): LabelCounts => ({ ok: 0, omission: 0, hallucination: 0, both: 0 });

/** Per system: how often chosen, mean fidelity rate, fully faithful candidates (and labels), over items in order. */
export function summarizeRerank(results: RerankResult[], hallucination: boolean): RerankSummary {
  const by = new Map<string, { chosen: number; rate: number; rated: number; full: number; items: number; labels: LabelCounts; contextOnly: number }>();
  let chosenFull = 0;
  let chosenContextOnly = 0;
  const contextOnlyOf = (c: { contextOnly?: boolean[] }) => c.contextOnly?.filter(Boolean).length ?? 0;
  const chosenLabels = noLabels();
  for (const r of results) {
    if (r.chosen.fidelity === r.actions) chosenFull++;
    if (r.chosen.label) chosenLabels[r.chosen.label]++;
    for (const c of r.candidates) {
      let s = by.get(c.system);
      if (!s) by.set(c.system, (s = { chosen: 0, rate: 0, rated: 0, full: 0, items: 0, labels: noLabels(), contextOnly: 0 }));
      s.contextOnly += contextOnlyOf(c);
      if (c.label) s.labels[c.label]++;
      s.items++;
      if (r.actions > 0) {
        s.rate += c.fidelity / r.actions;
        s.rated++;
      }
      if (c.fidelity === r.actions) s.full++;
    }
    by.get(r.chosen.system)!.chosen++;
    // The chosen candidate is the first of its system in the item (systems are unique per item).
    const chosen = r.candidates.find((c) => c.system === r.chosen.system && c.text === r.chosen.text);
    if (chosen && contextOnlyOf(chosen) > 0) chosenContextOnly++;
  }
  return {
    chosenFullyFaithful: chosenFull,
    chosenContextOnly,
    ...(hallucination ? { chosenLabels } : {}),
    bySystem: Object.fromEntries(
      [...by.entries()].map(([k, s]) => [
        k,
        {
          chosen: s.chosen,
          meanFidelityRate: s.rated ? s.rate / s.rated : null,
          fullyFaithful: s.full,
          items: s.items,
          contextOnly: s.contextOnly,
          ...(hallucination ? { labels: s.labels } : {}),
        },
      ]),
    ),
  };
}

/** The terminal table of a rerank run. */
export function formatRerankSummary(s: RerankSummary, n: number, contextControl: boolean): string {
  const lines = [`rerank: ${n} items, chosen candidate realises every action in ${s.chosenFullyFaithful}`];
  const withdrawn = Object.values(s.bySystem).reduce((k, v) => k + v.contextOnly, 0);
  lines.push(
    contextControl
      ? `context-only control on: ${withdrawn} context rescues withdrawn (the context alone entails them)`
      : `context-only control off: the context alone entails ${withdrawn} context rescues; ${s.chosenContextOnly} chosen candidates have one (--context-control would withdraw them)`,
  );
  const l = (x: LabelCounts) => `${x.ok}/${x.omission}/${x.hallucination}/${x.both}`;
  if (s.chosenLabels) lines.push(`chosen candidates ok/omission/hallucination/both: ${l(s.chosenLabels)}`);
  lines.push(`${'system'.padEnd(20)} chosen  all-actions  mean fidelity${s.chosenLabels ? '  ok/om/hal/both' : ''}`);
  for (const [k, v] of Object.entries(s.bySystem)) {
    const rate = v.meanFidelityRate === null ? '-' : (100 * v.meanFidelityRate).toFixed(1) + '%';
    lines.push(
      `${k.padEnd(20)} ${String(v.chosen).padStart(6)}  ${String(v.fullyFaithful).padStart(11)}  ${rate.padStart(13)}${v.labels ? `  ${l(v.labels)}` : ''}`,
    );
  }
  return lines.join('\n') + '\n';
}

/** The terminal lines of a rerank report (`todeval rerank`, and `todeval merge` of its shards): the table, then the signature. */
export function formatRerankReport(doc: { summary: RerankSummary; items: readonly unknown[]; signature: Signature }): string {
  return formatRerankSummary(doc.summary, doc.items.length, doc.signature.contextControl === true) + `signature: ${formatSignature(doc.signature)}\n`;
}
