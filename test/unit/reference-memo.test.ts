import { cpSync, mkdirSync, readFileSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../helpers/cli.js';
import { contentKey, inputFolder, rememberedIdLists, rememberIdLists, sacrebleuAnswer } from '../helpers/reference-memo.js';
import { tempDir } from '../helpers/temp.js';

// The memo of sacreBLEU's answers (test/helpers/reference-memo.ts) with a fake "sacreBLEU": a script
// that answers with its source file's text and the request reversed, and counts its runs. What the
// memo must show: the same request against the same source is answered without a run; a changed
// request, source file, script or argument runs it again; TODEVAL_REFERENCE_MEMO=off always runs it
// and keeps nothing; a failed run is never kept.

const PYTHON = process.env.SACREBLEU_PYTHON ?? 'python3';
const hasPython = (await runProcess(PYTHON, ['-c', 'pass'])).code === 0;
if (!hasPython) console.warn(`[skip] no ${PYTHON}: the reference memo's tests need a Python to stand in for sacreBLEU`);

const FAKE = [
  'import os, sys',
  'src = open(os.path.join(sys.argv[1], "sacrebleu", "metric.py")).read().strip()',
  'open(os.path.join(sys.argv[1], "..", "runs.txt"), "a").write("run\\n")',
  'data = sys.stdin.read()',
  'if data == "fail": sys.exit(3)',
  'print(src + "|" + data[::-1] + "|" + " ".join(sys.argv[2:]))',
].join('\n');

/** A fake sacreBLEU source (one module holding `metricText`), the fake script, and a cache folder, in a fresh temp folder. */
function fakeReference(name: string, metricText: string): { dir: string; source: string; script: string; cache: string } {
  const dir = tempDir(name);
  const source = path.join(dir, 'src-a');
  mkdirSync(path.join(source, 'sacrebleu'), { recursive: true });
  writeFileSync(path.join(source, 'sacrebleu', 'metric.py'), metricText);
  const script = path.join(dir, 'fake-peer.py');
  writeFileSync(script, FAKE);
  return { dir, source, script, cache: path.join(dir, 'cache') };
}

/** `body` with TODEVAL_REFERENCE_MEMO set to `value` (undefined: unset), restored afterwards. */
async function withMemoSetting<T>(value: string | undefined, body: () => T | Promise<T>): Promise<T> {
  const saved = process.env.TODEVAL_REFERENCE_MEMO;
  if (value === undefined) delete process.env.TODEVAL_REFERENCE_MEMO;
  else process.env.TODEVAL_REFERENCE_MEMO = value;
  try {
    return await body();
  } finally {
    if (saved === undefined) delete process.env.TODEVAL_REFERENCE_MEMO;
    else process.env.TODEVAL_REFERENCE_MEMO = saved;
  }
}

describe.skipIf(!hasPython)('the memo of a reference\'s answers (fake sacreBLEU: a script counting its runs)', () => {
  it('answers a repeated request without a run, and runs again when the request, source, script or arguments change', async () => {
    const { dir, source, script, cache } = fakeReference('reference-memo', 'A = 1\n');
    const runs = () => readFileSync(path.join(dir, 'runs.txt'), 'utf8').split('\n').filter(Boolean).length;
    const ask = (input: string, src = source, args: string[] = []) => withMemoSetting(undefined, () => sacrebleuAnswer(PYTHON, script, src, input, args, cache));

    const first = await ask('abc');
    expect([first.how, first.code, first.stdout.trim()]).toEqual(['live', 0, 'A = 1|cba|']);
    const again = await ask('abc');
    expect([again.how, again.code, again.stdout]).toEqual(['remembered', 0, first.stdout]);
    expect(runs()).toBe(1);

    expect((await ask('abd')).how).toBe('live');
    expect(runs()).toBe(2);
    expect((await ask('abc', source, ['-x'])).how).toBe('live');
    expect(runs()).toBe(3);

    // The same source bytes in another folder: remembered; one byte changed: asked again.
    const copy = path.join(dir, 'src-b');
    cpSync(source, copy, { recursive: true });
    expect((await ask('abc', copy)).how).toBe('remembered');
    const changed = path.join(dir, 'src-c');
    cpSync(source, changed, { recursive: true });
    writeFileSync(path.join(changed, 'sacrebleu', 'metric.py'), 'A = 2\n');
    const other = await ask('abc', changed);
    expect([other.how, other.stdout.trim()]).toEqual(['live', 'A = 2|cba|']);
    expect(runs()).toBe(4);

    // The script changed: asked again.
    writeFileSync(script, FAKE + '\n# edited\n');
    expect((await ask('abc')).how).toBe('live');
    expect(runs()).toBe(5);

    // A failing run is passed on and not kept.
    const failed = await ask('fail');
    expect([failed.how, failed.code]).toEqual(['live', 3]);
    expect((await ask('fail')).how).toBe('live');
    expect(runs()).toBe(7);
  });

  it('TODEVAL_REFERENCE_MEMO=off: every request runs, nothing is kept, inputs go to a fresh temp folder', async () => {
    const { dir, source, script, cache } = fakeReference('reference-memo-off', 'B\n');
    await withMemoSetting('off', async () => {
      for (let k = 0; k < 2; k++) expect((await sacrebleuAnswer(PYTHON, script, source, 'xy', [], cache)).how).toBe('live');
      const temp = path.join(dir, 'fresh');
      const folder = inputFolder('inputs', new Map([['a.txt', 'one\n']]), () => (mkdirSync(temp), temp), cache);
      expect(folder).toBe(temp);
      expect(readFileSync(path.join(temp, 'a.txt'), 'utf8')).toBe('one\n');
    });
    expect(readFileSync(path.join(dir, 'runs.txt'), 'utf8')).toBe('run\nrun\n');
    expect(readdirSync(dir)).not.toContain('cache');
  });

  it('input folders: the same files give the same folder (written once), other files another', async () => {
    const dir = tempDir('reference-memo-inputs');
    const cache = path.join(dir, 'cache');
    const never = () => {
      throw new Error('the memo is on: no temp folder');
    };
    await withMemoSetting(undefined, () => {
      const a = inputFolder('set', new Map<string, string | Buffer>([['r.txt', 'x\n'], ['s.gz', Buffer.from([1, 2])]]), never, cache);
      const b = inputFolder('set', new Map<string, string | Buffer>([['s.gz', Buffer.from([1, 2])], ['r.txt', 'x\n']]), never, cache);
      const c = inputFolder('set', new Map<string, string | Buffer>([['r.txt', 'y\n'], ['s.gz', Buffer.from([1, 2])]]), never, cache);
      expect(b).toBe(a);
      expect(c).not.toBe(a);
      expect(readFileSync(path.join(a, 'r.txt'), 'utf8')).toBe('x\n');
      expect(readFileSync(path.join(c, 'r.txt'), 'utf8')).toBe('y\n');
      expect(readdirSync(cache).sort()).toEqual([path.basename(a), path.basename(c)].sort());
    });
  });
});

describe('kept id lists (an in-process reference: the tokenizers library)', () => {
  it('come back as they were kept, under their key only; a damaged file or the memo off gives none', async () => {
    const cache = tempDir('reference-memo-ids');
    await withMemoSetting(undefined, async () => {
      const lists = [[0, 50264, 7], [], [2 ** 31 - 1, -1], [42]];
      const key = contentKey(['a', Buffer.from([1]), 'b']);
      expect(contentKey(['ab', Buffer.from([1])])).not.toBe(key); // parts are length-prefixed
      expect(rememberedIdLists('ids', key, cache)).toBeUndefined();
      rememberIdLists('ids', key, lists, cache);
      expect(rememberedIdLists('ids', key, cache)).toEqual(lists);
      expect(rememberedIdLists('ids', contentKey(['other']), cache)).toBeUndefined();
      expect(await withMemoSetting('off', () => rememberedIdLists('ids', key, cache))).toBeUndefined();
      for (const bytes of [4 * 6, 4 * 3, 7, 0]) {
        truncateSync(path.join(cache, `ids-${key}.bin`), bytes);
        expect(rememberedIdLists('ids', key, cache), `${bytes} bytes`).toBeUndefined();
      }
    });
  });
});
