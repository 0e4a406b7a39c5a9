/**
 * A map keyed by (premise, hypothesis), as two levels of maps. A joined `premise\0hypothesis` key
 * is a new string per lookup, hashed over its whole length every time, and one copy of the premise
 * per stored pair; here the premise (shared by dozens of pairs, usually the same string object,
 * whose hash V8 keeps) is hashed once and stored once.
 */
export class PairMap<V> {
  private readonly byPremise = new Map<string, Map<string, V>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(premise: string, hypothesis: string): V | undefined {
    return this.byPremise.get(premise)?.get(hypothesis);
  }

  has(premise: string, hypothesis: string): boolean {
    return this.byPremise.get(premise)?.has(hypothesis) ?? false;
  }

  set(premise: string, hypothesis: string, value: V): void {
    let inner = this.byPremise.get(premise);
    if (inner === undefined) {
      inner = new Map();
      this.byPremise.set(premise, inner);
    }
    const before = inner.size;
    inner.set(hypothesis, value);
    this.count += inner.size - before;
  }

  /** Set the value unless the pair has one already; true when it was added. */
  add(premise: string, hypothesis: string, value: V): boolean {
    let inner = this.byPremise.get(premise);
    if (inner === undefined) {
      inner = new Map();
      this.byPremise.set(premise, inner);
    } else if (inner.has(hypothesis)) return false;
    inner.set(hypothesis, value);
    this.count++;
    return true;
  }

  delete(premise: string, hypothesis: string): boolean {
    const inner = this.byPremise.get(premise);
    if (inner === undefined || !inner.delete(hypothesis)) return false;
    this.count--;
    if (inner.size === 0) this.byPremise.delete(premise);
    return true;
  }

  clear(): void {
    this.byPremise.clear();
    this.count = 0;
  }
}
