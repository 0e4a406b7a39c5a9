// docs/architecture.md names the file of each box: a renamed or removed file must be renamed there
// too, or the picture sends a reader to nothing.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/shared.js';

describe('docs/architecture.md', () => {
  it('every src/ and python/ path it names exists', () => {
    const text = readFileSync(path.join(REPO_ROOT, 'docs', 'architecture.md'), 'utf8');
    // `src/a/b.ts`, `src/a/`, `src/a/{x,y}/` (braces expanded) and `python/todeval/`.
    const named = [...text.matchAll(/\b((?:src|python)\/[\w./-]*(?:\{[\w.,]+\}[\w./-]*)?)/g)].map((m) => m[1].replace(/[.,]+$/, ''));
    const paths = named.flatMap((p) => {
      const b = /^(.*)\{([^}]+)\}(.*)$/.exec(p);
      return b ? b[2].split(',').map((x) => `${b[1]}${x}${b[3]}`) : [p];
    });
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((p) => !p.includes('*') && !existsSync(path.join(REPO_ROOT, p)))).toEqual([]);
  });
});
