// What `todeval report` refuses of the files it is given, on small hand-written files and runs: each
// case is one that once passed silently and put one run's statistics beside another's figures.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { metricItems, ratioMetric } from '../../src/metrics/significance/items.js';
import { partialTurns } from '../../src/report/html/index.js';
import { runItemSources } from '../../src/report/html/run-items.js';
import { loadTurns, type ReportRun, type TurnLine, type TurnsFile } from '../../src/report/html/runs.js';
import { itemsFileJson } from '../../src/report/stats/item-files.js';
import type { Signature } from '../../src/util/signature.js';
import { tempDir } from '../helpers/temp.js';
import { refusal } from '../helpers/refusal.js';


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

/** A score run as loadRun gives it, with only what the checks below read filled in (a fake). */
function scoreRun(file: string, turns: number): ReportRun {
  const signature: Signature = { tool: 'todeval', version: '0.1.0', metric: 'sgsacc', system: 'sys' };
  return {
    name: file,
    file,
    kind: 'score',
    signature,
    signatureText: '',
    model: null,
    standin: false,
    sgsacc: null,
    counts: { turns },
    contextControl: false,
    ser: null,
    bleu: null,
    inform: null,
    success: null,
    richness: null,
    confidence: null,
  };
}

const turnsOf = (file: string, n: number): TurnsFile => ({
  file,
  signature: { tool: 'todeval', version: '0.1.0', metric: 'sgsacc-turns', system: 'sys' },
  turns: Array.from({ length: n }, (_, k): TurnLine => ({ id: `d/${k}`, services: ['Restaurants_1'], validation: 'validated', faithful: true, actions: [] })),
});

describe("report's per-turn files: as many turns as the run report counts", () => {
  // score --limit 2 -o sys2.json, then a full run resuming the same per-turn file (3 turns): its
  // signature names no limit, so it matches sys2.json; the ± and p-values were of all 3 turns.
  const limited = [scoreRun('sys2.json', 2)];
  const extended = new Map([[0, turnsOf('sys.turns.jsonl', 3)]]);

  it('a file with more turns than its run report (another --limit or --shard) is refused in one line, --allow-partial or not', () => {
    // Was: only fewer turns were refused; more passed silently (no note, no refusal).
    for (const allow of [false, true]) {
      expect(refusal(() => partialTurns(limited, extended, allow))).toBe(
        'sys.turns.jsonl: holds 3 turns, its run report sys2.json counts 2: a run over other turns (another --limit or --shard) wrote to the same per-turn file; pass the report of the run that covers all of them, or score this run into a per-turn file of its own',
      );
    }
  });

  it('as many turns passes; fewer is refused unless --allow-partial, which notes it', () => {
    expect(partialTurns([scoreRun('sys.json', 3)], extended, false)).toEqual([]);
    const short = new Map([[0, turnsOf('short.turns.jsonl', 1)]]);
    expect(refusal(() => partialTurns(limited, short, false))).toMatch(/^short\.turns\.jsonl: covers 1 of the 2 turns of its run report sys2\.json: /);
    expect(partialTurns(limited, short, true)).toEqual([
      'sys2.json: partial: its ± and p-values come from 1 of its 2 turns (--allow-partial; short.turns.jsonl), its table figures from all of them',
    ]);
  });
});

describe("report's --items files: each to the one evaluate run it fits, whatever the order", () => {
  const dir = tempDir('report-inputs-items');
  const signature: Signature = { tool: 'todeval', version: '0.1.0', metric: 'mwz-evaluate', data: 'multiwoz22' };

  /** An evaluate run as loadRun gives it, with Inform only (a fake: the one figure holdsRun checks here). */
  const evaluateRun = (file: string, inform: number): ReportRun => ({ ...scoreRun(file, 0), kind: 'evaluate', signature, counts: null, inform });

  /** An --items file whose Inform over two dialogues is `hits` of 2 (50 or 100). */
  function itemsFile(name: string, hits: 1 | 2): string {
    const file = path.join(dir, name);
    const inform = metricItems(ratioMetric('Inform'), 'dialogue', ['a', 'b'], null, [[1, 1], [hits - 1, 1]]);
    writeFileSync(file, JSON.stringify(itemsFileJson({ ...signature, predictions: `${name}@0123456789ab` }, { inform })));
    return file;
  }

  it('two runs with different figures each get their own file, given in the other order', () => {
    const runs = [evaluateRun('a.json', 50), evaluateRun('b.json', 100)];
    const sources = runItemSources(runs, new Map(), [itemsFile('b.items.json', 2), itemsFile('a.items.json', 1)]);
    expect(sources.map((s) => s && path.basename(s.file))).toEqual(['a.items.json', 'b.items.json']);
    expect(sources.map((s) => s?.name)).toEqual(['a.json', 'b.json']);
  });

  it('two runs with the same signature and figures: refused in one line naming both, never paired by chance', () => {
    // Was: the first file went to the first run it fitted, the second to the other, whichever file was whose.
    const runs = [evaluateRun('a.json', 50), evaluateRun('b.json', 50)];
    const [x, y] = [itemsFile('x.items.json', 1), itemsFile('y.items.json', 1)];
    expect(refusal(() => runItemSources(runs, new Map(), [x, y]))).toBe(
      `${x}: matches a.json and b.json alike (the same signature, their figures within mwzeval's rounding): the report cannot tell whose statistics it holds; report these runs one at a time, or compare their items files with todeval compare`,
    );
  });

  it('a file that fits only a run another file settles is refused, naming that run', () => {
    // b.items.json fits only b.json; the duplicate's only run is then taken.
    const runs = [evaluateRun('a.json', 50), evaluateRun('b.json', 100)];
    const b = itemsFile('b.items.json', 2);
    const again = itemsFile('b-again.items.json', 2);
    expect(refusal(() => runItemSources(runs, new Map(), [b, again]))).toBe(`${again}: matches only b.json, whose statistics another --items file holds`);
  });
});
