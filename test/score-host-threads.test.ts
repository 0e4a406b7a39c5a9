import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSgsaccData, runSgsacc } from '../src/metrics/sgsacc/index.js';
import { createNliRunner } from '../src/nli/runner.js';
import { BUILT_CLI, HAS_BUILT_CLI } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { suiteTempDir } from './helpers/temp.js';
import { predictionsJsonl, zanzibarSystem } from '../scripts/lib/zanzibar-predictions.js';

// The host side (tokenizer threads, the session on its own thread, the runner's bookkeeping) must
// never change a result: every output of a ground-truth run and of a second system reusing its
// references, byte for byte, whatever the number of tokenizer threads. The lexical stand-in decides
// by what the text says, so validated, excluded and context-rescued turns all occur.
const SGD_FILE = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 150;
const OUTPUTS = ['references.jsonl', 'gold.turns.jsonl', 'gold.json', 'second.turns.jsonl', 'second.json'];
const quiet = () => {};

describe.skipIf(!HAS_BUILT_CLI || !hasData('sgd', 'test', 'dialogues_017.json'))(
  'score: the same bytes with 0, 1 and 2 tokenizer threads (built CLI, lexical stand-in)',
  () => {
    const tmp = suiteTempDir('host-threads');
    const predictions = path.join(tmp, 'second.preds.jsonl');
    const counts = [0, 1, 2];
    const run = (cwd: string, args: string[]) =>
      promisify(execFile)(process.execPath, [BUILT_CLI, ...args], { cwd, maxBuffer: 1 << 26 }).then(
        (r) => ({ code: 0, stderr: r.stderr }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );

    beforeAll(async () => {
      writeFileSync(predictions, predictionsJsonl(zanzibarSystem([SGD_FILE])));
      const model = getLexicalStandinDir();
      const base = ['score', '--dataset', 'sgd', '--data-dir', DATA_DIR, '--dialogues', SGD_FILE, '--limit', String(LIMIT), '--model', model, '--device', 'cpu', '--threads', '1', '--progress', 'none'];
      for (const n of counts) {
        // One folder per count, the same relative names in each, so even the reports' file fields agree.
        const dir = path.join(tmp, `t${n}`);
        mkdirSync(dir);
        const threads = ['--tokenizer-threads', String(n), '--references', 'references.jsonl'];
        const gold = await run(dir, [...base, ...threads, '--turns', 'gold.turns.jsonl', '-o', 'gold.json']);
        expect([gold.code, gold.stderr]).toEqual([0, '']);
        const second = await run(dir, [...base, ...threads, '-i', predictions, '--turns', 'second.turns.jsonl', '-o', 'second.json']);
        expect([second.code, second.stderr]).toEqual([0, '']);
      }
    }, 300_000);

    it('writes identical references, per-turn files and reports', () => {
      for (const name of OUTPUTS) {
        const first = readFileSync(path.join(tmp, 't0', name));
        for (const n of counts.slice(1)) expect([n, name, readFileSync(path.join(tmp, `t${n}`, name)).equals(first)]).toEqual([n, name, true]);
      }
    });

    it('is a run where every path of the scoring is taken', () => {
      const report = JSON.parse(readFileSync(path.join(tmp, 't0', 'second.json'), 'utf8')) as {
        counts: { evaluated: number; excluded: number; contextRescued: number };
        sgsacc: { validated: { all: number } };
        nli: { issued: number; batches: number };
      };
      expect(report.counts.evaluated).toBeGreaterThan(0);
      expect(report.counts.excluded).toBeGreaterThan(0);
      expect(report.counts.contextRescued).toBeGreaterThan(0);
      expect(report.sgsacc.validated.all).toBeLessThan(100);
      expect(report.nli.batches).toBeGreaterThan(10);
    });
  },
);

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))(
  'runSgsacc: the session on the calling thread or its own, with or without tokenizer threads',
  () => {
    it('gives the same turn scores, references and runner counts', async () => {
      const data = loadSgsaccData({ dataset: 'sgd', dataDir: DATA_DIR, input: SGD_FILE });
      const turns = data.expand(data.loaded.turns.slice(0, LIMIT));
      const gold = new Map(turns.map((t) => [t.id, t.utterance]));
      const model = getLexicalStandinDir();
      const score = async (sessionThread: boolean, tokenizerThreads: number) => {
        const runner = await createNliRunner({ model, device: 'cpu', threads: 1, sessionThread, tokenizerThreads, notice: quiet });
        try {
          const run = await runSgsacc(turns, gold, { validation: true, context: true, hallucination: true, scorer: runner, chunkTurns: 32 });
          // Where the texts were tokenized differs by design (tokenizer threads); the work must not.
          const { textsTokenizedHere, ...stats } = runner.stats();
          return { same: JSON.stringify({ scores: run.scores, references: run.references, stats }), textsTokenizedHere };
        } finally {
          await runner.close();
        }
      };
      const plain = await score(false, 0);
      const sessionThread = await score(true, 0);
      const both = await score(true, 2);
      expect(sessionThread.same).toBe(plain.same);
      expect(both.same).toBe(plain.same);
      expect([plain.textsTokenizedHere > 0, sessionThread.textsTokenizedHere, both.textsTokenizedHere]).toEqual([true, plain.textsTokenizedHere, 0]);
    }, 120_000);
  },
);
