import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli as run } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { suiteTempDir, tempDir } from './helpers/temp.js';

// score, rerank and evaluate --sgsacc through the real ONNX path with the lexical stand-in, which
// (unlike random weights) entails what the text says: so every outcome a real run has shows up and
// can be asserted. The stand-in's numbers are not SGSAcc; these tests check the pipeline's behaviour.
const SGD_FILE = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 60;
const SWAPPED = 'Zanzibar';

interface TurnLine {
  id: string;
  validation: 'validated' | 'excluded' | 'unscorable';
  faithful: boolean;
  exclusionReasons?: string[];
  actions: { contextUsed: boolean; entailed: boolean; referenceViaContext: boolean }[];
}
interface SgdTurn {
  speaker: string;
  utterance: string;
  frames: { actions: { values: string[] }[] }[];
}

const readJson = <T,>(f: string) => JSON.parse(readFileSync(f, 'utf8')) as T;
const readTurns = (f: string) => readFileSync(f, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as TurnLine);

/** A system that says the gold utterance, but every other turn naming a value says another one. */
function valueSwappingSystem(): { id: string; utterance: string }[] {
  const dialogues = readJson<{ dialogue_id: string; turns: SgdTurn[] }[]>(SGD_FILE);
  const out: { id: string; utterance: string }[] = [];
  let withValue = 0;
  for (const d of dialogues) {
    d.turns.forEach((t, i) => {
      if (t.speaker !== 'SYSTEM') return;
      const value = t.frames.flatMap((f) => f.actions.flatMap((a) => a.values)).find((v) => v.length > 2 && t.utterance.includes(v));
      const swap = value !== undefined && withValue++ % 2 === 0;
      out.push({ id: `${d.dialogue_id}/${i}`, utterance: swap ? t.utterance.split(value).join(SWAPPED) : t.utterance });
    });
  }
  return out;
}

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))(
  'score and rerank end to end with the lexical-standin model (SGD slice)',
  () => {
    const dir = suiteTempDir('standin-e2e');
    const f = (name: string) => path.join(dir, name);
    let model = '';
    const base = () => ['--dataset', 'sgd', '--data-dir', DATA_DIR, '--dialogues', SGD_FILE, '--limit', String(LIMIT), '--model', model, '--device', 'cpu'];
    let gold: TurnLine[];
    let sysStdout = '';
    let sys: TurnLine[];
    let sysReport: { signature: Record<string, unknown>; sgsacc: { validated: { all: number } }; counts: { evaluated: number; excluded: number; contextRescued: number } };

    beforeAll(async () => {
      model = getLexicalStandinDir();
      const g = await run(['score', ...base(), '--references', f('refs.jsonl'), '--out', f('gold.jsonl'), '-o', f('gold.json')]);
      expect(g.stderr).toBe('');
      expect(g.code).toBe(0);
      writeFileSync(f('sys.jsonl'), valueSwappingSystem().map((p) => JSON.stringify(p)).join('\n') + '\n');
      const s = await run(['score', ...base(), '--predictions', f('sys.jsonl'), '--references', f('refs.jsonl'), '--out', f('sys.out.jsonl'), '-o', f('sys.json')]);
      expect(s.stderr).toBe('');
      expect(s.code).toBe(0);
      sysStdout = s.stdout;
      gold = readTurns(f('gold.jsonl'));
      sys = readTurns(f('sys.out.jsonl'));
      sysReport = readJson(f('sys.json'));
    }, 120_000);

    it('shows validated, excluded, context-rescued and unfaithful turns', () => {
      expect(gold).toHaveLength(LIMIT);
      expect(sys).toHaveLength(LIMIT);
      const validated = sys.filter((t) => t.validation === 'validated');
      expect(validated.filter((t) => t.faithful).length).toBeGreaterThan(0);
      expect(validated.filter((t) => !t.faithful).length).toBeGreaterThan(0);
      const excluded = sys.filter((t) => t.validation === 'excluded');
      expect(excluded.length).toBeGreaterThan(0);
      expect(new Set(excluded.flatMap((t) => t.exclusionReasons ?? []))).toContain('no-candidate-entailed');
      // Rescued: the plain premise missed an action and the context premise entailed it.
      expect(sys.some((t) => t.validation === 'validated' && t.faithful && t.actions.some((a) => a.contextUsed && a.entailed))).toBe(true);
      expect(gold.some((t) => t.actions.some((a) => a.referenceViaContext))).toBe(true);
      expect(sysReport.counts.contextRescued).toBeGreaterThan(0);
      expect(String(sysReport.signature.model)).toContain('lexical-standin');
      // The terminal table never passes a stand-in's numbers off as SGSAcc.
      expect(sysStdout).toMatch(/NOTE: local:lexical-standin\S* is a stand-in NLI model, not a language model: these numbers are NOT SGSAcc\./);
    });

    it('blames exactly the swapped turns among the validated ones: the ground truth passes them all', () => {
      const swapped = new Set(
        readFileSync(f('sys.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; utterance: string })
          .filter((p) => p.utterance.includes(SWAPPED)).map((p) => p.id),
      );
      const goldById = new Map(gold.map((t) => [t.id, t]));
      for (const t of sys.filter((s) => s.validation === 'validated')) {
        expect(goldById.get(t.id)!.faithful).toBe(true);
        if (!t.faithful) expect(swapped.has(t.id)).toBe(true);
      }
      const validatedSwapped = sys.filter((t) => t.validation === 'validated' && swapped.has(t.id));
      expect(validatedSwapped.length).toBeGreaterThan(0);
      expect(validatedSwapped.filter((t) => !t.faithful).length).toBeGreaterThan(validatedSwapped.length / 2);
      expect(sysReport.sgsacc.validated.all).toBeLessThan(100);
    });

    it('rerank prefers the candidate that keeps the values over one that swaps them', async () => {
      const swappedSystem = new Map(valueSwappingSystem().map((p) => [p.id, p.utterance]));
      const dialogues = readJson<{ dialogue_id: string; turns: SgdTurn[] }[]>(SGD_FILE);
      const goldText = new Map(dialogues.flatMap((d) => d.turns.map((t, i) => [`${d.dialogue_id}/${i}`, t.utterance] as [string, string])));
      const ids = sys.filter((t) => t.validation === 'validated' && !t.faithful).map((t) => t.id).slice(0, 4);
      expect(ids.length).toBeGreaterThan(1);
      const items = ids.map((id) => ({
        id,
        dataset_id: id,
        // The swapping system comes first and is more likely: only faithfulness can make the gold text win.
        candidates: [
          { system: 'swapper', text: swappedSystem.get(id)!, likelihood: -0.1 },
          { system: 'faithful', text: goldText.get(id)!, likelihood: -5 },
        ],
      }));
      writeFileSync(f('rr.jsonl'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
      const res = await run(['rerank', '-i', f('rr.jsonl'), '--dataset', 'sgd', '--data-dir', DATA_DIR, '--dialogues', SGD_FILE, '--model', model, '--device', 'cpu', '-o', f('rr.json')]);
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      const doc = readJson<{ items: { id: string; chosen: { system: string }; candidates: { system: string; fidelity: number }[] }[] }>(f('rr.json'));
      let strictlyBetter = 0;
      for (const item of doc.items) {
        const [swapper, faithful] = ['swapper', 'faithful'].map((s) => item.candidates.find((c) => c.system === s)!.fidelity);
        // Rerank asks whether *any* candidate reference is entailed (no ground truth), so a swap the
        // references do not all carry, or one the context premise covers, can tie; never the reverse.
        expect(faithful).toBeGreaterThanOrEqual(swapper);
        if (faithful > swapper) {
          strictlyBetter++;
          expect(item.chosen.system).toBe('faithful');
        } else {
          expect(item.chosen.system).toBe('swapper'); // the tie goes to the higher likelihood
        }
      }
      expect(strictlyBetter).toBeGreaterThan(doc.items.length / 2);
    }, 60_000);
  },
);

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))(
  'evaluate --sgsacc end to end with the lexical-standin model (MultiWOZ slice)',
  () => {
    it('counts validated, excluded and context-rescued turns, and catches changed numbers', async () => {
      const model = getLexicalStandinDir();
      const convlab = readJson<Record<string, { log: { text: string }[] }>>(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'));
      const ids = Object.keys(convlab).sort().slice(0, 8);
      // Half the dialogues change every digit of their replies (phone numbers, times, counts, references).
      const shift = (s: string) => s.replace(/[0-9]/g, (d) => String((Number(d) + 1) % 10));
      const input = Object.fromEntries(
        ids.map((id, k) => [
          id.replace(/\.json$/i, '').toLowerCase(),
          convlab[id].log.filter((_, i) => i % 2 === 1).map((t) => ({ response: 'ok', utterance: k % 2 === 0 ? t.text : shift(t.text) })),
        ]),
      );
      const dir = tempDir('standin-eval');
      writeFileSync(path.join(dir, 'in.json'), JSON.stringify(input));
      const res = await run(['evaluate', '-i', path.join(dir, 'in.json'), '--sgsacc', '--data-dir', DATA_DIR, '--model', model, '--device', 'cpu', '-o', path.join(dir, 'out.json')]);
      expect(res.code).toBe(0);
      const out = readJson<{ sgsacc: { sgsacc: { validated: { all: number } }; counts: { evaluated: number; excluded: number; contextRescued: number }; model: { modelId: string } } }>(path.join(dir, 'out.json'));
      const s = out.sgsacc;
      expect(s.model.modelId).toContain('lexical-standin');
      expect(s.counts.evaluated).toBeGreaterThan(0);
      expect(s.counts.excluded).toBeGreaterThan(0);
      expect(s.counts.contextRescued).toBeGreaterThan(0);
      expect(s.sgsacc.validated.all).toBeGreaterThan(0);
      expect(s.sgsacc.validated.all).toBeLessThan(100);
    }, 120_000);
  },
);
