import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli as run } from './helpers/cli.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { getSensitiveTinyModelDir } from './nli-fixtures.js';
import { suiteTempDir } from './helpers/temp.js';

// The real path: CLI -> adapters -> rules -> ONNX runner, with a tiny random RoBERTa whose weights
// are large enough that labels vary (labels are arbitrary, so we assert structure and consistency).
// dialogues_017 starts with a Services_1 + Messaging_1 + Alarm_1 dialogue: seen and unseen turns.
const DIALOGUES = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 24;

interface Report {
  signature: Record<string, unknown>;
  sgsacc: { validated: Record<string, number | null>; unvalidated: Record<string, number | null>; perService: object; perAct: object };
  counts: { turns: number; evaluated: number; excluded: number; contextRescued: number; unscorable: number };
  groundTruth: { sgsacc: { validated: Record<string, number | null> } };
  ser: { ser: number };
  bleu: { score: number };
  references: { reused: number; computed: number };
  predictions: { missing: string[]; extra: string[] };
  nli: { requested: number; issued: number };
}

const readJson = <T,>(f: string) => JSON.parse(readFileSync(f, 'utf8')) as T;
const readJsonl = (f: string) => readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))(
  'todeval score / rerank end to end (tiny random ONNX model)',
  () => {
    const dir = suiteTempDir('score');
    const f = (name: string) => path.join(dir, name);
    let model = '';
    const base = () => ['--dataset', 'sgd', '--dialogues', DIALOGUES, '--data-dir', DATA_DIR, '--limit', String(LIMIT), '--model', model, '--device', 'cpu'];
    let gold: Report;

    beforeAll(async () => {
      model = getSensitiveTinyModelDir();
      const res = await run(['score', ...base(), '--references', f('refs.jsonl'), '--out', f('gold.jsonl'), '--json', f('gold.json')]);
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      gold = readJson<Report>(f('gold.json'));
    }, 120_000);

    it('ground truth: a report with every field, consistent with the per-turn output', () => {
      expect(gold.signature).toMatchObject({ tool: 'todeval', metric: 'sgsacc', dtype: 'fp32', validation: true, context: true, referenceSelection: 'entailed', system: 'ground-truth' });
      expect(String(gold.signature.model)).toContain('random');
      expect(String(gold.signature.revision)).toMatch(/^sha256:/);
      expect(String(gold.signature.rules)).toMatch(/^[0-9a-f]{64}$/);
      for (const k of ['all', 'seen', 'unseen']) {
        expect(gold.sgsacc.validated).toHaveProperty(k);
        expect(gold.sgsacc.unvalidated).toHaveProperty(k);
      }
      expect(gold.sgsacc.unvalidated.unseen).not.toBeNull(); // the slice has Alarm/Messaging turns
      expect(gold.sgsacc.unvalidated.seen).not.toBeNull();
      expect(gold.bleu.score).toBeCloseTo(100, 6); // gold against itself
      expect(gold.ser.ser).toBe(0);
      const c = gold.counts;
      expect(c.turns).toBe(LIMIT);
      expect(c.evaluated + c.excluded).toBe(c.turns);

      const lines = readJsonl(f('gold.jsonl'));
      expect(lines[0]).toMatchObject({ kind: 'todeval-sgsacc-turns' });
      const turns = lines.slice(1) as { validation: string; faithful: boolean }[];
      expect(turns).toHaveLength(LIMIT);
      const validated = turns.filter((t) => t.validation === 'validated');
      expect(validated).toHaveLength(c.evaluated);
      if (validated.length > 0) {
        expect(gold.sgsacc.validated.all).toBeCloseTo((100 * validated.filter((t) => t.faithful).length) / validated.length, 9);
      }
      expect(gold.sgsacc.unvalidated.all).toBeCloseTo((100 * turns.filter((t) => t.faithful).length) / turns.length, 9);
      // The ground truth scored as a system is the ceiling section too.
      expect(gold.groundTruth.sgsacc.validated).toEqual(gold.sgsacc.validated);
    });

    it('a second system reuses the stored references, pays only its own pairs, and resumes', async () => {
      const refs = readJsonl(f('refs.jsonl')).slice(1) as { id: string; actions: unknown[] }[];
      const ids = readJsonl(f('gold.jsonl')).slice(1).map((t) => t.id as string);
      const goldText = new Map<string, string>(
        (readJson<{ dialogue_id: string; turns: { utterance: string }[] }[]>(DIALOGUES)).flatMap((d) => d.turns.map((t, i) => [`${d.dialogue_id}/${i}`, t.utterance] as [string, string])),
      );
      writeFileSync(f('sys.jsonl'), ids.map((id) => JSON.stringify({ id, utterance: goldText.get(id)!.toLowerCase() })).join('\n') + '\n');
      const args = ['score', ...base(), '--predictions', f('sys.jsonl'), '--references', f('refs.jsonl'), '--out', f('sys.out.jsonl'), '--json', f('sys.json')];
      const res = await run(args);
      expect(res.code).toBe(0);
      const sys = readJson<Report>(f('sys.json'));
      expect(sys.references).toEqual({ file: f('refs.jsonl'), reused: LIMIT, computed: 0, missing: 0 });
      const actions = refs.reduce((n, r) => n + r.actions.length, 0);
      // Plain + at most one context pair per action, + one control pair per context rescue (the control is off: all still credited).
      expect(sys.nli.requested).toBeLessThanOrEqual(2 * actions + sys.counts.contextRescued);
      expect(sys.groundTruth.sgsacc.validated).toEqual(gold.sgsacc.validated);
      expect(sys.counts.evaluated).toBe(gold.counts.evaluated); // validation depends on the data only
      expect(sys.bleu.score).toBeLessThan(100);
      expect(sys.signature.system).toBe('sys');

      const again = await run(args);
      expect(again.code).toBe(0);
      const resumed = readJson<Report>(f('sys.json'));
      expect(resumed.nli.requested).toBe(0);
      expect(resumed.sgsacc).toEqual(sys.sgsacc);
      expect(readJsonl(f('sys.out.jsonl'))).toHaveLength(1 + LIMIT);
    }, 120_000);

    it('is deterministic from scratch', async () => {
      const res = await run(['score', ...base(), '--out', f('gold2.jsonl'), '--json', f('gold2.json')]);
      expect(res.code).toBe(0);
      expect(readJsonl(f('gold2.jsonl')).slice(1)).toEqual(readJsonl(f('gold.jsonl')).slice(1));
    }, 120_000);

    it('refuses references stored under another configuration, and missing predictions, with one line', async () => {
      const res = await run(['score', ...base(), '--no-context', '--references', f('refs.jsonl')]);
      expect(res.code).toBe(2);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).toMatch(/refs\.jsonl: written under a different configuration \(context: true vs false\)/);
      const paper = await run(['score', ...base(), '--reference-selection', 'paper', '--references', f('refs.jsonl')]);
      expect(paper.code).toBe(2);
      expect(paper.stderr).toMatch(/refs\.jsonl: written under a different configuration \(referenceSelection: entailed vs paper\)/);

      writeFileSync(f('few.jsonl'), JSON.stringify({ id: 'nope/1', utterance: 'x' }) + '\n');
      const miss = await run(['score', ...base(), '--predictions', f('few.jsonl')]);
      expect(miss.code).toBe(2);
      // Not one turn of the slice has a prediction: nothing to score, whatever --allow-missing says (issue 21).
      expect(miss.stderr).toMatch(/all 24 turns \(--limit 24\) of \S+ have no prediction, nothing to score: 1 prediction ids match no turn/);
    }, 120_000);

    it('rerank: per-item choice with per-candidate fidelity and the signature', async () => {
      const items = [
        { id: 'inline', service: 'Alarm_1', context: 'Wake me up at 7.', actions: [{ act: 'CONFIRM', slot: 'new_alarm_time', values: ['7 am'] }], candidates: [{ system: 'a', text: 'Setting an alarm for 7 am?', likelihood: -1 }, { system: 'b', text: 'Okay.', likelihood: -0.5 }] },
        { id: 'byturn', dataset_id: readJsonl(f('gold.jsonl'))[1].id, candidates: [{ system: 'a', text: 'What can I do?' }, { system: 'b', text: 'Sure.' }] },
      ];
      writeFileSync(f('rr.jsonl'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
      // --dialogues: the dataset item's turn is in that file; without it rerank read the whole SGD test set (~1 CPU-s).
      const res = await run(['rerank', '-i', f('rr.jsonl'), '--dataset', 'sgd', '--dialogues', DIALOGUES, '--data-dir', DATA_DIR, '--model', model, '--device', 'cpu', '--out', f('rr.out.jsonl'), '--json', f('rr.json')]);
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      const doc = readJson<{ signature: Record<string, unknown>; items: { id: string; actions: number; chosen: { system: string; text: string; fidelity: number }; candidates: { system: string; fidelity: number; realised: boolean[] }[] }[] }>(f('rr.json'));
      expect(doc.signature).toMatchObject({ metric: 'sgsacc-rerank', dtype: 'fp32', context: true });
      expect(doc.items.map((i) => i.id)).toEqual(['inline', 'byturn']);
      for (const item of doc.items) {
        expect(item.candidates).toHaveLength(2);
        for (const c of item.candidates) expect(c.fidelity).toBe(c.realised.filter(Boolean).length);
        expect(item.chosen.fidelity).toBe(Math.max(...item.candidates.map((c) => c.fidelity)));
      }
      expect(readJsonl(f('rr.out.jsonl'))[0]).toMatchObject({ kind: 'todeval-rerank' });
    }, 120_000);
  },
);
