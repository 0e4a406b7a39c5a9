/**
 * N-grams as small integers: an n-gram is the id of its first n - 1 symbols plus its last symbol,
 * interned in an open-addressing hash table of integer pairs. A line's n-grams of every order are
 * then found with integer work only, one lookup each, extending the (n - 1)-gram's id; no
 * substring is made or hashed as a string, which is what chrF's character n-grams spent most of
 * their time (and garbage) on. Two n-grams have the same id exactly when they are the same
 * sequence of symbols from the same root.
 *
 * The table only grows. Callers intern the references' n-grams and look a hypothesis' up without
 * interning (`find`): an n-gram that no reference has cannot match, and neither can any longer one
 * that extends it, so the table's size is bounded by the references whatever is scored against them.
 */

/** Ids below this are roots: the empty n-gram of a kind of symbol (characters, words). */
export const FIRST_NODE = 2;

export class NgramIds {
  /** Open addressing: node id + 1, 0 where empty. */
  private slots: Int32Array;
  private mask: number;
  private parents: Int32Array;
  private symbols: Int32Array;
  private next = FIRST_NODE;

  constructor(expected = 256) {
    let cap = 16;
    while (cap < 2 * expected) cap *= 2;
    this.slots = new Int32Array(cap);
    this.mask = cap - 1;
    this.parents = new Int32Array(cap >>> 1);
    this.symbols = new Int32Array(cap >>> 1);
  }

  /** One more than the largest id given out: the length an array indexed by id needs. */
  get size(): number {
    return this.next;
  }

  /** The id of `parent` extended by `symbol`, or -1 when it was never interned. */
  find(parent: number, symbol: number): number {
    const slots = this.slots;
    for (let h = hash(parent, symbol) & this.mask; ; h = (h + 1) & this.mask) {
      const s = slots[h];
      if (s === 0) return -1;
      if (this.parents[s - 1] === parent && this.symbols[s - 1] === symbol) return s - 1;
    }
  }

  /** The id of `parent` extended by `symbol`, given a new one the first time. */
  intern(parent: number, symbol: number): number {
    const slots = this.slots;
    let h = hash(parent, symbol) & this.mask;
    for (; ; h = (h + 1) & this.mask) {
      const s = slots[h];
      if (s === 0) break;
      if (this.parents[s - 1] === parent && this.symbols[s - 1] === symbol) return s - 1;
    }
    const id = this.next++;
    if (id >= this.parents.length) this.grow();
    this.parents[id] = parent;
    this.symbols[id] = symbol;
    if (this.slots !== slots) this.place(id);
    else slots[h] = id + 1;
    return id;
  }

  /** Twice the room, every node placed again (a load factor of at most one half keeps probes short). */
  private grow(): void {
    const cap = this.slots.length * 2;
    const parents = new Int32Array(cap >>> 1);
    parents.set(this.parents);
    const symbols = new Int32Array(cap >>> 1);
    symbols.set(this.symbols);
    this.parents = parents;
    this.symbols = symbols;
    this.slots = new Int32Array(cap);
    this.mask = cap - 1;
    for (let id = FIRST_NODE; id < this.next - 1; id++) this.place(id);
  }

  private place(id: number): void {
    let h = hash(this.parents[id], this.symbols[id]) & this.mask;
    while (this.slots[h] !== 0) h = (h + 1) & this.mask;
    this.slots[h] = id + 1;
  }
}

function hash(parent: number, symbol: number): number {
  let h = Math.imul(parent, 0x9e3779b1) ^ Math.imul(symbol + 0x7f4a7c15, 0x85ebca77);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 13);
}
