// The one stamped cache (issue 43): a value derived from files is reused only while their sizes and
// mtimes hold, one entry a key; the persisted form (the ONNX digest memo) survives the process and
// reads a file of another shape as empty; one cache-folder rule.
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesStamp, StampedCache, StampedFileCache, userCacheDir } from '../../src/util/stamped-cache.js';
import { tempDir } from '../helpers/temp.js';

describe('StampedCache', () => {
  it('reuses a value while its files keep size and mtime, recomputes (and replaces it) when they change', () => {
    const dir = tempDir('stamped');
    const file = path.join(dir, 'a.json');
    writeFileSync(file, '1');
    const cache = new StampedCache<string>();
    let made = 0;
    const read = () => cache.get(file, filesStamp([file]), () => (made++, readFileSync(file, 'utf8')));
    expect([read(), read()]).toEqual(['1', '1']);
    expect(made).toBe(1);
    writeFileSync(file, '22');
    expect(read()).toBe('22');
    // Same size, another mtime: recomputed too.
    writeFileSync(file, '33');
    utimesSync(file, new Date(2000, 1, 1), new Date(2000, 1, 1));
    expect(read()).toBe('33');
    expect(made).toBe(3);
  });

  it('keeps nothing for a missing file (no stamp): every call recomputes', () => {
    const cache = new StampedCache<number>();
    const missing = path.join(tempDir('stamped-missing'), 'nope.json');
    expect(filesStamp([missing])).toBeUndefined();
    let made = 0;
    cache.get(missing, filesStamp([missing]), () => ++made);
    cache.get(missing, filesStamp([missing]), () => ++made);
    expect(made).toBe(2);
  });
});

describe('StampedFileCache', () => {
  it('persists values across instances, recomputes when the stamp changes, and drops entries of another shape', async () => {
    const dir = tempDir('stamped-file');
    const memo = path.join(dir, 'memo.json');
    writeFileSync(memo, JSON.stringify({ 'old|1|2': 'digest-of-an-old-format' }));
    let made = 0;
    const make = async () => `v${++made}`;
    expect(await new StampedFileCache(memo).get('k', 's1', make)).toBe('v1');
    expect(await new StampedFileCache(memo).get('k', 's1', make)).toBe('v1');
    expect(await new StampedFileCache(memo).get('k', 's2', make)).toBe('v2');
    expect(JSON.parse(readFileSync(memo, 'utf8'))).toEqual({ k: { stamp: 's2', value: 'v2' } });
    writeFileSync(memo, 'not json');
    expect(await new StampedFileCache(memo).get('k', 's2', make)).toBe('v3');
  });

  it('bounded, keeps the newest entries whose key passes `keep` (an entry written again counts as new)', async () => {
    const dir = tempDir('stamped-file-bounds');
    const memo = path.join(dir, 'memo.json');
    const gone = new Set(['b']);
    const cache = () => new StampedFileCache(memo, { maxEntries: 3, keep: (k) => !gone.has(k) });
    for (const k of ['a', 'b', 'c', 'd']) await cache().get(k, 's', async () => `v-${k}`);
    // b is gone; a, c, d are the three kept.
    expect(Object.keys(JSON.parse(readFileSync(memo, 'utf8')))).toEqual(['a', 'c', 'd']);
    await cache().get('a', 's2', async () => 'v-a2');
    await cache().get('e', 's', async () => 'v-e');
    // a written again is newer than c, which goes first.
    expect(JSON.parse(readFileSync(memo, 'utf8'))).toEqual({ d: { stamp: 's', value: 'v-d' }, a: { stamp: 's2', value: 'v-a2' }, e: { stamp: 's', value: 'v-e' } });
    // A hit writes nothing.
    let made = 0;
    expect(await cache().get('d', 's', async () => `${++made}`)).toBe('v-d');
    expect(made).toBe(0);
  });
});

describe('userCacheDir', () => {
  it('is $XDG_CACHE_HOME/todeval, and ~/.cache/todeval when it is unset or empty', () => {
    expect(userCacheDir({ XDG_CACHE_HOME: '/x' })).toBe(path.join('/x', 'todeval'));
    expect(userCacheDir({ XDG_CACHE_HOME: '' })).toBe(path.join(os.homedir(), '.cache', 'todeval'));
    expect(userCacheDir({})).toBe(path.join(os.homedir(), '.cache', 'todeval'));
    expect(userCacheDir({}, 'huggingface')).toBe(path.join(os.homedir(), '.cache', 'huggingface'));
  });
});
