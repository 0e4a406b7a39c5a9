import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pyFixed } from '../../src/metrics/text/py-string.js';
import { REPO_ROOT } from '../helpers/shared.js';

// `bleu -w 1000` printed toFixed()'s own RangeError (it takes at most 100 digits); sacreBLEU prints
// the exact decimal expansion. Python's output for these doubles is the fixture.
const fixture = JSON.parse(readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'py-fixed-wide.json'), 'utf8')) as { cases: { x: string; digits: number; python: string }[] };

describe('pyFixed past 100 digits', () => {
  it("prints what Python's f'{x:.{digits}f}' prints, for widths of 101 and 1100", () => {
    expect(fixture.cases.length).toBeGreaterThanOrEqual(18);
    for (const c of fixture.cases) expect(pyFixed(Number(c.x), c.digits), `${c.x} to ${c.digits}`).toBe(c.python);
  });
});
