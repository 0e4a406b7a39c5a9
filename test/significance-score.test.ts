// `todeval compare` and `score --confidence` over score's per-turn files, through the real ONNX path
// with the lexical stand-in (its numbers are not SGSAcc; the tests check that the per-turn
// statistics reproduce the report's SGSAcc, SER and BLEU exactly, and what compare refuses).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { runInProcess } from './helpers/in-process-cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';
import { zanzibarSystem } from '../scripts/lib/zanzibar-predictions.js';

const SGD_FILE = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 80;

interface ScoreReport {
  sgsacc: { validated: { all: number }; unvalidated: { all: number } };
  ser: { ser: number };
  bleu: { score: number };
  confidence: { unit: string; metrics: Record<string, { metric: string; score: number; units: number; unit: string }> };
}
interface CompareJson {
  comparisons: { id: string; unit: string; units: number; systems: { name: string; score: number; pValue: number | null }[] }[];
}

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))(
  'compare and --confidence on score runs (lexical stand-in, SGD slice)',
  () => {
    // Made in the suite's beforeAll: a suite skipped for want of data makes no folder (its body runs, its hooks do not).
    const dir = suiteTempDir('significance-score');
    const f = (name: string) => path.join(dir, name);
    let base: string[] = [];
    let gold: ScoreReport;
    let sys: ScoreReport;

    beforeAll(async () => {
      const model = getLexicalStandinDir();
      base = ['--dataset', 'sgd', '--data-dir', DATA_DIR, '--dialogues', SGD_FILE, '--limit', String(LIMIT), '--model', model, '--device', 'cpu', '--progress', 'none', '--references', f('refs.jsonl')];
      writeFileSync(f('sys.jsonl'), zanzibarSystem([SGD_FILE]).map((p) => JSON.stringify(p)).join('\n') + '\n');
      const g = await runCli(['score', ...base, '--turns', f('gold.turns.jsonl'), '-o', f('gold.json'), '--confidence', '--confidence-n', '300']);
      expect(g.stderr).toBe('');
      // Runs whose only check is that they end well run in this process (the same command, parsed and
      // run as the CLI does; a failure throws): no CLI start (~0.5 CPU-s) each.
      await runInProcess(['score', ...base, '-i', f('sys.jsonl'), '--system', 'swapped', '--turns', f('sys.turns.jsonl'), '-o', f('sys.json'), '--allow-missing', '--confidence', '--confidence-n', '300', '--unit', 'turn']);
      gold = JSON.parse(readFileSync(f('gold.json'), 'utf8')) as ScoreReport;
      sys = JSON.parse(readFileSync(f('sys.json'), 'utf8')) as ScoreReport;
    }, 600_000);

    it('the per-turn file carries each turn\'s SER verdict and BLEU statistics', () => {
      const lines = readFileSync(f('sys.turns.jsonl'), 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as { slotError?: unknown; bleu?: unknown });
      expect(lines).toHaveLength(LIMIT);
      expect(lines.every((l) => l.slotError !== undefined && l.bleu !== undefined)).toBe(true);
      expect(lines.some((l) => l.slotError === true)).toBe(true);
    });

    it('compare reproduces each report\'s SGSAcc (validated and all), SER and BLEU from the per-turn files', async () => {
      const r = await runCli(['compare', f('gold.turns.jsonl'), f('sys.turns.jsonl'), '--json']);
      expect(r.code).toBe(0);
      const c = JSON.parse(r.stdout) as CompareJson;
      expect(c.comparisons.map((x) => x.id)).toEqual(['sgsacc', 'sgsacc-all', 'ser', 'bleu']);
      const at = (id: string, k: number) => c.comparisons.find((x) => x.id === id)!.systems[k].score;
      for (const [k, rep] of [gold, sys].entries()) {
        expect(at('sgsacc', k)).toBeCloseTo(rep.sgsacc.validated.all, 10);
        expect(at('sgsacc-all', k)).toBeCloseTo(rep.sgsacc.unvalidated.all, 10);
        expect(at('ser', k)).toBeCloseTo(rep.ser.ser, 10);
        expect(at('bleu', k)).toBeCloseTo(rep.bleu.score, 10);
      }
      expect(c.comparisons[0].unit).toBe('dialogue');
      // Half the value-bearing turns say another value: SER is worse, and the paired test says so.
      expect(at('ser', 1)).toBeGreaterThan(at('ser', 0));
      expect(c.comparisons.find((x) => x.id === 'ser')!.systems[1].pValue).toBeLessThan(0.05);
    }, 120_000);

    it('score --confidence: intervals of the same metrics, by dialogue or (--unit turn) by turn', () => {
      expect(Object.keys(gold.confidence.metrics)).toEqual(['sgsacc', 'sgsacc-all', 'ser', 'bleu']);
      expect(gold.confidence.metrics.sgsacc.score).toBeCloseTo(gold.sgsacc.validated.all, 10);
      expect(gold.confidence.metrics.ser.unit).toBe('dialogue');
      expect(sys.confidence.metrics.ser).toMatchObject({ unit: 'turn', units: LIMIT });
      expect(gold.confidence.metrics.ser.units).toBeLessThan(LIMIT);
    });

    it('refuses a run under another configuration, and one without the other\'s items', async () => {
      await runInProcess(['score', ...base.slice(0, -2), '--no-context', '--turns', f('nocontext.turns.jsonl')]);
      const r = await runCli(['compare', f('gold.turns.jsonl'), f('nocontext.turns.jsonl')]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`todeval: ${f('nocontext.turns.jsonl')}: signature differs from the baseline's (${f('gold.turns.jsonl')}) apart from the system: context: true vs false\n`);
      await runInProcess(['score', ...base.map((a) => (a === String(LIMIT) ? '40' : a)), '--turns', f('fewer.turns.jsonl')]);
      const items = await runCli(['compare', f('gold.turns.jsonl'), f('fewer.turns.jsonl')]);
      expect(items.code).toBe(2);
      expect(items.stderr).toMatch(/sgsacc: 40 turns, the baseline .*gold\.turns\.jsonl has 80 \(40 only in the baseline, 0 only here\): pass --common-items/);
    }, 300_000);
  },
);
