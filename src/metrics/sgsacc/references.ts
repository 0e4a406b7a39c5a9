import { argmaxLabel } from '../../nli/types.js';
import type { NliProbs, NliScorer } from '../../nli/types.js';
import { PairBatch } from './batch.js';
import { controlReferenceChoices } from './context-control.js';
import { contextPremise } from './premise.js';
import { DEFAULT_REFERENCE_SELECTION, type ActionReferenceChoice, type ReferenceSelection, type SgsaccAction, type SgsaccOptions, type SgsaccTurn, type TurnReferences } from './types.js';

interface Pending {
  turn: SgsaccTurn;
  action: SgsaccAction;
  plain: { candidates: number[]; negatives: number[] };
  context?: { candidates: number[]; negatives: number[] };
}

/**
 * Reference selection and validation on the ground-truth utterance (paper Sec. 2, Fig. 2 steps
 * 1-2) for a chunk of turns. Everything here is independent of the system being scored, so the
 * result is stored and reused for every system.
 *
 * Pass 1 scores every candidate (and, with validation, every negative) against the gold utterance.
 * Pass 2, with context on, re-scores only the actions where no candidate was entailed, with the
 * context-augmented premise. Negatives must stay non-entailed under each premise that was used.
 * Pass 3 checks the context alone against each reference only the context premise entailed (the
 * context-only control, one pair per such action).
 */
export async function selectReferences(
  turns: SgsaccTurn[],
  scorer: NliScorer,
  options: SgsaccOptions,
): Promise<TurnReferences[]> {
  const first = new PairBatch();
  const pending: Pending[] = [];
  const fixed = new Map<SgsaccAction, ActionReferenceChoice>();

  for (const turn of turns) {
    for (const action of turn.actions) {
      const early = unscorable(turn, action, options);
      if (early) {
        fixed.set(action, early);
        continue;
      }
      const premise = turn.utterance;
      pending.push({
        turn,
        action,
        plain: {
          candidates: action.candidates.map((c) => first.add(premise, c)),
          negatives: options.validation ? action.negatives.map((n) => first.add(premise, n)) : [],
        },
      });
    }
  }
  await first.run(scorer);

  const second = new PairBatch();
  const needContext: Pending[] = [];
  if (options.context) {
    for (const p of pending) {
      if (p.plain.candidates.some((h) => argmaxLabel(first.get(h)) === 'entailment')) continue;
      const premise = contextPremise(p.turn.previousUserUtterance, p.action.slotDescription, p.turn.utterance);
      p.context = {
        candidates: p.action.candidates.map((c) => second.add(premise, c)),
        negatives: options.validation ? p.action.negatives.map((n) => second.add(premise, n)) : [],
      };
      needContext.push(p);
    }
    await second.run(scorer);
  }

  for (const p of pending) fixed.set(p.action, decide(p, first, second, options));

  const refs: TurnReferences[] = turns.map((turn) => ({
    id: turn.id,
    services: turn.services,
    actions: turn.actions.map((a) => fixed.get(a)!),
  }));
  // Pass 3: where only the context premise entailed, does the context alone entail the reference?
  // Recorded whether or not the control is on, so the references serve both (applyContextControl).
  await controlReferenceChoices(turns.map((turn, i) => ({ turn, refs: refs[i] })), scorer);
  return refs;
}

/**
 * The most pairs selectReferences sends for `turn` (the admission planner's share of this step):
 * pass 1's candidates and negatives, pass 2's again with context on, and one control pair per
 * action. An action without candidates, or a turn without a gold utterance, costs none.
 */
export function selectionPairBound(turn: SgsaccTurn, options: Pick<SgsaccOptions, 'validation' | 'context'>): number {
  if (turn.utterance.trim() === '') return 0;
  let pairs = 0;
  for (const a of turn.actions) {
    if (a.candidates.length === 0) continue;
    const plain = a.candidates.length + (options.validation ? a.negatives.length : 0);
    pairs += options.context ? 2 * plain + 1 : plain;
  }
  return pairs;
}

function base(action: SgsaccAction): Pick<ActionReferenceChoice, 'actionId' | 'service' | 'act' | 'slot'> {
  return { actionId: action.id, service: action.service, act: action.act, slot: action.slot };
}

function unscorable(turn: SgsaccTurn, action: SgsaccAction, options: SgsaccOptions): ActionReferenceChoice | undefined {
  const reason = action.candidates.length === 0 ? 'no-candidates' : turn.utterance.trim() === '' ? 'no-ground-truth' : undefined;
  if (!reason) return undefined;
  // Without a gold utterance we can still score against the first candidate unvalidated; without
  // candidates there is nothing to score at all.
  const reference = reason === 'no-ground-truth' ? action.candidates[0] : null;
  return {
    ...base(action),
    reference,
    referenceEntailment: null,
    contextUsed: false,
    status: options.validation ? 'excluded' : 'unchecked',
    reason,
  };
}

/**
 * Index of the entailment reference among a premise's candidate probabilities.
 *
 * 'paper': the highest entailment probability, whatever its argmax (the paper's literal rule).
 * 'entailed': the highest entailment probability among the candidates whose argmax is entailment
 * (the ones validation counts), falling back to the paper's rule when none is. The two agree
 * whenever the paper's choice is entailed; where it is not (e.g. e=0.384 with neutral winning
 * versus e=0.377 with entailment winning), the paper's rule hands the turn a reference its own
 * ground truth fails, so the ground truth would score below 100% on the turns it validated.
 */
export function chooseReference(probs: readonly NliProbs[], rule: ReferenceSelection): number {
  let best = -1;
  if (rule === 'entailed') {
    for (let i = 0; i < probs.length; i++) {
      if (argmaxLabel(probs[i]) !== 'entailment') continue;
      if (best < 0 || probs[i].entailment > probs[best].entailment) best = i;
    }
    if (best >= 0) return best;
  }
  best = 0;
  for (let i = 1; i < probs.length; i++) if (probs[i].entailment > probs[best].entailment) best = i;
  return best;
}

function decide(p: Pending, first: PairBatch, second: PairBatch, options: SgsaccOptions): ActionReferenceChoice {
  const plainProbs = p.plain.candidates.map((h) => first.get(h));
  const plainEntailed = plainProbs.some((x) => argmaxLabel(x) === 'entailment');
  const ctxProbs = p.context?.candidates.map((h) => second.get(h));
  const ctxEntailed = ctxProbs?.some((x) => argmaxLabel(x) === 'entailment') ?? false;

  // The premise that "decides" is the plain one unless only the augmented premise entailed.
  const useContext = !plainEntailed && ctxEntailed;
  const probs = useContext ? ctxProbs! : plainProbs;
  const best = chooseReference(probs, options.referenceSelection ?? DEFAULT_REFERENCE_SELECTION);

  const choice: ActionReferenceChoice = {
    ...base(p.action),
    reference: p.action.candidates[best],
    referenceEntailment: probs[best].entailment,
    contextUsed: useContext,
    status: 'unchecked',
  };
  if (!options.validation) return choice;

  if (!plainEntailed && !ctxEntailed) return { ...choice, status: 'excluded', reason: 'no-candidate-entailed' };
  const negHandles: Array<[PairBatch, number[]]> = [[first, p.plain.negatives]];
  if (useContext && p.context) negHandles.push([second, p.context.negatives]);
  for (const [batch, handles] of negHandles) {
    const i = handles.findIndex((h) => argmaxLabel(batch.get(h)) === 'entailment');
    if (i >= 0) {
      return { ...choice, status: 'excluded', reason: 'negative-entailed', entailedNegative: p.action.negatives[i] };
    }
  }
  return { ...choice, status: 'validated' };
}
