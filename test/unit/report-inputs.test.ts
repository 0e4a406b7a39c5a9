// What `todeval report` refuses of the files it is given, on small hand-written files and runs: each
// case is one that once passed silently and put one run's statistics beside another's figures.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTurns } from '../../src/report/html/runs.js';
import { InputError } from '../../src/util/errors.js';
import { tempDir } from '../helpers/temp.js';

/** `fn`'s InputError as the CLI prints it (one line), or a failure when it throws none. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e.oneLine();
    throw e;
  }
  throw new Error('nothing was refused');
}

const TURNS_HEADER = JSON.stringify({ kind: 'todeval-sgsacc-turns', digest: 'x', signature: { tool: 'todeval', version: '0.1.0', metric: 'sgsacc-turns', system: 'sys' } });
const turnLine = (id: string) => JSON.stringify({ id, services: ['Restaurants_1'], validation: 'validated', faithful: true, actions: [] });

describe("report's per-turn files: the last line", () => {
  const dir = tempDir('report-inputs-turns');

  it('a torn last line (not JSON: an interrupted run) is skipped, as compare skips it', () => {
    const file = path.join(dir, 'torn.turns.jsonl');
    writeFileSync(file, [TURNS_HEADER, turnLine('d/1'), '{"id": "d/2", "serv'].join('\n') + '\n');
    expect(loadTurns(file).turns.map((t) => t.id)).toEqual(['d/1']);
  });

  it('a last line that is JSON but no turn record (`{}` appended) is refused in one line, as compare refuses it', () => {
    // Was: any bad last line was skipped, so report dropped what compare refused.
    const file = path.join(dir, 'appended.turns.jsonl');
    writeFileSync(file, [TURNS_HEADER, turnLine('d/1'), '{}'].join('\n') + '\n');
    const line = refusal(() => loadTurns(file));
    expect(line).toBe(`${file}: line 3 is not a turn record`);
  });
});
