import { mkdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeFileAtomic } from './atomic-write.js';

/**
 * The user's cache folder for todeval: `$XDG_CACHE_HOME/todeval`, else `~/.cache/todeval`. One rule
 * for every cache: an empty `$XDG_CACHE_HOME` counts as unset, as the XDG spec says (`||`, never `??`).
 */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env, app = 'todeval'): string {
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), app);
}

/**
 * Size and mtime of each file, in the order given: what a kept value is checked against. Undefined
 * when one is missing (nothing is kept then: the read that follows names the file).
 */
export function filesStamp(files: readonly string[]): string | undefined {
  const parts: string[] = [];
  for (const f of files) {
    try {
      const st = statSync(f);
      parts.push(`${st.size}|${st.mtimeMs}`);
    } catch {
      return undefined;
    }
  }
  return parts.join('\n');
}

/**
 * Values derived from files, kept in memory by key (a path, or the files' paths) with the files'
 * stamp and reused only while the stamp is the same: one entry a key, replaced when the files
 * change, so a long-lived process (serve, stdio) never grows an entry for every version of a file.
 * Used by the MultiWOZ ground truth, database and booked domains (held-data.ts) and content digests.
 */
export class StampedCache<V> {
  private readonly entries = new Map<string, { stamp: string; value: V }>();

  /** The kept value of `key` while its stamp is `stamp`; else `make()`'s, kept unless the stamp is undefined. */
  get(key: string, stamp: string | undefined, make: () => V): V {
    const held = stamp === undefined ? undefined : this.entries.get(key);
    if (held && held.stamp === stamp) return held.value;
    const value = make();
    if (stamp !== undefined) this.entries.set(key, { stamp, value });
    return value;
  }

  /** Whether `key` is kept with this stamp. */
  has(key: string, stamp: string): boolean {
    return this.entries.get(key)?.stamp === stamp;
  }

  /** Keeps `value` for `key` at `stamp` (a value made elsewhere: a digest taken while reading). */
  set(key: string, stamp: string, value: V): void {
    this.entries.set(key, { stamp, value });
  }
}

/** What a StampedFileCache keeps when it writes. */
export interface StampedFileCacheBounds {
  /** At most this many entries: the ones written longest ago go first. */
  maxEntries?: number;
  /** Entries to keep (e.g. those whose file still exists); the others are dropped at the next write. */
  keep?: (key: string) => boolean;
}

/**
 * A StampedCache of strings persisted as one JSON file (`{key: {stamp, value}}`), for values that
 * cost seconds to recompute and outlive the process (a model file's digest). The file is read on
 * each lookup and written after a new value: a missing or foreign file is an empty cache, and one
 * that cannot be written only costs recomputing next time. Bounded (`bounds`), it stays small
 * however many keys come and go: unbounded, the digest memo of a machine that builds models in
 * temporary folders had grown to thousands of entries for files long gone, read whole at every
 * model open.
 */
export class StampedFileCache {
  constructor(
    readonly file: string,
    private readonly bounds: StampedFileCacheBounds = {},
  ) {}

  private read(): Record<string, { stamp: string; value: string }> {
    try {
      const doc = JSON.parse(readFileSync(this.file, 'utf8')) as unknown;
      return doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, { stamp: string; value: string }>) : {};
    } catch {
      return {};
    }
  }

  /** The kept value of `key` while its stamp is `stamp`; else `make()`'s, kept (one entry a key). */
  async get(key: string, stamp: string, make: () => Promise<string>): Promise<string> {
    const held = this.read()[key];
    if (held && held.stamp === stamp && typeof held.value === 'string') return held.value;
    const value = await make();
    try {
      // Read again: another process may have added its own entry meanwhile (entries of another shape are dropped).
      // The newest entry last, so that a bound drops the ones written longest ago.
      const { keep, maxEntries = Number.POSITIVE_INFINITY } = this.bounds;
      const kept = Object.entries(this.read()).filter(([k, e]) => k !== key && typeof e?.stamp === 'string' && typeof e.value === 'string' && (keep === undefined || keep(k)));
      kept.push([key, { stamp, value }]);
      mkdirSync(path.dirname(this.file), { recursive: true });
      writeFileAtomic(this.file, JSON.stringify(Object.fromEntries(kept.slice(Math.max(0, kept.length - maxEntries)))));
    } catch {
      // a read-only home only costs recomputing next time
    }
    return value;
  }
}
