/**
 * Where a run's main-thread time goes, by stage, for `npm run bench:pipeline`. Code says which stage
 * it is entering; the time since the last switch is charged to the stage that was running. One
 * clock per process (kept on globalThis, so a probe preloaded by the bench reads the same one even
 * when it loads another copy of this module), always on: a switch costs one `performance.now()`,
 * and switches happen per batch and per chunk, never per pair.
 */
export type Stage =
  | 'startup'
  | 'load'
  | 'rules'
  | 'pairs'
  | 'tokenize'
  | 'feeds'
  | 'model'
  | 'results'
  | 'wait'
  | 'decisions'
  | 'write'
  | 'other';

export class StageClock {
  private current: Stage = 'startup';
  private since = performance.now();
  private readonly totals = new Map<Stage, number>();

  /** Charge the time so far to the running stage and start `stage`; returns the stage it replaced. */
  enter(stage: Stage): Stage {
    const now = performance.now();
    const previous = this.current;
    this.totals.set(previous, (this.totals.get(previous) ?? 0) + (now - this.since));
    this.current = stage;
    this.since = now;
    return previous;
  }

  get stage(): Stage {
    return this.current;
  }

  /** Milliseconds per stage so far, the running one included. */
  snapshot(): Partial<Record<Stage, number>> {
    const out: Partial<Record<Stage, number>> = Object.fromEntries(this.totals);
    out[this.current] = (out[this.current] ?? 0) + (performance.now() - this.since);
    return out;
  }
}

const KEY = Symbol.for('todeval.stage-clock');
const holder = globalThis as unknown as Record<symbol, StageClock | undefined>;
export const stageClock: StageClock = (holder[KEY] ??= new StageClock());
