// The labelled test set of sentence-level faithfulness (docs/sgsacc.md, "Sentence granularity"),
// built from the SGD test data each time (the data is never committed): multi-sentence replies made
// from ground-truth turns, each sentence labelled with where it came from.
import { createHash } from 'node:crypto';
import { LEXICAL_NEGATION_WORDS } from '../../src/nli/onnx-builder/index.js';
import { splitSentences } from '../../src/metrics/text/sentences.js';
import { sentence as closeSentence } from '../../src/metrics/sgsacc/premise.js';
import type { SgsaccTurn, TurnReferences, TurnSentences } from '../../src/metrics/sgsacc/index.js';

/**
 * - original: a sentence of the gold reply;
 * - inserted: another dialogue's reference of the same service, carrying a slot value this turn
 *   never mentions (added content: must be flagged);
 * - negated: one of the turn's own facts with "not" after its verb (must be flagged);
 * - courtesy: a courtesy sentence (must not be flagged).
 */
export type SentenceOrigin = 'original' | 'inserted' | 'courtesy' | 'negated';

export interface LabelledSentence {
  text: string;
  origin: SentenceOrigin;
  start: number;
  end: number;
}

export interface LabelledTurn {
  id: string;
  reply: string;
  sentences: LabelledSentence[];
}

export interface TestSet {
  turns: LabelledTurn[];
  /** Checked, validated turns left out, per reason. */
  skipped: Record<string, number>;
  /** Turns considered: checked in the facts => text direction and validated on their gold reply. */
  candidates: number;
}

/** Courtesy sentences added, one per turn in turn order: the generic acts' own and others of the documented list. */
export const ADDED_COURTESY = [
  'Is there anything else I can help you with?',
  "You're welcome!",
  'Have a great day!',
  'Let me check that for you.',
  'What else can I help you with?',
  'Sure.',
];

const NEGATION = new Set(LEXICAL_NEGATION_WORDS);
const hasNegation = (s: string) => s.toLowerCase().split(/[^a-z']+/).some((w) => NEGATION.has(w) || w.endsWith("n't"));
/** A value a reader (and the lexical stand-in) sees as a value: a capital or a digit. */
const valueLike = (v: string) => /[A-Z0-9]/.test(v) && v.trim().length > 1;
const dialogueOf = (id: string) => id.slice(0, id.lastIndexOf('/'));

/** A deterministic pick (the same set on every run). */
function pick<T>(xs: readonly T[], key: string): T {
  const h = createHash('sha256').update(key).digest();
  return xs[h.readUInt32BE(0) % xs.length];
}

/** "The restaurant is Tanpopo." -> "The restaurant is not Tanpopo."; undefined without a verb to negate. */
export function negate(sentence: string): string | undefined {
  const m = /\b(is|are|was|were|will|can|has|have|should)\b/.exec(sentence);
  if (!m) return undefined;
  const at = m.index + m[0].length;
  return `${sentence.slice(0, at)} not${sentence.slice(at)}`;
}

interface Fact {
  dialogue: string;
  value: string;
  reference: string;
}

/**
 * The test set over `turns` (their references computed with the hallucination direction): every
 * turn checked and validated on its gold reply gets an inserted, a negated and a courtesy sentence
 * around its gold sentences (each closed with a period when it lacks one), unless one cannot be
 * made (counted in `skipped`).
 *
 * With `goldSentences` (the gold replies scored at sentence granularity), only turns whose every
 * gold sentence is supported or courtesy are kept (`gold-sentence-unsupported` otherwise): the
 * sentence-level counterpart of validation, which keeps a turn only when its facts cover its gold
 * reply. The original sentences of those turns are then not flagged by construction (the same
 * pairs), so what the kept set measures is the inserted, negated and courtesy sentences and the split.
 */
export function buildSentenceTestSet(
  turns: readonly SgsaccTurn[],
  refs: ReadonlyMap<string, TurnReferences>,
  goldSentences?: ReadonlyMap<string, TurnSentences>,
): TestSet {
  // Every value-carrying reference, per service: the pool of inserted sentences.
  const pool = new Map<string, Fact[]>();
  for (const t of turns) {
    const r = refs.get(t.id);
    if (!r) continue;
    for (const a of r.actions) {
      const action = t.actions.find((x) => x.id === a.actionId);
      const value = action?.values.find((v) => valueLike(v) && a.reference?.includes(v));
      // One sentence as the splitter sees it without this turn's values ("I found Opa! Los Altos." is two).
      if (!value || a.reference === null || hasNegation(a.reference) || splitSentences(a.reference).length !== 1) continue;
      const list = pool.get(a.service) ?? [];
      list.push({ dialogue: dialogueOf(t.id), value, reference: a.reference });
      pool.set(a.service, list);
    }
  }
  const skipped: Record<string, number> = {};
  const skip = (why: string) => (skipped[why] = (skipped[why] ?? 0) + 1);
  const out: LabelledTurn[] = [];
  let candidates = 0;
  let courtesyAt = 0;
  for (const t of turns) {
    const r = refs.get(t.id);
    if (!r?.hallucination || r.hallucination.check !== 'checked' || r.hallucination.status !== 'validated') continue;
    candidates++;
    const g = goldSentences?.get(t.id);
    if (goldSentences && (!g || g.sentences.some((v) => v.verdict !== 'supported' && v.verdict !== 'courtesy'))) {
      skip('gold-sentence-unsupported');
      continue;
    }
    const values = t.actions.flatMap((a) => a.values);
    const known = `${t.utterance} ${t.previousUserUtterance} ${r.hallucination.premise}`.toLowerCase();
    const others = (pool.get(t.services[0]) ?? []).filter((f) => f.dialogue !== dialogueOf(t.id) && !known.includes(f.value.toLowerCase()));
    if (others.length === 0) {
      skip('no-other-value');
      continue;
    }
    const negatable = r.actions
      .map((a) => {
        const action = t.actions.find((x) => x.id === a.actionId);
        const value = action?.values.find((v) => valueLike(v) && a.reference?.includes(v));
        return value && a.reference && !hasNegation(a.reference) ? negate(a.reference) : undefined;
      })
      .filter((s): s is string => s !== undefined);
    if (negatable.length === 0) {
      skip('no-fact-to-negate');
      continue;
    }
    const gold = splitSentences(t.utterance, { keep: values }).map((s) => closeSentence(s.text));
    const inserted = pick(others, `${t.id}/inserted`).reference;
    const negated = pick(negatable, `${t.id}/negated`);
    const courtesy = ADDED_COURTESY[courtesyAt++ % ADDED_COURTESY.length];
    const parts: [string, SentenceOrigin][] = [
      [gold[0], 'original'],
      [inserted, 'inserted'],
      ...gold.slice(1).map((g): [string, SentenceOrigin] => [g, 'original']),
      [negated, 'negated'],
      [courtesy, 'courtesy'],
    ];
    let reply = '';
    const sentences: LabelledSentence[] = [];
    for (const [text, origin] of parts) {
      if (reply !== '') reply += ' ';
      sentences.push({ text, origin, start: reply.length, end: reply.length + text.length });
      reply += text;
    }
    out.push({ id: t.id, reply, sentences });
  }
  return { turns: out, skipped, candidates };
}

export interface Localisation {
  turns: number;
  /** Turns whose inserted and negated sentences are flagged and whose original and courtesy ones are not. */
  turnsCorrect: number;
  /** Turns where the scorer's sentences do not line up with the labelled ones (a split merged or cut them). */
  misaligned: number;
  /** Per origin: sentences, and how many were flagged (unsupported or contradicted). */
  byOrigin: Record<SentenceOrigin, { sentences: number; flagged: number }>;
  /** Flagged sentences that are inserted or negated, over all flagged; and over all inserted and negated. */
  precision: number;
  recall: number;
}

/** How well the flagged sentences localise the inserted and negated ones. */
export function localisation(set: readonly LabelledTurn[], scored: ReadonlyMap<string, TurnSentences>): Localisation {
  const byOrigin = Object.fromEntries((['original', 'inserted', 'courtesy', 'negated'] as const).map((o) => [o, { sentences: 0, flagged: 0 }])) as Localisation['byOrigin'];
  let turnsCorrect = 0;
  let misaligned = 0;
  for (const t of set) {
    const s = scored.get(t.id);
    if (!s) throw new Error(`no sentence verdicts for ${t.id}`);
    const aligned =
      s.sentences.length === t.sentences.length && s.sentences.every((v, i) => v.start === t.sentences[i].start && v.end === t.sentences[i].end);
    if (!aligned) misaligned++;
    let ok = aligned;
    for (const l of t.sentences) {
      // A labelled sentence is flagged when a flagged scored sentence overlaps it.
      const flagged = s.sentences.some((v) => (v.verdict === 'unsupported' || v.verdict === 'contradicted') && v.start < l.end && l.start < v.end);
      byOrigin[l.origin].sentences++;
      if (flagged) byOrigin[l.origin].flagged++;
      const should = l.origin === 'inserted' || l.origin === 'negated';
      if (flagged !== should) ok = false;
    }
    if (ok) turnsCorrect++;
  }
  const tp = byOrigin.inserted.flagged + byOrigin.negated.flagged;
  const flagged = tp + byOrigin.original.flagged + byOrigin.courtesy.flagged;
  const positives = byOrigin.inserted.sentences + byOrigin.negated.sentences;
  return {
    turns: set.length,
    turnsCorrect,
    misaligned,
    byOrigin,
    precision: flagged === 0 ? 0 : tp / flagged,
    recall: positives === 0 ? 0 : tp / positives,
  };
}
