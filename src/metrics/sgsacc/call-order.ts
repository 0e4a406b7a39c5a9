import type { NliModelSignature, NliPair, NliProbs, NliScorer } from '../../nli/types.js';

interface Held {
  pairs: NliPair[];
  resolve: (r: NliProbs[]) => void;
  reject: (e: unknown) => void;
}

/**
 * Lets several chunks be scored at once while the scorer sees their calls in the order of a run
 * that scores one chunk after another: each chunk gets a lane, and a lane's calls reach the scorer
 * only once every earlier lane is closed (has made its last call). Each call is batched on its
 * own (`separate`), so the scorer's batches, and which call computes a pair that two calls share,
 * are the same as one chunk at a time; the later chunk's host work (building its pairs, encoding its
 * texts) meanwhile overlaps the model's work on the earlier one.
 */
export class CallOrder {
  private readonly lanes: Lane[] = [];

  constructor(readonly scorer: NliScorer) {}

  /** A lane after every lane handed out so far. */
  lane(): Lane {
    const lane = new Lane(this);
    this.lanes.push(lane);
    return lane;
  }

  /** @internal */
  isHead(lane: Lane): boolean {
    return this.lanes[0] === lane;
  }

  /** @internal The head lane closed: the next lane's held calls go (and so on past closed ones). */
  advance(): void {
    for (;;) {
      const head = this.lanes[0];
      if (head === undefined) return;
      head.release();
      if (!head.closed) return;
      this.lanes.shift();
    }
  }

  /** Give up: every held call fails with `e`, and every lane is closed. */
  abort(e: unknown): void {
    for (const lane of this.lanes.splice(0)) lane.abort(e);
  }
}

export class Lane implements NliScorer {
  private held: Held[] = [];
  closed = false;

  constructor(private readonly order: CallOrder) {}

  get modelSignature(): NliModelSignature {
    return this.order.scorer.modelSignature;
  }

  score(pairs: NliPair[]): Promise<NliProbs[]> {
    if (this.closed) return Promise.reject(new Error('this lane is closed'));
    if (this.order.isHead(this)) return this.order.scorer.score(pairs, { separate: true });
    return new Promise<NliProbs[]>((resolve, reject) => this.held.push({ pairs, resolve, reject }));
  }

  prefetch(texts: Iterable<string>): void {
    this.order.scorer.prefetch?.(texts);
  }

  /** No more calls from this lane: the next one's may go. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.order.isHead(this)) this.order.advance();
  }

  /** @internal Send the held calls, in the order they were made. */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const h of held) this.order.scorer.score(h.pairs, { separate: true }).then(h.resolve, h.reject);
  }

  /** @internal */
  abort(e: unknown): void {
    this.closed = true;
    const held = this.held;
    this.held = [];
    for (const h of held) h.reject(e);
  }
}
