// Data-dir inputs are named by content in signatures (issue 31): the SGD split and the MultiWOZ
// ground truth's files, so that the same bytes anywhere give one name and a changed byte another.
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { groundTruthLabel } from '../../src/metrics/mwz/ground-truth.js';
import { contentDigest, inputsContentDigest } from '../../src/util/input-label.js';
import { tempDir } from '../helpers/temp.js';

/** A data dir with the files groundTruthLabel reads (their content is never parsed by it). */
function fakeMwzDataDir(root: string, name: string): string {
  const dir = path.join(root, name);
  mkdirSync(path.join(dir, 'multiwoz', 'db'), { recursive: true });
  writeFileSync(path.join(dir, 'multiwoz', 'convlab_mwz21_test.json'), '{"MUL0001.json": {}}');
  writeFileSync(path.join(dir, 'multiwoz', 'booked_domains.json'), '{}');
  for (const d of ['hotel', 'train']) writeFileSync(path.join(dir, 'multiwoz', 'db', `${d}_db.json`), `[{"name": "${d} one"}]`);
  return dir;
}

describe('data-dir inputs named by content', () => {
  it('the MultiWOZ ground truth: the same bytes in two folders give one label; a byte of the database or the test file changes it', () => {
    const root = tempDir('gt-label');
    const a = fakeMwzDataDir(root, 'a');
    const b = fakeMwzDataDir(root, 'b');
    const label = groundTruthLabel(a, 'multiwoz21-convlab');
    expect(label).toMatch(/^multiwoz21-convlab@[0-9a-f]{12}$/);
    expect(groundTruthLabel(b, 'multiwoz21-convlab')).toBe(label);
    writeFileSync(path.join(b, 'multiwoz', 'db', 'hotel_db.json'), '[{"name": "hotel One"}]');
    expect(groundTruthLabel(b, 'multiwoz21-convlab')).not.toBe(label);
    const c = fakeMwzDataDir(root, 'c');
    writeFileSync(path.join(c, 'multiwoz', 'convlab_mwz21_test.json'), '{"MUL0002.json": {}}');
    expect(groundTruthLabel(c, 'multiwoz21-convlab')).not.toBe(label);
  });

  it('a digest kept for a long-lived process follows a file rewritten in place (size and mtime)', () => {
    const root = tempDir('digest-memo');
    const f = path.join(root, 'x.json');
    writeFileSync(f, 'one');
    const first = contentDigest(f);
    writeFileSync(f, 'two');
    utimesSync(f, new Date(), new Date(Date.now() + 5_000));
    expect(contentDigest(f)).not.toBe(first);
    expect(inputsContentDigest([f])).toBe(contentDigest(f));
    expect(inputsContentDigest([f, f])).not.toBe(contentDigest(f));
  });
});
