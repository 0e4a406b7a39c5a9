import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/shared.js';

// Data flows one way (adapters -> turns -> references -> NLI pairs -> scores -> report), so a room
// of src/ may import only rooms below it. Rooms of one rank do not depend on each other, except
// adapters and schema: a dataset's dialogues and its schema are read together and share types.
const RANK: Record<string, number> = {
  util: 0,
  data: 1,
  adapters: 2,
  schema: 2,
  rules: 3,
  nli: 3,
  metrics: 4,
  rerank: 5,
  report: 6,
  shard: 7,
  // One library pipeline per product, which the service runs as the commands do.
  pipeline: 8,
  serve: 9,
  cli: 10,
  'index.ts': 11,
};
const SAME_RANK_ALLOWED = new Set(['adapters>schema', 'schema>adapters']);

const SRC = path.join(REPO_ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The room of a file under src/: its top folder, or the file's own name at the top. */
const roomOf = (file: string) => path.relative(SRC, file).split(path.sep)[0];

/**
 * Every relative import and re-export of a file (static and dynamic), resolved to the source file
 * it names: ESM specifiers say `.js` for a `.ts` file (a `.js` left as it is would be a room of its
 * own, which no rank names, and the import would go unchecked).
 */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
  return specs.map((s) => path.resolve(path.dirname(file), s.replace(/\.js$/, '.ts')));
}

describe('src/ rooms import only rooms below them', () => {
  const files = sourceFiles(SRC);

  it('every room of src/ has a rank (a new room must be placed in the flow)', () => {
    const rooms = new Set(files.map(roomOf));
    expect([...rooms].filter((r) => !(r in RANK))).toEqual([]);
  });

  it('no import goes up or sideways', () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = roomOf(file);
      for (const target of importsOf(file)) {
        const to = roomOf(target);
        // Outside src/ (package.json, say): not a room.
        if (to === from || to.startsWith('..')) continue;
        const up = RANK[to] > RANK[from];
        const sideways = RANK[to] === RANK[from] && !SAME_RANK_ALLOWED.has(`${from}>${to}`);
        if (up || sideways) wrong.push(`${path.relative(REPO_ROOT, file)} (${from}) imports ${path.relative(REPO_ROOT, target)} (${to})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('every relative import names a source file under a ranked room (none is passed over)', () => {
    const unranked: string[] = [];
    for (const file of files) {
      for (const target of importsOf(file)) {
        const to = roomOf(target);
        if (to.startsWith('..')) continue;
        if (!(to in RANK) || !existsSync(target)) unranked.push(`${path.relative(REPO_ROOT, file)} imports ${path.relative(REPO_ROOT, target)}`);
      }
    }
    expect(unranked).toEqual([]);
  });

  it('the check sees imports at all (it would pass vacuously on a parse that finds none)', () => {
    const score = path.join(SRC, 'cli', 'commands', 'score.ts');
    expect(importsOf(score).map(roomOf)).toContain('pipeline');
  });
});
