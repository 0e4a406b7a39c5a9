import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { resamplingUnits } from '../src/metrics/significance/confidence.js';
import { loadItemSource } from '../src/report/stats/item-files.js';
import { runCli } from './helpers/cli.js';
import { REPO_ROOT, TOKENIZER_DIR } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';

// `npm run example` end to end: scripts/example.ts drives the built CLI (node bin/todeval.js), so this
// covers the user's first command. An empty hub cache and no TODEVAL_MODEL force the path a fresh
// clone takes: the lexical stand-in model built from the tokenizer shipped in models/.
const emptyHub = tempDir('example-hub');
const env = { ...process.env, HF_HUB_CACHE: emptyHub, TODEVAL_MODEL: '' };

async function runExample(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/example.ts', ...args], {
    cwd: REPO_ROOT,
    env,
    maxBuffer: 1 << 26,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

const readJson = <T,>(f: string) => JSON.parse(readFileSync(f, 'utf8')) as T;

interface ScoreReport {
  signature: Record<string, unknown>;
  system: string;
  sgsacc: { validated: Record<string, number | null>; unvalidated: Record<string, number | null> };
  counts: { turns: number; evaluated: number; excluded: number };
  ser: { ser: number; errors: number; utterancesWithValues: number };
  bleu: { score: number } | null;
  references: { reused: number; computed: number };
}

interface RerankDoc {
  signature: Record<string, unknown>;
  items: { id: string; actions: number; chosen: { system: string; fidelity: number }; candidates: { system: string; text: string; fidelity: number }[] }[];
}

// The example's system turns: 4 in mini_001, 3 in mini_002, 2 in mini_003.
const SYSTEM_TURNS = 9;

describe('npm run example (lexical-standin model)', () => {
  const out = tempDir('example');
  let res: { code: number; stdout: string; stderr: string };

  beforeAll(async () => {
    res = await runExample(['--out-dir', out]);
  }, 120_000);

  it('exits 0, says loudly that the model is the lexical stand-in and not SGSAcc, and prints every command it runs', () => {
    expect(res.stderr.replace(/^(npm warn|todeval: device auto).*\n/gm, '')).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('lexical-standin');
    expect(res.stdout).toContain('NOT a language model');
    expect(res.stdout).toContain('NOT SGSAcc');
    expect(res.stdout).toContain('models pull');
    for (const cmd of ['score', 'rerank', 'ser', 'report']) expect(res.stdout).toContain(`$ node bin/todeval.js ${cmd}`);
  });

  it('scores the system: signature, SGSAcc with and without validation, SER, BLEU, counts', () => {
    const r = readJson<ScoreReport>(path.join(out, 'score.json'));
    expect(r.signature).toMatchObject({ tool: 'todeval', metric: 'sgsacc', dataset: 'sgd', system: 'predictions', validation: true });
    expect(String(r.signature.model)).toContain('lexical-standin');
    expect(String(r.signature.revision)).toMatch(/^sha256:/);
    for (const k of ['all', 'seen', 'unseen']) {
      expect(r.sgsacc.validated).toHaveProperty(k);
      expect(r.sgsacc.unvalidated).toHaveProperty(k);
    }
    expect(r.sgsacc.unvalidated.all).toEqual(expect.any(Number));
    expect(r.counts.turns).toBe(SYSTEM_TURNS);
    expect(r.counts.evaluated + r.counts.excluded).toBe(SYSTEM_TURNS);
    // Non-categorical values live in mini_001/3 (pickup_date), mini_001/5 (price) and mini_002/1
    // (bakery_name); predictions.jsonl changes the date and drops the price.
    expect(r.ser).toMatchObject({ errors: 2, utterancesWithValues: 3 });
    expect(r.ser.ser).toBeCloseTo(200 / 3, 9);
    expect(readFileSync(path.join(REPO_ROOT, 'docs', 'example.md'), 'utf8').replace(/\s+/g, ' ')).toContain(
      `On this example it is ${r.ser.ser.toFixed(2)}%: ${r.ser.errors} of the ${r.ser.utterancesWithValues} utterances with non-categorical values lose one.`,
    );
    expect(r.bleu!.score).toBeGreaterThan(0);
    expect(r.bleu!.score).toBeLessThan(100);
    expect(r.references).toEqual({ file: path.join(out, 'references.jsonl'), reused: 0, computed: SYSTEM_TURNS, missing: 0 });
  });

  it('scores the ground truth reusing the stored references', () => {
    const g = readJson<ScoreReport>(path.join(out, 'score-ground-truth.json'));
    expect(g.signature).toMatchObject({ metric: 'sgsacc', system: 'ground-truth', predictions: 'gold' });
    expect(g.references).toMatchObject({ reused: SYSTEM_TURNS, computed: 0 });
    // What docs/example.md says of this run (issue 21: printed figures come from a test).
    const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'example.md'), 'utf8').replace(/\s+/g, ' ');
    expect(doc).toContain(`(\`references.reused\` = ${g.references.reused} in the report)`);
    expect(g.ser.ser).toBe(0);
    expect(g.bleu!.score).toBeCloseTo(100, 6);
  });

  it('shows real behaviour: validated, excluded, context-rescued and unfaithful turns all occur', () => {
    const turns = readFileSync(path.join(out, 'turns.jsonl'), 'utf8').trim().split('\n').slice(1)
      .map((l) => JSON.parse(l) as { id: string; validation: string; faithful: boolean; actions: { contextUsed: boolean }[] });
    expect(turns).toHaveLength(SYSTEM_TURNS);
    expect(turns.some((t) => t.validation === 'validated' && t.faithful)).toBe(true);
    expect(turns.some((t) => t.validation === 'excluded')).toBe(true);
    expect(turns.some((t) => t.actions.some((a) => a.contextUsed))).toBe(true);
    // "pick up on Sunday" for a Saturday pickup: a validated turn the system gets wrong.
    expect(turns.find((t) => t.id === 'mini_001/3')).toMatchObject({ validation: 'validated', faithful: false });
  });

  it('prints its whole time, build and stand-in model included and named, as docs/example.md quotes it', () => {
    // The figure on the page is a recorded run (a timing, not an output: it is not compared); what is
    // checked is that the page quotes the line the example prints, in its current form, so a total
    // that leaves the build out cannot come back unnoticed.
    const line = /^Done in (\d+\.\d) s \(build (\d+\.\d) s and stand-in model (\d+\.\d) s included\)\. Outputs in .*$/m;
    const printed = line.exec(res.stdout);
    expect(printed, res.stdout).not.toBeNull();
    const [total, build, model] = printed!.slice(1).map(Number);
    expect(total).toBeGreaterThanOrEqual(build + model);
    const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'example.md'), 'utf8');
    const quoted = line.exec(doc.slice(doc.indexOf('### Measured')));
    expect(quoted, 'docs/example.md quotes a "Done in" line of a run').not.toBeNull();
    const [qTotal, qBuild, qModel] = quoted!.slice(1).map(Number);
    expect(qTotal).toBeGreaterThanOrEqual(qBuild + qModel);
    // The wall time the page gives is that run's, measured around it (so at least its own total).
    const wall = /`npm run example`\s+took ([\d.]+) s wall, of which `tsc` ([\d.]+) s and the stand-in model ([\d.]+) s/.exec(doc.replace(/\s+/g, ' '));
    expect(wall).not.toBeNull();
    expect(Number(wall![1])).toBeGreaterThanOrEqual(qTotal);
    expect([Number(wall![2]), Number(wall![3])]).toEqual([qBuild, qModel]);
  });

  it('ends by writing the HTML report of both runs and printing its path', () => {
    const report = path.join(out, 'report.html');
    expect(res.stdout.trim().split('\n').at(-1)).toBe(`Report: ${report}  (open it in a browser; it works offline)`);
    const html = readFileSync(report, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('id="warning-banner"');
  });

  it('three dialogues: randomization is the exact enumeration of the 8 swap patterns, the bootstrap is marked as too few units (issue 31)', async () => {
    const [gold, sys] = [out + '/turns-ground-truth.jsonl', out + '/turns.jsonl'];
    const ar = await runCli(['compare', gold, sys, '--paired-ar', '--json']);
    expect(ar.code, ar.stderr).toBe(0);
    const j = JSON.parse(ar.stdout) as { comparisons: { id: string; exact?: boolean; units: number; systems: { pValue: number | null }[] }[] };
    const [g, s] = [loadItemSource(gold), loadItemSource(sys)];
    expect(j.comparisons.length).toBeGreaterThanOrEqual(3);
    for (const c of j.comparisons) {
      // Every pattern of which dialogue's statistics go to which side, counted here.
      const [bu, su] = [resamplingUnits(g.items[c.id], 'dialogue'), resamplingUnits(s.items[c.id], 'dialogue')];
      const n = bu.ids.length;
      const w = bu.metric.width;
      const stat = (mask: number) => {
        const a = new Float64Array(w);
        const b = new Float64Array(w);
        for (let i = 0; i < n; i++) {
          for (let k = 0; k < w; k++) {
            const [x, y] = [bu.stats[i * w + k], su.stats[su.ids.indexOf(bu.ids[i]) * w + k]];
            a[k] += (mask >> i) & 1 ? x : y;
            b[k] += (mask >> i) & 1 ? y : x;
          }
        }
        return Math.abs(bu.metric.score(a, 0) - bu.metric.score(b, 0));
      };
      const observed = stat(0);
      let reach = 0;
      for (let m = 0; m < 2 ** n; m++) if (stat(m) >= observed * (1 - 1e-9)) reach++;
      expect(c.exact, c.id).toBe(true);
      expect(c.units, c.id).toBe(3);
      const p = c.systems[1].pValue!;
      expect(p, c.id).toBe(reach / 2 ** n);
      // No exact two-sided p-value of three units is below 2 of 8 patterns (sacreBLEU's draws gave 0.0001).
      expect(p, c.id).toBeGreaterThanOrEqual(0.25);
    }
    const bs = await runCli(['compare', gold, sys, '--json']);
    const jb = JSON.parse(bs.stdout) as { comparisons: { lowUnits?: boolean }[] };
    expect(jb.comparisons.every((c) => c.lowUnits === true)).toBe(true);
    expect(bs.stderr).toMatch(/warning: too few units for a bootstrap 95% interval \(fewer than 18/);
    const text = await runCli(['compare', gold, sys]);
    expect(text.stdout).toMatch(/\d\.\d{4}( \*)? †/);
    const report = await runCli(['report', out + '/score-ground-truth.json', out + '/score.json', '--turns', gold, sys, '-o', out + '/report-issue31.html']);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toMatch(/p = \d\.\d{4}( \*)? †/);
    expect(report.stdout).toMatch(/significance: † 3 dialogues: too few for a bootstrap \(fewer than 18\)/);
  }, 240_000);

  it('report refuses a --turns file shorter than its run, unless --allow-partial marks it (issue 31)', async () => {
    const short = out + '/turns-short.jsonl';
    const lines = readFileSync(out + '/turns.jsonl', 'utf8').trim().split('\n');
    writeFileSync(short, lines.slice(0, 4).join('\n') + '\n');
    const args = ['report', out + '/score.json', '--turns', short, '-o', out + '/report-short.html'];
    const refused = await runCli(args);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe(`todeval: ${short}: covers 3 of the ${SYSTEM_TURNS} turns of its run report ${out}/score.json: pass the complete per-turn file, or --allow-partial to show statistics of these turns only (marked partial)`);
    expect(existsSync(out + '/report-short.html')).toBe(false);
    const allowed = await runCli([...args, '--allow-partial']);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toMatch(/partial: its ± and p-values come from 3 of its 9 turns/);
  }, 120_000);

  it('reranks: a chosen candidate per item, never beaten on fidelity, likelihood breaking ties', () => {
    const doc = readJson<RerankDoc>(path.join(out, 'rerank.json'));
    expect(doc.signature).toMatchObject({ metric: 'sgsacc-rerank' });
    const input = readFileSync(path.join(REPO_ROOT, 'examples', 'sgd-mini', 'rerank.jsonl'), 'utf8').trim().split('\n');
    expect(doc.items.map((i) => i.id)).toEqual(input.map((l) => (JSON.parse(l) as { id: string }).id));
    for (const item of doc.items) {
      const systems = item.candidates.map((c) => c.system);
      expect(systems).toContain(item.chosen.system);
      expect(item.chosen.fidelity).toBe(Math.max(...item.candidates.map((c) => c.fidelity)));
    }
    // offer-bike: beam-lm and copy-net give the same text, so the same fidelity; copy-net's higher
    // likelihood must win the tie, whatever the random model decides.
    const bike = doc.items.find((i) => i.id === 'offer-bike')!;
    const [beam, copy] = ['beam-lm', 'copy-net'].map((s) => bike.candidates.find((c) => c.system === s)!);
    expect(beam.fidelity).toBe(copy.fidelity);
    expect(bike.chosen.system).not.toBe('beam-lm');
    const lines = readFileSync(path.join(out, 'rerank.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(lines[0])).toMatchObject({ kind: 'todeval-rerank' });
    expect(lines).toHaveLength(doc.items.length + 1);
  });
});

describe('npm run example when a step cannot run', () => {
  it('a --tokenizer-dir without tokenizer.json is one line naming the step and the flag, exit 2, nothing scored', async () => {
    const out = tempDir('example-none');
    const missing = path.join(out, 'no-such-tokenizer');
    const res = await runExample(['--out-dir', out, '--tokenizer-dir', missing]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^example: step "model": --tokenizer-dir .*no-such-tokenizer holds no tokenizer\.json/)]);
    expect(res.stdout).not.toContain('$ node bin/todeval.js score');
    expect(existsSync(path.join(out, 'score.json'))).toBe(false);
  }, 60_000);

  it('a step that fails stops the example with a non-zero exit naming it (a model whose ONNX file is broken)', async () => {
    const out = tempDir('example-broken');
    const model = path.join(out, 'broken-model');
    mkdirSync(model);
    for (const f of ['tokenizer.json', 'config.json']) copyFileSync(path.join(TOKENIZER_DIR, f), path.join(model, f));
    writeFileSync(path.join(model, 'model.onnx'), 'not an ONNX file');
    const res = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/example.ts', '--out-dir', path.join(out, 'o')], {
      cwd: REPO_ROOT,
      env: { ...env, TODEVAL_MODEL: model },
      maxBuffer: 1 << 26,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/example: step "1\. score" did not run: the command above failed \(exit \d+\); stopping\./);
    expect(existsSync(path.join(out, 'o', 'report.html'))).toBe(false);
  }, 60_000);
});
