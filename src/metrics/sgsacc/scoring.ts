import { argmaxLabel } from '../../nli/types.js';
import type { NliScorer } from '../../nli/types.js';
import { PairBatch } from './batch.js';
import { EntailmentPasses, fourWayLabel, turnHallucination, type EntailmentVerdict } from './hallucination.js';
import { contextPremise } from './premise.js';
import type { ActionScore, ExclusionReason, SgsaccOptions, SgsaccTurn, TurnReferences, TurnScore } from './types.js';

/**
 * Final scoring (paper Fig. 2 step 3): a system utterance is faithful when it entails the stored
 * entailment reference of every action of its turn. Costs one pair per action, plus one context
 * pair for the actions the plain premise did not entail. With `hallucination`, the same two passes
 * also carry one facts => utterance pair per checked turn (plus its retry with the user turn); the
 * premises come from the references (`addHallucinationPremises`).
 */
export async function scoreTurns(
  turns: SgsaccTurn[],
  references: Map<string, TurnReferences>,
  utterances: Map<string, string>,
  scorer: NliScorer,
  options: SgsaccOptions,
): Promise<TurnScore[]> {
  const first = new PairBatch();
  type Item = { turn: SgsaccTurn; refs: TurnReferences; handles: (number | null)[]; ctx: (number | null)[] };
  const items: Item[] = [];
  for (const turn of turns) {
    const refs = references.get(turn.id);
    if (!refs) throw new Error(`no stored references for turn ${turn.id}`);
    const utterance = utterances.get(turn.id) ?? '';
    const handles = refs.actions.map((a) => (a.reference === null ? null : first.add(utterance, a.reference)));
    items.push({ turn, refs, handles, ctx: handles.map(() => null) });
  }
  const checked = options.hallucination ? items.filter((x) => premiseOf(x.refs).check === 'checked') : [];
  const halluc = new EntailmentPasses(
    checked.map(({ turn, refs }) => {
      const h = refs.hallucination!;
      return { premise: h.premise, contextPremise: h.contextPremise, hypothesis: utterances.get(turn.id) ?? '' };
    }),
    first,
  );
  halluc.addPlain();
  await first.run(scorer);

  const second = new PairBatch();
  halluc.addRetries(second);
  if (options.context) {
    for (const item of items) {
      const utterance = utterances.get(item.turn.id) ?? '';
      item.refs.actions.forEach((a, i) => {
        const h = item.handles[i];
        if (h === null || argmaxLabel(first.get(h)) === 'entailment') return;
        const action = item.turn.actions.find((x) => x.id === a.actionId);
        const premise = contextPremise(item.turn.previousUserUtterance, action?.slotDescription ?? '', utterance);
        item.ctx[i] = second.add(premise, a.reference!);
      });
    }
  }
  await second.run(scorer);
  const verdicts = new Map<string, EntailmentVerdict>(halluc.verdicts().map((v, i) => [checked[i].turn.id, v]));

  return items.map(({ turn, refs, handles, ctx }) => {
    const actions: ActionScore[] = [];
    let scorable = true;
    refs.actions.forEach((a, i) => {
      const h = handles[i];
      if (h === null || a.reference === null) {
        scorable = false;
        return;
      }
      const plain = first.get(h);
      const c = ctx[i];
      const viaContext = c !== null ? second.get(c) : undefined;
      const plainOk = argmaxLabel(plain) === 'entailment';
      const ctxOk = viaContext !== undefined && argmaxLabel(viaContext) === 'entailment';
      actions.push({
        actionId: a.actionId,
        service: a.service,
        act: a.act,
        slot: a.slot,
        reference: a.reference,
        entailed: plainOk || ctxOk,
        entailment: ctxOk ? viaContext!.entailment : plain.entailment,
        plainEntailment: plain.entailment,
        ...(viaContext !== undefined ? { contextEntailment: viaContext.entailment } : {}),
        contextUsed: !plainOk && ctxOk,
        referenceViaContext: a.contextUsed,
        status: a.status,
      });
    });
    const excluded = refs.actions.filter((a) => a.status === 'excluded');
    const validation: TurnScore['validation'] = !options.validation
      ? 'unchecked'
      : excluded.length > 0 || refs.actions.length === 0
        ? 'excluded'
        : 'validated';
    const score: TurnScore = {
      id: turn.id,
      services: turn.services,
      validation,
      faithful: scorable && actions.length > 0 ? actions.every((x) => x.entailed) : null,
      utterance: utterances.get(turn.id) ?? '',
      previousUserUtterance: turn.previousUserUtterance,
      actions,
    };
    if (excluded.length > 0) {
      score.exclusionReasons = [...new Set(excluded.map((a) => a.reason).filter((r): r is ExclusionReason => !!r))];
    }
    if (options.hallucination) {
      score.hallucination = turnHallucination(premiseOf(refs), verdicts.get(turn.id) ?? null);
      score.label = fourWayLabel(score.faithful, score.hallucination.hallucinated);
    }
    return score;
  });
}

function premiseOf(refs: TurnReferences): NonNullable<TurnReferences['hallucination']> {
  if (!refs.hallucination) throw new Error(`no hallucination premise for turn ${refs.id}`);
  return refs.hallucination;
}
