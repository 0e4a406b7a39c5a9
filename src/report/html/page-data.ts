import path from 'node:path';
import type { ReportRun, TurnLine, TurnsFile } from './runs.js';

/** Why a turn is listed among the failing turns of a run. */
export type TurnReason = 'unfaithful' | 'excluded' | 'rescued';

/** One run's view of one turn, compact: the page holds thousands of these. */
export interface TurnEntry {
  /** Index of the run in PageData.runs. */
  r: number;
  /** Reasons this turn is listed for this run (may be empty when another run lists it). */
  why: TurnReason[];
  /** validated / excluded / unchecked, and the exclusion reasons. */
  v: string;
  ex?: string[];
  faithful: boolean | null;
  /** The scored system utterance. */
  u: string;
  /** Actions: [act, slot, reference, entailment plain, entailment with context (or null), entailed 0/1, rescued by context 0/1]. */
  a: [string, string, string, number | null, number | null, 0 | 1, 0 | 1][];
}

export interface PageTurn {
  id: string;
  services: string[];
  acts: string[];
  /** The previous user turn (the same for every run). */
  prev: string;
  runs: TurnEntry[];
}

export interface PageRun {
  name: string;
  file: string;
  kind: ReportRun['kind'];
  signatureText: string;
  model: string | null;
  standin: boolean;
  hasTurns: boolean;
  validated: number | null;
  validatedSeen: number | null;
  validatedUnseen: number | null;
  unvalidated: number | null;
  ser: number | null;
  bleu: number | null;
  inform: number | null;
  success: number | null;
  richness: number | null;
  turns: number | null;
  evaluated: number | null;
  excluded: number | null;
  rescued: number | null;
}

export interface PageData {
  title: string;
  runs: PageRun[];
  warnings: string[];
  turns: PageTurn[];
  /** Turns each run's per-turn file holds, and how many of them are listed. */
  turnCounts: { run: string; total: number; listed: number }[];
}

/** Signature fields that must agree for two runs' numbers to be comparable (the system may differ). */
const COMPARABLE_EXCLUDED = new Set(['system', 'predictions', 'metric', 'missingPredictions', 'dialogues']);

export function signatureWarnings(runs: ReportRun[]): string[] {
  const warnings: string[] = [];
  const standins = runs.filter((r) => r.standin);
  if (standins.length > 0) {
    warnings.push(
      `${standins.map((r) => r.name).join(', ')} ${standins.length === 1 ? 'uses' : 'use'} a stand-in NLI model ` +
        `(${[...new Set(standins.map((r) => r.model))].join(', ')}), not a language model: ${standins.length === 1 ? 'its' : 'their'} numbers are NOT SGSAcc.`,
    );
  }
  if (runs.length > 1) {
    const keys = new Set(runs.flatMap((r) => Object.keys(r.signature)));
    const differing = [...keys]
      .filter((k) => !COMPARABLE_EXCLUDED.has(k))
      .filter((k) => new Set(runs.map((r) => JSON.stringify(r.signature[k] ?? null))).size > 1)
      .sort();
    if (differing.length > 0) {
      warnings.push(`The runs differ in signature (${differing.join(', ')}): their scores are not comparable with each other.`);
    }
  }
  return warnings;
}

function reasonsOf(t: TurnLine): TurnReason[] {
  const why: TurnReason[] = [];
  if (t.faithful === false) why.push('unfaithful');
  if (t.validation === 'excluded') why.push('excluded');
  if (t.actions.some((a) => a.contextUsed)) why.push('rescued');
  return why;
}

function entry(r: number, t: TurnLine): TurnEntry {
  const e: TurnEntry = {
    r,
    why: reasonsOf(t),
    v: t.validation,
    faithful: t.faithful,
    u: t.utterance ?? '',
    a: t.actions.map((a) => [
      a.act,
      a.slot,
      a.reference,
      a.plainEntailment ?? (a.contextUsed ? null : a.entailment),
      a.contextEntailment ?? (a.contextUsed ? a.entailment : null),
      a.entailed ? 1 : 0,
      a.contextUsed ? 1 : 0,
    ]),
  };
  if (t.exclusionReasons && t.exclusionReasons.length > 0) e.ex = t.exclusionReasons;
  return e;
}

/**
 * What the page embeds: the runs' headline numbers and every turn that some run lists (unfaithful,
 * excluded by validation, or rescued by context), with each run's view of it side by side.
 */
export function buildPageData(runs: ReportRun[], turnsByRun: Map<number, TurnsFile>, title: string): PageData {
  const byId = new Map<string, PageTurn>();
  const order: string[] = [];
  const turnCounts: PageData['turnCounts'] = [];
  const lines = new Map<number, Map<string, TurnLine>>();
  for (const [r, tf] of turnsByRun) lines.set(r, new Map(tf.turns.map((t) => [t.id, t])));
  for (const [r, tf] of [...turnsByRun].sort((a, b) => a[0] - b[0])) {
    let listed = 0;
    for (const t of tf.turns) {
      if (reasonsOf(t).length === 0) continue;
      listed++;
      if (byId.has(t.id)) continue;
      const runsView: TurnEntry[] = [];
      for (const [r2, m] of [...lines].sort((a, b) => a[0] - b[0])) {
        const t2 = m.get(t.id);
        if (t2) runsView.push(entry(r2, t2));
      }
      byId.set(t.id, {
        id: t.id,
        services: t.services,
        acts: [...new Set(t.actions.map((a) => a.act))],
        prev: t.previousUserUtterance ?? '',
        runs: runsView,
      });
      order.push(t.id);
    }
    turnCounts.push({ run: runs[r].name, total: tf.turns.length, listed });
  }
  return {
    title,
    runs: runs.map((r, i) => ({
      name: r.name,
      file: path.basename(r.file),
      kind: r.kind,
      signatureText: r.signatureText,
      model: r.model,
      standin: r.standin,
      hasTurns: turnsByRun.has(i),
      validated: r.sgsacc?.validated?.all ?? null,
      validatedSeen: r.sgsacc?.validated?.seen ?? null,
      validatedUnseen: r.sgsacc?.validated?.unseen ?? null,
      unvalidated: r.sgsacc?.unvalidated?.all ?? null,
      ser: r.ser?.ser ?? null,
      bleu: r.bleu,
      inform: r.inform,
      success: r.success,
      richness: r.richness?.num_trigrams ?? null,
      turns: r.counts?.turns ?? null,
      evaluated: r.counts?.evaluated ?? null,
      excluded: r.counts?.excluded ?? null,
      rescued: r.counts?.contextRescued ?? null,
    })),
    warnings: signatureWarnings(runs),
    turns: order.map((id) => byId.get(id)!),
    turnCounts,
  };
}
