import type { NliRunner, NliRunnerStats } from '../nli/runner.js';
import { emptyStats } from '../nli/runner/stats.js';
import type { NliPair, NliProbs, ScoreOptions } from '../nli/types.js';

type Progress = (done: number, issued: number) => void;

function added(a: NliRunnerStats, b: NliRunnerStats): NliRunnerStats {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof NliRunnerStats)[]) out[k] += b[k];
  return out;
}

/**
 * The server's NLI runner: the one it opened, replaced by a new one once it is lost (its inference
 * thread gone). The requests that were waiting on the lost runner have failed with its error (500);
 * the next request closes it, opens another and is served. Counters and progress carry on across
 * runners, as the metrics read them.
 */
export class ReopeningRunner implements NliRunner {
  private retired: NliRunnerStats = emptyStats();
  private retiredDone = 0;
  private currentDone = 0;
  private generation = 0;
  private reopening: Promise<NliRunner> | undefined;
  /** The lost runner last retired: still `current` while no replacement could be opened. */
  private retiredRunner: NliRunner | undefined;

  private constructor(
    private current: NliRunner,
    private readonly openRunner: (onProgress: Progress) => Promise<NliRunner>,
    private readonly onProgress: Progress,
    private readonly notice: (line: string) => void,
  ) {}

  static async open(openRunner: (onProgress: Progress) => Promise<NliRunner>, onProgress: Progress, notice: (line: string) => void): Promise<ReopeningRunner> {
    let self: ReopeningRunner | undefined;
    const first = await openRunner((done, issued) => self?.progress(0, done, issued));
    self = new ReopeningRunner(first, openRunner, onProgress, notice);
    return self;
  }

  private progress(generation: number, done: number, issued: number): void {
    if (generation !== this.generation) return;
    this.currentDone = done;
    this.onProgress(this.retiredDone + done, this.retired.issued + issued);
  }

  private live(): Promise<NliRunner> {
    if (!this.current.lost) return Promise.resolve(this.current);
    this.reopening ??= this.replace().finally(() => {
      this.reopening = undefined;
    });
    return this.reopening;
  }

  private async replace(): Promise<NliRunner> {
    const lost = this.current;
    this.notice(`NLI runner lost (${lost.lost?.message}); opening a new one`);
    // A failed open leaves the lost runner current and the next request tries again: it is retired
    // (its counters moved into `retired`) once only, or each try added them again to the metrics.
    if (this.retiredRunner !== lost) {
      // Its calls have all failed; closing it flushes its cache, so the new runner starts from it.
      await lost.close().catch(() => undefined);
      this.retired = added(this.retired, lost.stats());
      this.retiredDone += this.currentDone;
      this.currentDone = 0;
      this.retiredRunner = lost;
    }
    const generation = ++this.generation;
    this.current = await this.openRunner((done, issued) => this.progress(generation, done, issued));
    return this.current;
  }

  get modelSignature() {
    return this.current.modelSignature;
  }

  get device(): 'cpu' | 'cuda' {
    return this.current.device;
  }

  get maxLength(): number {
    return this.current.maxLength;
  }

  get cacheKey(): string {
    return this.current.cacheKey;
  }

  score(pairs: NliPair[], options?: ScoreOptions): Promise<NliProbs[]> {
    // The usual case stays synchronous, so pairs of one tick still share batches.
    if (!this.current.lost) return this.current.score(pairs, options);
    return this.live().then((r) => r.score(pairs, options));
  }

  scoreOne(pair: NliPair): Promise<NliProbs> {
    return this.score([pair]).then((r) => r[0]);
  }

  prefetch(texts: Iterable<string>): void {
    if (!this.current.lost) this.current.prefetch(texts);
  }

  stats(): NliRunnerStats {
    // A lost runner left current by a failed open is already counted in `retired`.
    if (this.current === this.retiredRunner) return { ...this.retired };
    return added(this.retired, this.current.stats());
  }

  flushCache(): number {
    return this.current.flushCache();
  }

  async close(): Promise<void> {
    await this.reopening?.catch(() => undefined);
    await this.current.close();
  }
}
