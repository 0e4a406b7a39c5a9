import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGV, runCli } from './helpers/cli.js';
import { getLexicalStandinDir } from './helpers/lexical-standin.js';
import { suiteTempDir } from './helpers/temp.js';
import { DATA_DIR, hasData, REPO_ROOT } from './helpers/shared.js';

// What the newcomer did (issue 21): `score --turns T -o R` stopped half-way and resumed with the same
// command. The references are kept beside --turns, so the resumed report equals the uninterrupted
// one; only what counts this process's work differs (turns resumed, references reused or computed,
// NLI pairs issued). The ground truth is the system here, as in the newcomer's run: every chunk is
// the ground-truth phase (references selected, validated and the gold utterance scored).
const SGD_FILE = path.join(DATA_DIR, 'sgd', 'test', 'dialogues_017.json');
const LIMIT = 64;
const CHUNK = 4;
// Signalled once this many turns are saved: several chunks done, most still to do.
const STOP_AT = 16;

type Json = Record<string, unknown>;
const readJson = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as Json;
const savedTurns = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '').length - 1 : 0);
/** The report less what counts this process's work and where its own files are. */
const withoutWork = ({ nli: _n, resumed: _r, references, ...r }: Json) => ({ ...r, references: { ...(references as Json), file: null, reused: 0, computed: 0 } });

describe.skipIf(!hasData('sgd', 'test', 'dialogues_017.json'))(
  'score stopped by SIGINT or SIGKILL and resumed gives the uninterrupted report (lexical stand-in, SGD slice)',
  () => {
    const dir = suiteTempDir('resume');
    const f = (name: string) => path.join(dir, name);
    let model = '';
    const args = (name: string, references: boolean) => [
      'score', '--dataset', 'sgd', '--data-dir', DATA_DIR, '--dialogues', SGD_FILE, '--limit', String(LIMIT), '--chunk', String(CHUNK),
      '--model', model, '--device', 'cpu', '--threads', '1', '--progress', 'none',
      '--turns', f(`${name}.turns.jsonl`), '-o', f(`${name}.json`), ...(references ? ['--references', f(`${name}.refs.jsonl`)] : []),
    ];
    let whole: Json;

    beforeAll(async () => {
      model = getLexicalStandinDir();
      const r = await runCli(args('whole', false));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      whole = readJson(f('whole.json'));
      expect((whole.groundTruth as Json).coverage).toEqual({ turns: LIMIT, of: LIMIT, complete: true });
    }, 180_000);

    for (const signal of ['SIGINT', 'SIGKILL'] as const) {
      for (const references of [false, true]) {
        it(`${signal} half-way, ${references ? 'with --references' : 'references kept beside --turns'}: the same command resumes to the same report`, async () => {
          const name = `${signal}-${references ? 'refs' : 'kept'}`;
          const argv = args(name, references);
          const turns = f(`${name}.turns.jsonl`);
          const child = spawn(process.execPath, [...CLI_ARGV, ...argv], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
          let stderr = '';
          child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
          const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig })));
          try {
            // Deterministic: the signal goes once the per-turn file holds STOP_AT turns, whatever the machine's speed.
            while (child.exitCode === null && savedTurns(turns) < STOP_AT) await new Promise((r) => setTimeout(r, 10));
            child.kill(signal);
          } catch (e) {
            child.kill('SIGKILL');
            throw e;
          }
          const end = await exited;
          if (signal === 'SIGINT') {
            expect(end.code).toBe(130);
            expect(stderr).toMatch(new RegExp(`^todeval: interrupted: \\d+ of ${LIMIT} turns saved in .*; resume with: todeval score `, 'm'));
          } else expect(end.signal).toBe('SIGKILL');
          const saved = savedTurns(turns);
          // Stopped in the middle: some turns saved, most not, and no report yet.
          expect(saved).toBeGreaterThanOrEqual(STOP_AT);
          expect(saved).toBeLessThan(LIMIT);
          expect(existsSync(f(`${name}.json`))).toBe(false);

          const resumed = await runCli(argv);
          expect(resumed.code).toBe(0);
          expect(resumed.stderr).toMatch(new RegExp(`^todeval: resuming .*: \\d+ of ${LIMIT} turns already scored\\n$`));
          const report = readJson(f(`${name}.json`));
          expect((report.groundTruth as Json).coverage).toEqual({ turns: LIMIT, of: LIMIT, complete: true });
          expect(report.resumed).toBeGreaterThanOrEqual(STOP_AT);
          expect(withoutWork(report)).toEqual(withoutWork(whole));
          expect((report.references as Json).file).toBe(references ? f(`${name}.refs.jsonl`) : f(`${name}.turns.references.jsonl`));
        }, 180_000);
      }
    }

    it('re-running the completed command gives the same report (was: rewritten with the ground truth gone, "covers 0 of 64", exit 0)', async () => {
      const before = readFileSync(f('whole.json'), 'utf8');
      const again = await runCli(args('whole', false));
      expect(again.code).toBe(0);
      expect(again.stderr).toBe(`todeval: resuming ${f('whole.turns.jsonl')}: ${LIMIT} of ${LIMIT} turns already scored\n`);
      const report = readJson(f('whole.json'));
      expect(withoutWork(report)).toEqual(withoutWork(JSON.parse(before) as Json));
      expect(report.references).toMatchObject({ reused: LIMIT, computed: 0, missing: 0 });
    }, 120_000);

    it('a run of fewer turns is refused over the complete report: one line, exit 2, before any work, the report unchanged; --force replaces it', async () => {
      const before = readFileSync(f('whole.json'), 'utf8');
      const turnsBefore = readFileSync(f('whole.turns.jsonl'), 'utf8');
      const fewer = args('whole', false).map((a) => (a === String(LIMIT) ? '10' : a));
      const refused = await runCli(fewer);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(
        `todeval: ${f('whole.json')}: not replaced: it holds a complete report of ${LIMIT} turns and this run covers 10; give --force to replace it, or another -o\n`,
      );
      expect(readFileSync(f('whole.json'), 'utf8')).toBe(before);
      expect(readFileSync(f('whole.turns.jsonl'), 'utf8')).toBe(turnsBefore);
      const forced = await runCli([...fewer, '--force']);
      expect(forced.code).toBe(0);
      expect((readJson(f('whole.json')).dataset as Json).turns).toBe(10);
    }, 120_000);
  },
);
