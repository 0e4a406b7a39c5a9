// `todeval bleu` as users run it, against the numbers sacreBLEU gave for the same files
// (test/fixtures/significance/bleu-synthetic.json, made by scripts/significance-fixtures.py).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_ARGV, runCli, type CliResult } from './helpers/cli.js';
import { loadFixture, type BleuSynthetic } from './helpers/sacrebleu-fixtures.js';
import { REPO_ROOT } from './helpers/shared.js';

const fixture = loadFixture<BleuSynthetic>('bleu-synthetic.json');
const tmp = mkdtempSync(path.join(tmpdir(), 'todeval-bleu-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const file = (name: string, lines: string[]): string => {
  const f = path.join(tmp, name);
  writeFileSync(f, lines.join('\n') + '\n');
  return f;
};
const refs = fixture.corpus.references.map((lines, k) => file(`ref${k}.txt`, lines));
const sys = Object.fromEntries(Object.entries(fixture.corpus.systems).map(([name, lines]) => [name, file(`${name}.txt`, lines)]));
const names = Object.keys(fixture.corpus.systems);

interface BleuJson {
  metric: string;
  test: string | null;
  n: number | null;
  seed: number | string | null;
  signature: string;
  systems: { name: string; score: number; pValue: number | null; mean: number | null; ci: number | null }[];
}

const json = (r: CliResult): BleuJson => {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as BleuJson;
};

describe('todeval bleu', () => {
  it('--paired-bs --json: the shape in docs/significance.md, with sacreBLEU numbers', async () => {
    const t = fixture.tests.find((x) => x.test === 'bs' && x.seed === 12345)!;
    const r = json(await runCli(['bleu', '-r', refs[0], '-r', refs[1], '-i', ...names.map((n) => sys[n]), '--paired-bs', '--json']));
    expect(Object.keys(r)).toEqual(['metric', 'test', 'n', 'seed', 'segments', 'signature', 'systems']);
    expect({ metric: r.metric, test: r.test, n: r.n, seed: r.seed }).toEqual({ metric: 'BLEU', test: 'bs', n: 1000, seed: 12345 });
    expect(r.signature).toBe('nrefs:2|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x');
    r.systems.forEach((s, i) => {
      const e = t.systems[i];
      expect(s.name).toBe(sys[e.name]);
      expect(s.score).toBeCloseTo(e.score, 10);
      expect(s.pValue).toBe(e.name === 'sys-base-copy' ? 1 : e.pValue);
      expect(Math.abs(s.mean! - e.mean!)).toBeLessThan(1e-9);
      expect(Math.abs(s.ci! - e.ci!)).toBeLessThan(1e-9);
    });
  });

  it('--paired-ar with another seed and tokenizer, text output: one line per system with the signature', async () => {
    const t = fixture.tests.find((x) => x.test === 'ar' && x.seed === 99)!;
    const r = await runCli(['bleu', '-r', refs[0], '-r', refs[1], '-i', ...names.map((n) => sys[n]), '--paired-ar', '--paired-ar-n', '2000', '--seed', '99', '--tokenize', 'zh', '--confidence', '--confidence-n', '300', '-w', '2']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(names.length + 1);
    const signature = 'nrefs:2|bs:300|ar:2000|seed:99|case:mixed|eff:no|tok:zh|smooth:exp|version:2.x';
    t.systems.forEach((e, i) => {
      expect(lines[i]).toContain(`${i === 0 ? 'Baseline: ' : ''}${sys[e.name]}`);
      expect(lines[i]).toContain(`: BLEU|${signature} = ${e.score.toFixed(2)} (μ = ${e.mean!.toFixed(2)} ± ${e.ci!.toFixed(2)})`);
      if (i > 0) expect(lines[i]).toContain(`(p = ${(e.name === 'sys-base-copy' ? 1 : e.pValue!).toFixed(4)})`);
    });
    expect(lines[names.length]).toMatch(/^paired approximate randomization, 2000 trials, seed 99: \* marks p <= 0.05/);
  });

  it('--confidence of one system read from stdin (-i -)', async () => {
    const c = fixture.confidence.find((x) => x.bleu.tokenize === 'char')!;
    const r = await new Promise<CliResult>((resolve) => {
      const child = spawn(process.execPath, [...CLI_ARGV, 'bleu', '-r', refs[0], '-i', '-', '--tokenize', 'char', '--confidence', '--confidence-n', String(c.n), '--seed', String(c.seed), '--json'], { cwd: REPO_ROOT });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      child.stdin.end(readFileSync(sys[c.system]));
    });
    const out = json(r);
    expect(out.signature).toBe(c.signature.replace(/version:.*$/, 'version:2.x'));
    expect(out.systems[0].name).toBe('stdin');
    expect(out.systems[0].score).toBeCloseTo(c.score, 10);
    expect(Math.abs(out.systems[0].mean! - c.mean)).toBeLessThan(1e-9);
  });

  it('plain scores for every tokenizer and --lowercase, as sacreBLEU', async () => {
    for (const [tokenize, lowercase] of [['intl', true], ['none', false]] as const) {
      const r = json(await runCli(['bleu', '-r', refs[0], '-i', sys['sys-worse'], '--tokenize', tokenize, ...(lowercase ? ['--lowercase'] : []), '--json']));
      const e = fixture.scores.find((s) => s.system === 'sys-worse' && s.tokenize === tokenize && s.lowercase === lowercase && s.nrefs === 1)!;
      expect({ test: r.test, n: r.n, seed: r.seed }).toEqual({ test: null, n: null, seed: null });
      expect(r.signature).toBe(e.signature.replace(/version:.*$/, 'version:2.x'));
      expect(r.systems[0].score).toBeCloseTo(e.score, 10);
    }
  });

  it('bad input: one line naming the file or flag, exit 2', async () => {
    const short = file('short.txt', fixture.corpus.systems['sys-base'].slice(1));
    const cases: [string[], RegExp][] = [
      [['bleu', '-r', refs[0], '-i', short], new RegExp(`^todeval: ${short.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: 239 lines, the references have 240\\n$`)],
      [['bleu', '-i', sys['sys-base']], /^todeval: give at least one reference file: todeval bleu REF\.txt -i SYSTEM\.txt \(or -r REF\.txt\)\n$/],
      [['bleu', '-r', refs[0], '-i', sys['sys-base'], '--paired-bs'], /^todeval: --paired-bs compares systems with the first one: give at least two -i files\n$/],
      [['bleu', '-r', refs[0], '-i', sys['sys-base'], path.join(tmp, 'missing.txt')], /^todeval: .*missing\.txt: cannot read system output: no such file or directory\n$/],
      [['bleu', '-r', refs[0], '-i', sys['sys-base'], sys['sys-base']], /given twice/],
    ];
    for (const [args, err] of cases) {
      const r = await runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(err);
    }
    const both = await runCli(['bleu', '-r', refs[0], '-i', sys['sys-base'], sys['sys-close'], '--paired-bs', '--paired-ar']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/cannot be used with/);
  });
});
