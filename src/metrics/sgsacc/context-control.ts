import type { NliScorer } from '../../nli/types.js';
import { checkEntailment, fourWayLabel } from './hallucination.js';
import { controlPremise } from './premise.js';
import type { ActionReferenceChoice, ExclusionReason, HallucinationExclusionReason, SgsaccTurn, TurnReferences, TurnScore } from './types.js';

/*
 * The context-only control. The context premise (previous user turn + slot description +
 * utterance) is the paper's remedy for references that name what the user said; but the context
 * can entail a reference by itself (a REQUEST's reference restates the slot description, a CONFIRM
 * repeats the user's words), and then any utterance, even "t", is credited. Wherever the context
 * premise decides, the premise without the utterance is checked as well; if it entails too, the
 * rescue is "context-only". Scoring always records it; applyContextControl withdraws the credit.
 */

/**
 * Whether the control withdraws context-only credit: asked for, and the context pass on (without
 * the context premise there is nothing for it to check). Every caller applies the rule through here.
 */
export function contextControlOn(context: boolean | undefined, contextControl: boolean | undefined): boolean {
  return context === true && contextControl === true;
}

/**
 * Checks the context alone against each context-rescued reference choice that lacks the verdict
 * (fresh choices, and records stored before the control existed): one pair per such action. Sets
 * `contextOnly` on the choices; returns how many it checked.
 */
export async function controlReferenceChoices(entries: { turn: SgsaccTurn; refs: TurnReferences }[], scorer: NliScorer): Promise<number> {
  const todo: { choice: ActionReferenceChoice; premise: string; reference: string }[] = [];
  for (const { turn, refs } of entries) {
    for (const choice of refs.actions) {
      if (!choice.contextUsed || choice.contextOnly !== undefined || choice.reference === null) continue;
      const slotDescription = turn.actions.find((a) => a.id === choice.actionId)?.slotDescription ?? '';
      todo.push({ choice, premise: controlPremise(turn.previousUserUtterance, slotDescription), reference: choice.reference });
    }
  }
  const verdicts = await checkEntailment(
    todo.map((t) => ({ premise: t.premise, hypothesis: t.reference })),
    scorer,
  );
  todo.forEach((t, i) => (t.choice.contextOnly = verdicts[i].entailed));
  return todo.length;
}

/** True when a stored record predates the control: some context rescue in it lacks its verdict. */
export function lacksControl(refs: TurnReferences): { choices: boolean; groundTruth: boolean; premise: boolean } {
  return {
    choices: refs.actions.some((a) => a.contextUsed && a.contextOnly === undefined && a.reference !== null),
    groundTruth: refs.groundTruth?.actions.some((a) => a.contextUsed && a.contextOnly === undefined) ?? false,
    premise: refs.hallucination !== undefined && refs.hallucination.goldContextUsed && refs.hallucination.goldContextOnly === undefined,
  };
}

/**
 * A turn's score with the context-only control applied: context-only rescues are not entailed, an
 * action whose reference only the context (alone) entailed leaves validated SGSAcc (reason
 * `context-only`), and in the facts => text direction an utterance the user turn alone entails is
 * not credited by it. `refs` are the turn's references (the choices and the hallucination premise).
 * Applying it twice gives the same score.
 */
export function applyContextControl(score: TurnScore, refs: TurnReferences): TurnScore {
  const choiceOf = new Map(refs.actions.map((a) => [a.actionId, a]));
  const checking = score.validation !== 'unchecked';
  let referenceWithdrawn = false;
  const actions = score.actions.map((a) => {
    const out = { ...a };
    if (a.contextUsed && a.contextOnly) out.entailed = false;
    const choice = choiceOf.get(a.actionId);
    if (checking && choice?.contextUsed && choice.contextOnly) {
      out.status = 'excluded';
      referenceWithdrawn = true;
    }
    return out;
  });
  const controlled: TurnScore = { ...score, actions };
  if (score.faithful !== null) controlled.faithful = actions.every((a) => a.entailed);
  if (referenceWithdrawn) {
    controlled.validation = 'excluded';
    controlled.exclusionReasons = addReason<ExclusionReason>(score.exclusionReasons, 'context-only');
  }
  if (score.hallucination) {
    const h = { ...score.hallucination };
    if (h.contextUsed && h.contextOnly) h.hallucinated = true;
    const premise = refs.hallucination;
    if (h.validation !== 'unchecked') {
      const reasons: HallucinationExclusionReason[] = [];
      if (premise?.goldContextUsed && premise.goldContextOnly) reasons.push('context-only');
      // The omission side's exclusion is the hallucination side's 'references-excluded'.
      if (referenceWithdrawn) reasons.push('references-excluded');
      if (reasons.length > 0) {
        h.validation = 'excluded';
        h.exclusionReasons = reasons.reduce((acc, r) => addReason(acc, r), h.exclusionReasons);
      }
    }
    controlled.hallucination = h;
    controlled.label = fourWayLabel(controlled.faithful, h.hallucinated);
  }
  return controlled;
}

function addReason<R extends string>(reasons: R[] | undefined, reason: R): R[] {
  return reasons?.includes(reason) ? reasons : [...(reasons ?? []), reason];
}
