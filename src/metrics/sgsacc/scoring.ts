import type { NliScorer } from '../../nli/types.js';
import { PairBatch } from './batch.js';
import { applyContextControl } from './context-control.js';
import { EntailmentPasses, fourWayLabel, hallucinationJob, turnHallucination, type EntailmentJob, type EntailmentVerdict } from './hallucination.js';
import { contextPremise, controlPremise } from './premise.js';
import type { ActionReferenceChoice, ActionScore, ExclusionReason, SgsaccOptions, SgsaccTurn, TurnReferences, TurnScore } from './types.js';

/**
 * Final scoring (paper Fig. 2 step 3): a system utterance is faithful when it entails the stored
 * entailment reference of every action of its turn. Costs one pair per action, one context pair
 * for each action the plain premise did not entail, and one control pair for each action only the
 * context premise entailed (the context without the utterance, see SgsaccOptions.contextControl).
 * With `hallucination`, the same passes also carry one facts => utterance pair per checked turn
 * (plus its retry with the user turn, and that retry's control); the premises come from the
 * references (`addHallucinationPremises`).
 */
export async function scoreTurns(
  turns: SgsaccTurn[],
  references: Map<string, TurnReferences>,
  utterances: Map<string, string>,
  scorer: NliScorer,
  options: SgsaccOptions,
): Promise<TurnScore[]> {
  const { items, actionJobs } = turnJobs(turns, references, utterances, options);
  const checked = options.hallucination ? items.filter((x) => premiseOf(x.refs).check === 'checked') : [];
  const hallucinationJobs = checked.map(({ turn, refs, utterance }) => hallucinationJob(premiseOf(refs), turn.previousUserUtterance, utterance));
  const { actionVerdicts, hallucinationVerdicts } = await runPasses(actionJobs, hallucinationJobs, scorer);
  const verdicts = new Map<string, EntailmentVerdict>(hallucinationVerdicts.map((v, i) => [checked[i].turn.id, v]));
  return items.map((item) => turnScore(item, actionVerdicts, verdicts.get(item.turn.id) ?? null, options));
}

/** A turn to score: its stored references, the utterance scored, and its actions' jobs (null: no reference). */
interface TurnItem {
  turn: SgsaccTurn;
  refs: TurnReferences;
  utterance: string;
  jobs: (number | null)[];
}

/** One utterance => reference job per action that has a reference, with the context premises when on. */
function turnJobs(
  turns: SgsaccTurn[],
  references: Map<string, TurnReferences>,
  utterances: Map<string, string>,
  options: SgsaccOptions,
): { items: TurnItem[]; actionJobs: EntailmentJob[] } {
  const actionJobs: EntailmentJob[] = [];
  const items = turns.map((turn) => {
    const refs = references.get(turn.id);
    if (!refs) throw new Error(`no stored references for turn ${turn.id}`);
    const utterance = utterances.get(turn.id) ?? '';
    const jobs = refs.actions.map((a) => {
      if (a.reference === null) return null;
      const slotDescription = turn.actions.find((x) => x.id === a.actionId)?.slotDescription ?? '';
      const job: EntailmentJob = { premise: utterance, hypothesis: a.reference };
      if (options.context) {
        job.contextPremise = contextPremise(turn.previousUserUtterance, slotDescription, utterance);
        job.controlPremise = controlPremise(turn.previousUserUtterance, slotDescription);
      }
      actionJobs.push(job);
      return actionJobs.length - 1;
    });
    return { turn, refs, utterance, jobs };
  });
  return { items, actionJobs };
}

/** The action jobs and the hallucination jobs share each pass: three scorer calls in all. */
async function runPasses(
  actionJobs: EntailmentJob[],
  hallucinationJobs: EntailmentJob[],
  scorer: NliScorer,
): Promise<{ actionVerdicts: EntailmentVerdict[]; hallucinationVerdicts: EntailmentVerdict[] }> {
  const first = new PairBatch();
  const second = new PairBatch();
  const third = new PairBatch();
  const actionPasses = new EntailmentPasses(actionJobs, first);
  const halluc = new EntailmentPasses(hallucinationJobs, first);
  for (const passes of [actionPasses, halluc]) passes.addPlain();
  await first.run(scorer);
  for (const passes of [actionPasses, halluc]) passes.addRetries(second);
  await second.run(scorer);
  for (const passes of [actionPasses, halluc]) passes.addControls(third);
  await third.run(scorer);
  return { actionVerdicts: actionPasses.verdicts(), hallucinationVerdicts: halluc.verdicts() };
}

/** A turn's score: faithful when every action is entailed; unscorable (null) when an action has no reference. */
function turnScore(item: TurnItem, actionVerdicts: EntailmentVerdict[], hallucination: EntailmentVerdict | null, options: SgsaccOptions): TurnScore {
  const { turn, refs, utterance, jobs } = item;
  const actions: ActionScore[] = [];
  let scorable = true;
  refs.actions.forEach((a, i) => {
    const j = jobs[i];
    if (j === null || a.reference === null) {
      scorable = false;
      return;
    }
    actions.push(actionScore(a, a.reference, actionVerdicts[j]));
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
    utterance,
    previousUserUtterance: turn.previousUserUtterance,
    actions,
  };
  if (excluded.length > 0) {
    score.exclusionReasons = [...new Set(excluded.map((a) => a.reason).filter((r): r is ExclusionReason => !!r))];
  }
  if (options.hallucination) {
    score.hallucination = turnHallucination(premiseOf(refs), hallucination);
    score.label = fourWayLabel(score.faithful, score.hallucination.hallucinated);
  }
  // Scored once with every control verdict recorded; the control, when on, is a view of that.
  return options.contextControl ? applyContextControl(score, refs) : score;
}

/** One action's verdict against its stored reference, with how the reference itself was chosen. */
function actionScore(a: ActionReferenceChoice, reference: string, v: EntailmentVerdict): ActionScore {
  return {
    actionId: a.actionId,
    service: a.service,
    act: a.act,
    slot: a.slot,
    reference,
    entailed: v.entailed,
    entailment: v.entailment,
    plainEntailment: v.plainEntailment,
    ...(v.contextEntailment !== undefined ? { contextEntailment: v.contextEntailment } : {}),
    contextUsed: v.contextUsed,
    ...(v.contextUsed ? { contextOnly: v.contextOnly === true } : {}),
    referenceViaContext: a.contextUsed,
    ...(a.contextUsed && a.contextOnly !== undefined ? { referenceContextOnly: a.contextOnly } : {}),
    status: a.status,
  };
}

function premiseOf(refs: TurnReferences): NonNullable<TurnReferences['hallucination']> {
  if (!refs.hallucination) throw new Error(`no hallucination premise for turn ${refs.id}`);
  return refs.hallucination;
}
