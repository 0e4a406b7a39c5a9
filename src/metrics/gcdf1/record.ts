/**
 * Per-dialogue record of why a dialogue scored as it did: the behaviours detected (by metric, then
 * behaviour name, then domain) and the per-domain scores. The names follow the reference's output
 * hierarchy (e.g. `multiple_constraint_informs.repeated_while_booking`) so results can be compared.
 */
export type MetricName = 'igcd_f1' | 'rgcd_f1';

export interface F1Scores {
  f1: number;
  precision: number;
  recall: number;
}

export class DialogueRecord {
  readonly behaviours: Record<MetricName, Record<string, Record<string, unknown[]>>> = { igcd_f1: {}, rgcd_f1: {} };
  readonly scores: Record<MetricName, Record<string, F1Scores>> = { igcd_f1: {}, rgcd_f1: {} };

  constructor(readonly dialogueId: string) {}

  /** Log `item` under metric/behaviour/domain; `domain` is '*' for dialogue-level observations. */
  note(metric: MetricName, behaviour: string, domain: string, item: unknown): void {
    const byDomain = (this.behaviours[metric][behaviour] ??= {});
    (byDomain[domain] ??= []).push(item);
  }

  score(metric: MetricName, key: string, s: F1Scores): void {
    this.scores[metric][key] = s;
  }
}

/** F1 of a multiset of hypothesised items against a multiset of true items (the reference's compute_f1). */
export function computeF1(reference: string[], hypothesis: string[]): F1Scores {
  const ref = new Map<string, number>();
  for (const r of reference) ref.set(r, (ref.get(r) ?? 0) + 1);
  const hyp = new Map<string, number>();
  for (const h of hypothesis) hyp.set(h, (hyp.get(h) ?? 0) + 1);
  let truePositive = 0;
  for (const [k, n] of hyp) truePositive += Math.min(n, ref.get(k) ?? 0);
  const precision = hypothesis.length ? truePositive / hypothesis.length : 1.0;
  const recall = reference.length ? truePositive / reference.length : 1.0;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0.0;
  return { f1, precision, recall };
}
