import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../util/errors.js';
import { repairJsonlTail } from '../util/jsonl-append.js';
import { PairMap } from './pair-map.js';
import type { NliProbs } from './types.js';

/**
 * Probabilities already computed, keyed by (model key, premise, hypothesis). Scoring a system's
 * outputs and reranking its candidates ask for many of the same pairs; none is computed twice.
 * The optional file is JSON lines appended on flush, one model key per line, so one file can serve
 * several models and a crash loses at most the unflushed tail.
 */
/** Caches with a file, flushed when the process exits (Ctrl-C included, see src/cli/main.ts). */
const liveCaches = new Set<WeakRef<PairCache>>();
let exitHooked = false;
function flushOnExit(cache: PairCache): void {
  liveCaches.add(new WeakRef(cache));
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const ref of liveCaches) {
      try {
        ref.deref()?.flush();
      } catch {
        // exiting anyway: a cache that cannot be written only costs recomputation
      }
    }
  });
}

/**
 * In memory, within `maxBytes` (as estimated by entryBytes), the cache keeps GENERATIONS
 * generations: new pairs go into the youngest, and once it holds its share of the budget the oldest
 * is dropped whole and a new youngest begun. A pair found in an older generation moves to the
 * youngest, so pairs still in use survive and the ones unused for a while go: least recently used,
 * near enough, at no cost per hit beyond the lookups. With many small generations what is held
 * stays within 1/GENERATIONS of the budget once full (two halves made a server's memory swing by
 * half the budget at every drop). Unbounded (the default) nothing is dropped.
 */
export class PairCache {
  /** Generations of the budget: each drop frees an eighth of it. */
  static readonly GENERATIONS = 8;
  /** Youngest first. */
  private generations: PairMap<NliProbs>[] = [new PairMap<NliProbs>()];
  private youngBytes = 0;
  private dropped = 0;
  private unsaved: [string, string, NliProbs][] = [];
  /** Pairs held in memory before they are appended to the file. */
  static readonly FLUSH_EVERY = 256;

  constructor(
    readonly modelKey: string,
    readonly file?: string,
    /** Estimated bytes the pairs in memory may take; past it the least recently used are dropped. */
    readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {
    if (!(maxBytes > 0)) throw new InputError(`the pair cache's byte budget must be positive (got ${maxBytes})`);
    if (file) flushOnExit(this);
    if (file && existsSync(file)) {
      // readFileSync on a folder fails with an EISDIR that does not name the path.
      if (statSync(file).isDirectory()) throw new InputError('is a directory; --cache takes a JSON-lines file', { file });
      this.load(file);
    }
  }

  /**
   * One string for a pair, for callers that keep pairs in a plain Map or Set. JSON of the two, not
   * the two joined by a separator: a text may hold any separator (a NUL included), and then
   * ("a\0b", "c") and ("a", "b\0c") shared a key, so one of two distinct pairs was dropped.
   */
  static key(premise: string, hypothesis: string): string {
    return JSON.stringify([premise, hypothesis]);
  }

  private load(file: string): void {
    const lines = repairJsonlTail(file, readFileSync(file, 'utf8'), (r) => typeof r.m === 'string').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (line.trim() === '') continue;
      let rec: { m?: string; p?: string; h?: string; e?: number; n?: number; c?: number };
      try {
        rec = JSON.parse(line);
      } catch {
        // An interrupted append was already cut off above; anything left is real damage.
        throw new InputError('NLI cache file is corrupt (not JSON lines); delete it or pass another --cache', { file, where: `line ${i + 1}` });
      }
      // Every line of a cache names its model: anything else (a references or per-turn file, a
      // report) is some other output given as --cache, which appending would corrupt.
      if (typeof rec !== 'object' || rec === null || typeof rec.m !== 'string') {
        const kind = typeof (rec as { kind?: unknown } | null)?.kind === 'string' ? ` (it is a ${(rec as { kind: string }).kind} file)` : '';
        throw new InputError(`not an NLI cache${kind}; --cache takes a file of its own, left untouched here`, { file, where: `line ${i + 1}` });
      }
      if (rec.m !== this.modelKey) continue;
      if (typeof rec.p !== 'string' || typeof rec.h !== 'string' || typeof rec.e !== 'number' || typeof rec.n !== 'number' || typeof rec.c !== 'number') {
        throw new InputError('NLI cache record lacks p/h/e/n/c', { file, where: `line ${i + 1}` });
      }
      this.remember(rec.p, rec.h, { entailment: rec.e, neutral: rec.n, contradiction: rec.c });
    }
  }

  /**
   * What a pair costs in memory, estimated high: both texts as UTF-16 (a premise shared by many
   * pairs is stored once, but counted for each), the probabilities object with its three numbers,
   * and the two maps' entries.
   */
  static entryBytes(premise: string, hypothesis: string): number {
    return 2 * (premise.length + hypothesis.length) + 200;
  }

  get size(): number {
    let n = 0;
    for (const g of this.generations) n += g.size;
    return n;
  }

  /** Pairs dropped to stay within maxBytes since the cache was made. */
  get evictions(): number {
    return this.dropped;
  }

  get(premise: string, hypothesis: string): NliProbs | undefined {
    const gens = this.generations;
    const hit = gens[0].get(premise, hypothesis);
    if (hit !== undefined) return hit;
    for (let g = 1; g < gens.length; g++) {
      const older = gens[g].get(premise, hypothesis);
      if (older === undefined) continue;
      // Still in use: into the youngest generation, so it outlives its own.
      gens[g].delete(premise, hypothesis);
      this.addYoung(premise, hypothesis, older);
      return older;
    }
    return undefined;
  }

  /** Add to memory unless held already; true when added. */
  private remember(premise: string, hypothesis: string, probs: NliProbs): boolean {
    for (const g of this.generations) if (g.has(premise, hypothesis)) return false;
    this.addYoung(premise, hypothesis, probs);
    return true;
  }

  private addYoung(premise: string, hypothesis: string, probs: NliProbs): void {
    const bytes = PairCache.entryBytes(premise, hypothesis);
    // Each generation stays within its share of the budget, so all of them within all of it.
    if (this.youngBytes + bytes > this.maxBytes / PairCache.GENERATIONS && this.generations[0].size > 0) {
      if (this.generations.length === PairCache.GENERATIONS) this.dropped += this.generations.pop()!.size;
      this.generations.unshift(new PairMap<NliProbs>());
      this.youngBytes = 0;
    }
    this.generations[0].add(premise, hypothesis, probs);
    this.youngBytes += bytes;
  }

  set(premise: string, hypothesis: string, probs: NliProbs): void {
    if (!this.remember(premise, hypothesis, probs)) return;
    if (!this.file) return;
    this.unsaved.push([premise, hypothesis, probs]);
    // Written as it grows, not only at the end: a long run stopped with Ctrl-C or killed keeps
    // what it paid for (the append tolerates a torn tail, see repairJsonlTail).
    if (this.unsaved.length >= PairCache.FLUSH_EVERY) this.flush();
  }

  /** Append what was computed since the last flush to the cache file (no-op in memory-only mode). */
  flush(): number {
    if (!this.file || this.unsaved.length === 0) return 0;
    mkdirSync(path.dirname(path.resolve(this.file)), { recursive: true });
    const text = this.unsaved
      .map(([p, h, r]) => JSON.stringify({ m: this.modelKey, p, h, e: r.entailment, n: r.neutral, c: r.contradiction }))
      .join('\n');
    appendFileSync(this.file, `${text}\n`);
    const n = this.unsaved.length;
    this.unsaved = [];
    return n;
  }
}
