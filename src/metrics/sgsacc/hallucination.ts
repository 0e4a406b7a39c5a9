import { argmaxLabel, type NliScorer } from '../../nli/types.js';
import { PairBatch } from './batch.js';
import { sentence } from './premise.js';
import type {
  FourWayLabel,
  HallucinationExclusionReason,
  HallucinationPremise,
  SgsaccOptions,
  SgsaccTurn,
  TurnHallucination,
  TurnReferences,
} from './types.js';

/**
 * Acts with no content to check (rules/general.json, rules/multiwoz/general.json: fixed phatic
 * sentences, no negatives). A turn made only of them is not checked for hallucination: its
 * reference would be one of several interchangeable pleasantries ("Have a good day." for "Bye!"),
 * so NLI between them measures paraphrase, not added facts. In a mixed turn their reference stays
 * in the premise, so "Anything else?" after the facts is covered by the REQ_MORE sentence.
 */
const CONTENT_FREE_ACTS = new Set(['goodbye', 'req_more', 'reqmore', 'bye', 'greet', 'welcome', 'thank']);

export function isContentFreeAct(act: string): boolean {
  return CONTENT_FREE_ACTS.has(act.toLowerCase());
}

/** Premise of the facts => text direction: the references in action order, each closed as a sentence. */
export function joinReferences(references: string[]): string {
  return references.map(sentence).filter((s) => s !== '').join(' ');
}

/** The previous user turn before the facts: a system may echo what the user said. */
export function withUserTurn(previousUserUtterance: string, premise: string): string | undefined {
  const user = previousUserUtterance.trim();
  return user === '' ? undefined : `${user} ${premise}`;
}

/**
 * The facts => text job of a premise: the user turn in front of the facts is the retry, and the user
 * turn alone is the control (an utterance the user turn alone entails owes nothing to the facts).
 */
export function hallucinationJob(
  plan: Pick<HallucinationPremise, 'premise' | 'contextPremise'>,
  previousUserUtterance: string,
  hypothesis: string,
): EntailmentJob {
  const job: EntailmentJob = { premise: plan.premise, hypothesis };
  if (plan.contextPremise !== undefined) {
    job.contextPremise = plan.contextPremise;
    job.controlPremise = previousUserUtterance.trim();
  }
  return job;
}

/** What the premise of a turn is, before any model call. */
export function planPremise(
  turn: Pick<SgsaccTurn, 'previousUserUtterance'>,
  actions: { act: string; reference: string | null }[],
  options: Pick<SgsaccOptions, 'context'>,
): Pick<HallucinationPremise, 'check' | 'premise' | 'contextPremise'> {
  if (actions.every((a) => isContentFreeAct(a.act))) return { check: 'content-free', premise: '' };
  if (actions.some((a) => a.reference === null)) return { check: 'unscorable', premise: '' };
  const premise = joinReferences(actions.map((a) => a.reference!));
  const contextPremise = options.context ? withUserTurn(turn.previousUserUtterance, premise) : undefined;
  return contextPremise ? { check: 'checked', premise, contextPremise } : { check: 'checked', premise };
}

/**
 * Does the premise entail the hypothesis, retrying with the context premise; when only the context
 * premise entails, the control premise (the context without what is judged) is checked too.
 */
export interface EntailmentJob {
  premise: string;
  contextPremise?: string;
  /** The context alone: when it entails the hypothesis as well, the rescue is context-only. */
  controlPremise?: string;
  hypothesis: string;
}

export interface EntailmentVerdict {
  /** Entailed by the plain premise, or by the context premise (context-only rescues included). */
  entailed: boolean;
  /** Entailment probability under the premise that decided. */
  entailment: number;
  /** Entailment probability under the plain premise. */
  plainEntailment: number;
  /** Entailment probability under the context premise, when the retry ran. */
  contextEntailment?: number;
  /** Only the context premise entailed. */
  contextUsed: boolean;
  /** With contextUsed: the control premise entails too (see SgsaccOptions.contextControl). */
  contextOnly?: boolean;
}

/**
 * The three passes of a set of jobs, split so callers can put the pairs into batches they already
 * send (one scorer call per pass for the whole chunk): `addPlain` before the first pass runs,
 * `addRetries` after it, `addControls` after the second, `verdicts` after the third. The verdicts
 * record the control without applying it (applyContextControl does), so one set of verdicts
 * serves a run with the control on and one with it off.
 */
export class EntailmentPasses {
  private plain: number[] = [];
  private retry: (number | null)[] = [];
  private control: (number | null)[] = [];
  private second: PairBatch | undefined;
  private third: PairBatch | undefined;

  constructor(
    readonly jobs: EntailmentJob[],
    private readonly first: PairBatch,
  ) {}

  addPlain(): void {
    this.plain = this.jobs.map((j) => this.first.add(j.premise, j.hypothesis));
  }

  addRetries(second: PairBatch): void {
    this.second = second;
    this.retry = this.jobs.map((j, i) =>
      j.contextPremise !== undefined && !entails(this.first, this.plain[i]) ? second.add(j.contextPremise, j.hypothesis) : null,
    );
  }

  /** One pair per context rescue: the premise without what is judged. */
  addControls(third: PairBatch): void {
    this.third = third;
    this.control = this.jobs.map((j, i) => {
      const r = this.retry[i];
      const rescued = r !== null && r !== undefined && entails(this.second!, r);
      return rescued && j.controlPremise ? third.add(j.controlPremise, j.hypothesis) : null;
    });
  }

  verdicts(): EntailmentVerdict[] {
    return this.jobs.map((_, i) => {
      const plain = this.first.get(this.plain[i]);
      const r = this.retry[i];
      const ctx = r === null || r === undefined ? undefined : this.second!.get(r);
      const withCtx = ctx !== undefined ? { contextEntailment: ctx.entailment } : {};
      if (argmaxLabel(plain) === 'entailment') return { entailed: true, entailment: plain.entailment, plainEntailment: plain.entailment, ...withCtx, contextUsed: false };
      if (ctx && argmaxLabel(ctx) === 'entailment') {
        const c = this.control[i];
        const contextOnly = c !== null && c !== undefined && entails(this.third!, c);
        return { entailed: true, entailment: ctx.entailment, plainEntailment: plain.entailment, ...withCtx, contextUsed: true, contextOnly };
      }
      return { entailed: false, entailment: plain.entailment, plainEntailment: plain.entailment, ...withCtx, contextUsed: false };
    });
  }
}

function entails(batch: PairBatch, handle: number): boolean {
  return argmaxLabel(batch.get(handle)) === 'entailment';
}

/** The most pairs one job costs: the plain premise, and with context its retry and that retry's control. */
export function entailmentJobPairs(context: boolean): number {
  return context ? 3 : 1;
}

/** Runs jobs on their own passes (the third only when the context rescued something). */
export async function checkEntailment(jobs: EntailmentJob[], scorer: NliScorer): Promise<EntailmentVerdict[]> {
  const first = new PairBatch();
  const second = new PairBatch();
  const third = new PairBatch();
  const passes = new EntailmentPasses(jobs, first);
  passes.addPlain();
  await first.run(scorer);
  passes.addRetries(second);
  await second.run(scorer);
  passes.addControls(third);
  await third.run(scorer);
  return passes.verdicts();
}

/**
 * Builds each turn's hallucination premise from its stored references and validates it on the
 * gold utterance, as the omission side validates references: the gold utterance must be entailed
 * by the premise (or by the premise with the user turn). Turns whose gold fails, and turns the
 * omission side already excluded, are excluded with their reasons. Sets `refs.hallucination` and
 * the ground truth's own hallucination verdict and label (the gold check *is* its score).
 */
export async function addHallucinationPremises(
  turns: SgsaccTurn[],
  refs: Map<string, TurnReferences>,
  scorer: NliScorer,
  options: SgsaccOptions,
): Promise<void> {
  const planned = turns.map((turn) => {
    const r = refs.get(turn.id)!;
    const plan = planPremise(turn, r.actions, options);
    const gold = turn.utterance.trim();
    const job = plan.check === 'checked' && gold !== '' ? hallucinationJob(plan, turn.previousUserUtterance, turn.utterance) : null;
    return { turn, r, plan, job };
  });
  const jobs = planned.filter((p) => p.job !== null);
  const verdicts = await checkEntailment(jobs.map((p) => p.job!), scorer);
  const byTurn = new Map(jobs.map((p, i) => [p.turn.id, verdicts[i]]));

  for (const { turn, r, plan } of planned) {
    const v = byTurn.get(turn.id);
    const reasons: HallucinationExclusionReason[] = [];
    if (r.actions.length === 0 || r.actions.some((a) => a.status === 'excluded')) reasons.push('references-excluded');
    if (plan.check === 'checked') {
      if (!v) reasons.push('no-ground-truth');
      else if (!v.entailed) reasons.push('gold-not-entailed');
    }
    const premise: HallucinationPremise = {
      ...plan,
      status: !options.validation ? 'unchecked' : reasons.length > 0 ? 'excluded' : 'validated',
      goldEntailed: v ? v.entailed : null,
      goldEntailment: v ? v.entailment : null,
      goldContextUsed: v?.contextUsed ?? false,
      ...(v?.contextUsed ? { goldContextOnly: v.contextOnly === true } : {}),
    };
    if (options.validation && reasons.length > 0) premise.reasons = reasons;
    r.hallucination = premise;
    if (r.groundTruth) {
      r.groundTruth.hallucination = turnHallucination(premise, v ?? null);
      r.groundTruth.label = fourWayLabel(r.groundTruth.faithful, r.groundTruth.hallucination.hallucinated);
    }
  }
}

/** A system's hallucination outcome on a turn, from its premise and the verdict on its utterance. */
export function turnHallucination(premise: HallucinationPremise, verdict: EntailmentVerdict | null): TurnHallucination {
  const out: TurnHallucination = {
    check: premise.check,
    hallucinated: premise.check === 'checked' && verdict ? !verdict.entailed : null,
    entailment: premise.check === 'checked' && verdict ? verdict.entailment : null,
    contextUsed: verdict?.contextUsed ?? false,
    ...(verdict?.contextUsed ? { contextOnly: verdict.contextOnly === true } : {}),
    validation: premise.status,
  };
  if (premise.reasons) out.exclusionReasons = premise.reasons;
  return out;
}

/**
 * OK / omission / hallucination / both (Dušek & Kasner 2020). A turn not checked for hallucination
 * (content-free, or nothing to hear) takes the omission side's label; an unscorable turn has none.
 */
export function fourWayLabel(faithful: boolean | null, hallucinated: boolean | null): FourWayLabel | null {
  if (faithful === null) return null;
  if (hallucinated === true) return faithful ? 'hallucination' : 'both';
  return faithful ? 'ok' : 'omission';
}
