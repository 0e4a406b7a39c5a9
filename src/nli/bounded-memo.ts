/**
 * Token ids per text, bounded in bytes: past the budget the memo starts over (a long-running
 * server's bound; its RSS stays flat however many distinct texts it is sent). Starting over is
 * cheaper than least-recently-used bookkeeping on every hit, and the texts that matter (a system
 * turn, a template) come back within a few calls and are memoized again.
 */
export class BoundedMemo {
  private readonly map = new Map<string, Int32Array>();
  private bytes = 0;

  constructor(readonly maxBytes: number) {}

  /** What an entry costs: the key (UTF-16 at worst), the ids, and the map's and objects' overhead. */
  static entryBytes(text: string, ids: Int32Array): number {
    return 2 * text.length + 4 * ids.length + 160;
  }

  get size(): number {
    return this.map.size;
  }

  get(text: string): Int32Array | undefined {
    return this.map.get(text);
  }

  set(text: string, ids: Int32Array): void {
    const cost = BoundedMemo.entryBytes(text, ids);
    if (this.bytes + cost > this.maxBytes) this.clear();
    if (this.map.has(text)) return;
    this.map.set(text, ids);
    this.bytes += cost;
  }

  clear(): void {
    this.map.clear();
    this.bytes = 0;
  }
}
