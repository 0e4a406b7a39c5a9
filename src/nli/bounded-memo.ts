/**
 * Token ids per text, bounded in bytes: a few generations, the youngest receiving new entries; once
 * it holds its share of the budget the oldest is dropped whole (a long-running server's bound; its
 * RSS stays flat however many distinct texts it is sent). Dropping a generation is cheaper than
 * least-recently-used bookkeeping on every hit, the texts that matter (a system turn, a template)
 * come back within a few calls and are memoized again, and a drop frees a quarter of the budget,
 * not all of it (starting over made a server's memory swing by the whole budget).
 */
export class BoundedMemo {
  static readonly GENERATIONS = 4;
  /** Youngest first. */
  private generations: Map<string, Int32Array>[] = [new Map()];
  private youngBytes = 0;

  constructor(readonly maxBytes: number) {}

  /** What an entry costs: the key (UTF-16 at worst), the ids, and the map's and objects' overhead. */
  static entryBytes(text: string, ids: Int32Array): number {
    return 2 * text.length + 4 * ids.length + 160;
  }

  get size(): number {
    let n = 0;
    for (const g of this.generations) n += g.size;
    return n;
  }

  get(text: string): Int32Array | undefined {
    for (const g of this.generations) {
      const ids = g.get(text);
      if (ids !== undefined) return ids;
    }
    return undefined;
  }

  set(text: string, ids: Int32Array): void {
    if (this.get(text) !== undefined) return;
    const cost = BoundedMemo.entryBytes(text, ids);
    if (this.youngBytes + cost > this.maxBytes / BoundedMemo.GENERATIONS && this.generations[0].size > 0) {
      if (this.generations.length === BoundedMemo.GENERATIONS) this.generations.pop();
      this.generations.unshift(new Map());
      this.youngBytes = 0;
    }
    this.generations[0].set(text, ids);
    this.youngBytes += cost;
  }

  clear(): void {
    this.generations = [new Map()];
    this.youngBytes = 0;
  }
}
