import { argmaxLabel, type NliProbs, type NliScorer } from '../../nli/types.js';
import { splitSentences } from '../text/sentences.js';
import { PairBatch } from './batch.js';
import { courtesyKind, type CourtesyKind } from './courtesy.js';
import { isContentFreeAct, joinReferences } from './hallucination.js';
import { sentence as closeSentence } from './premise.js';
import type { HallucinationCheck, SgsaccOptions, SgsaccTurn, TurnReferences, TurnScore } from './types.js';

/**
 * Sentence granularity of the facts => text direction (SummaC's idea, Laban et al. 2022): each
 * sentence of the reply is checked against each of the turn's facts, and the best fact decides.
 * A long reply then shows *which* sentence no fact supports, instead of one verdict for the whole.
 */

export type Granularity = 'turn' | 'sentence';
export const GRANULARITIES: readonly Granularity[] = ['turn', 'sentence'];

/**
 * - supported: some fact entails the sentence;
 * - contradicted: none does, and some fact contradicts it (argmax contradiction);
 * - unsupported: neither (an added sentence: a hallucination);
 * - courtesy: a courtesy or dialogue-management sentence (courtesy.ts), never checked;
 * - unchecked: the turn is unscorable (an action without a reference: what it says is unknown).
 * A content-free turn's sentences are checked like any other's: its acts (GOODBYE, REQ_MORE...)
 * say nothing, so a sentence that is not courtesy has only their references to lean on, and an
 * invented fact appended to a goodbye is unsupported as it would be anywhere else.
 */
export type SentenceVerdictLabel = 'supported' | 'unsupported' | 'contradicted' | 'courtesy' | 'unchecked';

/** A fact a sentence is checked against. */
export interface SentenceFact {
  /**
   * - action: one action's entailment reference;
   * - facts: all references joined in action order (a sentence may say two facts at once);
   * - context: the previous user turn, the slot descriptions and the references (the retry when
   *   context augmentation is on and no fact alone entails the sentence).
   */
  kind: 'action' | 'facts' | 'context';
  /** With kind action: which action, its act and slot. */
  actionId?: string;
  act?: string;
  slot?: string;
  text: string;
}

export interface SentenceVerdict {
  text: string;
  /** Offsets of the sentence in the scored utterance (for highlighting). */
  start: number;
  end: number;
  verdict: SentenceVerdictLabel;
  courtesy?: CourtesyKind;
  /** The fact that supports it best (highest entailment probability), with that pair's probabilities. */
  fact?: SentenceFact;
  probs?: NliProbs;
  /** With verdict contradicted: the fact with the highest contradiction probability, and that pair's probabilities. */
  contradictedBy?: SentenceFact;
  contradictionProbs?: NliProbs;
  /** Only the context fact entailed it (the plain facts did not). */
  contextUsed?: boolean;
  /** With contextUsed: the user turn alone entails it too (with the control on the sentence is then unsupported). */
  contextOnly?: boolean;
}

export interface TurnSentences {
  /** The turn-level check (sentences are checked in checked and content-free turns, not in unscorable ones). */
  check: HallucinationCheck;
  sentences: SentenceVerdict[];
  /** The sentences no fact supports (unsupported or contradicted), in reply order. */
  unsupported: string[];
}

/** What the sentence check of one turn needs: its facts and what the courtesy rule needs. */
interface TurnPlan {
  check: HallucinationCheck;
  facts: SentenceFact[];
  context?: SentenceFact;
  control?: string;
  genericReferences: string[];
  values: string[];
}

function planTurn(turn: SgsaccTurn, refs: TurnReferences, options: Pick<SgsaccOptions, 'context'>): TurnPlan {
  const check = refs.hallucination?.check ?? 'unscorable';
  const genericReferences = turn.actions.filter((a) => isContentFreeAct(a.act)).flatMap((a) => a.candidates);
  const values = turn.actions.flatMap((a) => a.values);
  if (check === 'unscorable') return { check, facts: [], genericReferences, values };
  const facts: SentenceFact[] = [];
  const seen = new Set<string>();
  for (const a of refs.actions) {
    if (a.reference === null) continue;
    const text = closeSentence(a.reference);
    if (seen.has(text)) continue;
    seen.add(text);
    facts.push({ kind: 'action', actionId: a.actionId, act: a.act, slot: a.slot, text });
  }
  const joined = joinReferences(refs.actions.map((a) => a.reference ?? ''));
  if (facts.length > 1) facts.push({ kind: 'facts', text: joined });
  const plan: TurnPlan = { check, facts, genericReferences, values };
  const user = turn.previousUserUtterance.trim();
  if (options.context && user !== '') {
    const descriptions = [...new Set(turn.actions.map((a) => closeSentence(a.slotDescription)).filter((d) => d !== ''))];
    plan.context = { kind: 'context', text: [user, ...descriptions, joined].join(' ') };
    plan.control = user;
  }
  return plan;
}

/**
 * The most pairs checkSentences sends for one utterance of a turn: each sentence against each fact
 * (one per action, and the joined facts when there are several), then with context its retry and
 * that retry's control. Courtesy sentences cost nothing; counting them keeps the bound simple.
 */
export function sentencePairBound(turn: { actions: readonly Pick<SgsaccTurn['actions'][number], 'values'>[] }, utterance: string, options: Pick<SgsaccOptions, 'context'>): number {
  const sentences = splitSentences(utterance, { keep: turn.actions.flatMap((a) => a.values) }).length;
  const facts = turn.actions.length + (turn.actions.length > 1 ? 1 : 0);
  return sentences * (facts + (options.context ? 2 : 0));
}

const byEntailment = (a: NliProbs, b: NliProbs) => a.entailment - b.entailment;

/**
 * Splits each turn's utterance into sentences and checks each against the turn's facts, in at most
 * three scorer calls for all the turns: every (fact, sentence) pair; the context retry of the
 * sentences no fact entails or contradicts; the control (the user turn alone) of the context rescues. Courtesy
 * sentences cost nothing. The facts come from the stored references (their `hallucination` premise
 * must be there: the turn-level direction computes it), so a second system pays only its own pairs.
 */
export async function checkSentences(
  turns: SgsaccTurn[],
  references: Map<string, TurnReferences>,
  utterances: Map<string, string>,
  scorer: NliScorer,
  options: Pick<SgsaccOptions, 'context' | 'contextControl'>,
): Promise<Map<string, TurnSentences>> {
  type Item = { id: string; plan: TurnPlan; verdicts: SentenceVerdict[]; plain: number[][]; retry: (number | null)[]; control: (number | null)[] };
  const first = new PairBatch();
  const items: Item[] = turns.map((turn) => {
    const refs = references.get(turn.id);
    if (!refs) throw new Error(`no stored references for turn ${turn.id}`);
    const plan = planTurn(turn, refs, options);
    const utterance = utterances.get(turn.id) ?? '';
    const verdicts: SentenceVerdict[] = splitSentences(utterance, { keep: plan.values }).map((s) => {
      const kind = courtesyKind(s.text, plan.genericReferences, plan.values);
      if (kind) return { ...s, verdict: 'courtesy', courtesy: kind };
      return { ...s, verdict: plan.check === 'unscorable' ? 'unchecked' : 'unsupported' };
    });
    const plain = verdicts.map((v) => (v.verdict === 'unsupported' ? plan.facts.map((f) => first.add(f.text, v.text)) : []));
    return { id: turn.id, plan, verdicts, plain, retry: [], control: [] };
  });
  await first.run(scorer);

  const plainLabel = (it: Item, i: number, label: string) => it.plain[i].some((h) => argmaxLabel(first.get(h)) === label);
  const second = new PairBatch();
  for (const it of items) {
    // A sentence a fact contradicts is not retried: what the user said cannot make a contradiction
    // with the facts right (and a negation in the user turn, "No, not yet", must not rescue one).
    it.retry = it.verdicts.map((v, i) =>
      v.verdict === 'unsupported' && it.plan.context && !plainLabel(it, i, 'entailment') && !plainLabel(it, i, 'contradiction')
        ? second.add(it.plan.context.text, v.text)
        : null,
    );
  }
  await second.run(scorer);
  const third = new PairBatch();
  for (const it of items) {
    it.control = it.verdicts.map((v, i) => {
      const r = it.retry[i];
      return r !== null && argmaxLabel(second.get(r)) === 'entailment' && it.plan.control ? third.add(it.plan.control, v.text) : null;
    });
  }
  await third.run(scorer);

  const out = new Map<string, TurnSentences>();
  for (const it of items) {
    it.verdicts.forEach((v, i) => {
      if (v.verdict !== 'unsupported') return;
      const scored = it.plain[i].map((h, k) => ({ fact: it.plan.facts[k], probs: first.get(h) }));
      const r = it.retry[i];
      if (r !== null) scored.push({ fact: it.plan.context!, probs: second.get(r) });
      if (scored.length === 0) return; // no fact at all (a content-free turn without references): unsupported
      const best = scored.reduce((a, b) => (byEntailment(b.probs, a.probs) > 0 ? b : a));
      v.fact = best.fact;
      v.probs = best.probs;
      const entailed = scored.filter((s) => argmaxLabel(s.probs) === 'entailment');
      if (entailed.length > 0) {
        const viaContext = entailed.every((s) => s.fact.kind === 'context');
        const c = it.control[i];
        const contextOnly = viaContext && c !== null && argmaxLabel(third.get(c)) === 'entailment';
        if (viaContext) {
          v.contextUsed = true;
          v.contextOnly = contextOnly;
        }
        v.verdict = contextOnly && options.contextControl ? 'unsupported' : 'supported';
        return;
      }
      const worst = scored.reduce((a, b) => (b.probs.contradiction > a.probs.contradiction ? b : a));
      if (argmaxLabel(worst.probs) === 'contradiction') {
        v.verdict = 'contradicted';
        v.contradictedBy = worst.fact;
        v.contradictionProbs = worst.probs;
      }
    });
    const unsupported = it.verdicts.filter((v) => v.verdict === 'unsupported' || v.verdict === 'contradicted').map((v) => v.text);
    out.set(it.id, { check: it.plan.check, sentences: it.verdicts, unsupported });
  }
  return out;
}

/** The turn-level scores with each turn's sentence verdicts (one more set of passes for the chunk). */
export async function withSentences(
  slice: SgsaccTurn[],
  scores: TurnScore[],
  refs: Map<string, TurnReferences>,
  utterances: Map<string, string>,
  scorer: NliScorer,
  opts: SgsaccOptions,
): Promise<TurnScore[]> {
  const sentences = await checkSentences(slice, refs, utterances, scorer, opts);
  return scores.map((s) => ({ ...s, sentences: sentences.get(s.id)! }));
}
