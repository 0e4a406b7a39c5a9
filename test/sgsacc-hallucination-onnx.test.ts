import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli as run } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';

// --hallucination through the real path (CLI -> rules -> ONNX runner) with the lexical stand-in,
// whose verdicts are predictable: appending "Breakfast is free." (a capitalised word no reference
// carries) must turn every checked turn into a hallucination and leave the omission side alone.
const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 24;

type Labels = Record<'ok' | 'omission' | 'hallucination' | 'both', number>;
interface HallucinationReport {
  validated: { all: number | null };
  unvalidated: { all: number | null };
  labels: { validated: Labels; all: Labels };
  counts: { turns: number; checked: number; contentFree: number; evaluated: number; excluded: number; excludedByReason: Record<string, number> };
}
interface Report {
  signature: Record<string, unknown>;
  counts: { turns: number };
  hallucination?: HallucinationReport;
  groundTruth: { hallucination?: HallucinationReport };
  references: { reused: number };
  nli: { requested: number; issued: number };
}
interface TurnLine {
  id: string;
  faithful: boolean | null;
  label?: string | null;
  hallucination?: { check: string; hallucinated: boolean | null; validation: string };
}

const readJson = <T,>(f: string) => JSON.parse(readFileSync(f, 'utf8')) as T;
const readLines = <T,>(f: string) => readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as T);

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))(
  'score / rerank --hallucination through ONNX (lexical stand-in, SGD slice)',
  () => {
    const dir = suiteTempDir('halluc');
    const f = (name: string) => path.join(dir, name);
    let model = '';
    const base = () => ['--dataset', 'sgd', '--dialogues', DIALOGUES, '--data-dir', DATA_DIR, '--limit', String(LIMIT), '--model', model, '--device', 'cpu'];
    let gold: Report;
    let goldTurns: TurnLine[];
    const goldText = new Map<string, string>(
      hasData('sgd', 'test', 'dialogues_017.json')
        ? readJson<{ dialogue_id: string; turns: { utterance: string }[] }[]>(DIALOGUES).flatMap((d) => d.turns.map((t, i) => [`${d.dialogue_id}/${i}`, t.utterance] as [string, string]))
        : [],
    );

    beforeAll(async () => {
      model = getLexicalStandinDir();
      // References first without the direction, as an existing references file would be...
      const plain = await run(['score', ...base(), '--references', f('refs.jsonl')]);
      expect(plain.stderr).toBe('');
      expect(plain.code).toBe(0);
      // ...then the ground truth with it: the same file gains the premises.
      const res = await run(['score', ...base(), '--hallucination', '--references', f('refs.jsonl'), '--out', f('gold.jsonl'), '-o', f('gold.json')]);
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      gold = readJson<Report>(f('gold.json'));
      goldTurns = readLines<TurnLine>(f('gold.jsonl')).slice(1);
    }, 120_000);

    it('validates the direction on the ground truth: failing turns are excluded with their reasons', () => {
      expect(gold.signature).toMatchObject({ hallucination: true, model: expect.stringContaining('lexical-standin') });
      const h = gold.hallucination!;
      expect(h).toEqual(gold.groundTruth.hallucination);
      // Only the premise pairs were new: the references were stored by the first run.
      expect(gold.references.reused).toBe(LIMIT);
      expect(gold.nli.issued).toBeLessThanOrEqual(2 * h.counts.checked);
      expect(h.counts.checked + h.counts.contentFree).toBe(LIMIT); // GOODBYE / REQ_MORE-only turns are content-free
      expect(h.counts.contentFree).toBeGreaterThan(0);
      expect(h.counts.evaluated).toBeGreaterThan(0);
      expect(h.counts.excludedByReason['gold-not-entailed']).toBeGreaterThan(0);
      expect(h.counts.evaluated + h.counts.excluded).toBe(h.counts.checked);
      // The gold passes its own validated premises by construction; what fails is counted as excluded.
      expect(h.validated.all).toBe(0);
      const checked = goldTurns.filter((t) => t.hallucination!.check === 'checked');
      expect(checked.filter((t) => t.hallucination!.validation === 'validated').every((t) => t.hallucination!.hallucinated === false)).toBe(true);
      const hallucinated = checked.filter((t) => t.hallucination!.hallucinated === true);
      expect(hallucinated.length).toBeGreaterThan(0);
      expect(h.unvalidated.all).toBeCloseTo((100 * hallucinated.length) / h.counts.checked, 9);
      const labelsAll = Object.values(h.labels.all).reduce((a, b) => a + b, 0);
      expect(labelsAll).toBe(goldTurns.filter((t) => t.label).length);
      // The references file carries the premises (a re-appended record wins over the first one).
      const refs = new Map(readLines<{ id?: string; hallucination?: { premise: string } }>(f('refs.jsonl')).slice(1).map((r) => [r.id, r]));
      expect(refs.size).toBe(LIMIT);
      expect([...refs.values()].every((r) => r.hallucination !== undefined)).toBe(true);
    });

    it('a second system that adds a sentence: every checked turn hallucinates, the omission side is unchanged', async () => {
      writeFileSync(f('adds.jsonl'), goldTurns.map((t) => JSON.stringify({ id: t.id, utterance: `${goldText.get(t.id)} Breakfast is free.` })).join('\n') + '\n');
      const res = await run(['score', ...base(), '--hallucination', '--predictions', f('adds.jsonl'), '--references', f('refs.jsonl'), '--out', f('adds.out.jsonl'), '-o', f('adds.json')]);
      expect(res.code).toBe(0);
      const sys = readJson<Report>(f('adds.json'));
      const turns = readLines<TurnLine>(f('adds.out.jsonl')).slice(1);
      const byId = new Map(goldTurns.map((t) => [t.id, t]));
      for (const t of turns) {
        const g = byId.get(t.id)!;
        expect(t.faithful, t.id).toBe(g.faithful);
        if (t.hallucination!.check === 'checked') {
          expect(t.hallucination!.hallucinated, t.id).toBe(true);
          expect(t.label, t.id).toBe(t.faithful ? 'hallucination' : 'both');
        } else {
          expect(t.label, t.id).toBe(g.label);
        }
      }
      expect(sys.hallucination!.validated.all).toBe(100);
      expect(sys.hallucination!.labels.validated.hallucination).toBe(gold.hallucination!.counts.evaluated);
      expect(sys.references.reused).toBe(LIMIT);
    }, 120_000);

    it('rerank --rank-by omission-hallucination prefers the clean candidate the fidelity ranking passes over', async () => {
      const items = goldTurns
        .filter((t) => t.label === 'ok' && t.hallucination!.check === 'checked')
        .slice(0, 3)
        .map((t) => ({
          id: t.id,
          dataset_id: t.id,
          candidates: [
            { system: 'adds', text: `${goldText.get(t.id)} Breakfast is free.`, likelihood: -1 },
            { system: 'gold', text: goldText.get(t.id), likelihood: -2 },
          ],
        }));
      expect(items.length).toBeGreaterThan(0);
      writeFileSync(f('rr.jsonl'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
      // --dialogues: the items' turns are all in that file; without it rerank read the whole SGD test set (~1 CPU-s a run).
      const common = ['rerank', '-i', f('rr.jsonl'), '--dataset', 'sgd', '--dialogues', DIALOGUES, '--data-dir', DATA_DIR, '--model', model, '--device', 'cpu'];
      type Doc = { signature: Record<string, unknown>; items: { chosen: { system: string; label?: string }; candidates: { system: string; label?: string; fidelity: number }[] }[] };
      const byFidelity = await run([...common, '--hallucination', '-o', f('rr-fid.json')]);
      expect(byFidelity.stderr).toBe('');
      const fid = readJson<Doc>(f('rr-fid.json'));
      const byLabel = await run([...common, '--rank-by', 'omission-hallucination', '-o', f('rr-label.json')]);
      expect(byLabel.code).toBe(0);
      const lab = readJson<Doc>(f('rr-label.json'));
      expect(lab.signature).toMatchObject({ hallucination: true, rankBy: 'omission-hallucination' });
      for (const [i, item] of fid.items.entries()) {
        const [adds, clean] = item.candidates;
        expect(adds.fidelity).toBe(clean.fidelity); // an added sentence takes nothing away
        expect(adds.label).toMatch(/hallucination|both/);
        expect(clean.label).not.toMatch(/hallucination|both/);
        expect(item.chosen.system).toBe('adds'); // equal fidelity: the likelier one
        expect(lab.items[i].chosen.system).toBe('gold');
      }
      const bad = await run([...common, '--rank-by', 'nope']);
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toMatch(/--rank-by must be one of fidelity, omission-hallucination/);
    }, 120_000);
  },
);
