// `todeval bleu` typed as sacreBLEU users type it, printed todeval's way (`todeval sacrebleu`, which prints what
// sacreBLEU prints, is test/sacrebleu-dropin.test.ts): references, hypotheses from stdin, -m with several metrics, -b, --format, -tok, -lc, the chrF and
// TER flags, paired tests and --confidence for every metric, and -t/-l refused. Expected numbers
// come from sacreBLEU: its test_ter.py case, and the fixtures scripts/significance-fixtures.py and
// scripts/text-metric-fixtures.py wrote from sacreBLEU 2.6.0.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pyFixed } from '../src/metrics/text/py-string.js';
import { CLI_ARGV, runCli, type CliResult } from './helpers/cli.js';
import { loadFixture, type BleuSynthetic, type ChrfTerSynthetic, type SacrebleuSystemResult } from './helpers/sacrebleu-fixtures.js';
import { REPO_ROOT } from './helpers/shared.js';

const bleuFixture = loadFixture<BleuSynthetic>('bleu-synthetic.json');
const textFixture = loadFixture<ChrfTerSynthetic>('chrf-ter-synthetic.json');

const tmp = mkdtempSync(path.join(tmpdir(), 'todeval-sacrebleu-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const file = (name: string, lines: string[]): string => {
  const f = path.join(tmp, name);
  writeFileSync(f, lines.join('\n') + '\n');
  return f;
};
const refs = bleuFixture.corpus.references.map((lines, k) => file(`ref${k}.txt`, lines));
const sys = Object.fromEntries(Object.entries(bleuFixture.corpus.systems).map(([name, lines]) => [name, file(`${name}.txt`, lines)]));
const names = Object.keys(bleuFixture.corpus.systems);
const sig = (s: string) => s.replace(/version:[^|]+$/, 'version:2.x');
const same = (a: object, b: object) => JSON.stringify(a) === JSON.stringify(b);
const chrf = (options: Record<string, unknown>, system: string, nrefs: number) => textFixture.chrf.find((e) => same(e.options, options) && e.system === system && e.nrefs === nrefs)!;
const ter = (options: Record<string, unknown>, system: string, nrefs: number) => textFixture.ter.find((e) => same(e.options, options) && e.system === system && e.nrefs === nrefs)!;
const bleu = (system: string, nrefs: number, tokenize = '13a', lowercase = false) => bleuFixture.scores.find((e) => e.system === system && e.nrefs === nrefs && e.tokenize === tokenize && e.lowercase === lowercase)!;

// sacreBLEU's test_ter.py: a realistic WMT example whose corpus TER is 0.136 (x100, to 1e-3).
const TER_HYPS = [
  'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit das Bild ungefähr dieselbe Größe aufweist wie die andere Größe .',
  'wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',
  'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie Werte für " Fehlerkorrektur-Level " und " Y / X-Verhältnis " ein .',
  'Sie können beispielsweise ein Dokument erstellen , das ein Auto über die Bühne enthält .',
  'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "',
];
const TER_REFS = [
  'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit die Darstellung des Bildes in einer anderen Größe beibehalten wird .',
  'wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',
  'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie für " Fehlerkorrektur-Level " und " Y / X-Verhältnis " niedrigere Werte ein .',
  'Sie können beispielsweise ein Dokument erstellen , das ein Auto enthalt , das sich über die Bühne bewegt .',
  'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "',
];
const terRef = file('ter-ref.txt', TER_REFS);

/** `todeval ARGS` with `input` on stdin. */
function runWithStdin(args: string[], input: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI_ARGV, ...args], { cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

const ok = (r: CliResult): string => {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
};

interface MetricJson {
  metric: string;
  test: string | null;
  n: number | null;
  seed: number | null;
  signature: string;
  systems: (SacrebleuSystemResult & { numEdits?: number; refLength?: number })[];
}

describe("sacreBLEU's command line for local files", () => {
  it('positional references and -m bleu chrf ter: one result per metric, each signed, equal to sacreBLEU', async () => {
    const out = JSON.parse(ok(await runCli(['bleu', refs[0], refs[1], '-i', sys['sys-base'], sys['sys-worse'], '-m', 'ter', 'chrf', 'bleu', '--format', 'json']))) as MetricJson[];
    // Printed in sacreBLEU's order (BLEU, chrF, TER), whatever the order given.
    expect(out.map((m) => m.metric)).toEqual(['BLEU', 'chrF2', 'TER']);
    for (const [k, system] of ['sys-base', 'sys-worse'].entries()) {
      expect(out[0].systems[k].name).toBe(sys[system]);
      expect(Math.abs(out[0].systems[k].score - bleu(system, 2).score)).toBeLessThan(1e-9);
      expect(Math.abs(out[1].systems[k].score - chrf({}, system, 2).score)).toBeLessThan(1e-9);
      expect(Math.abs(out[2].systems[k].score - ter({}, system, 2).score)).toBeLessThan(1e-9);
    }
    expect(out[0].signature).toBe(sig(bleu('sys-base', 2).signature));
    expect(out[1].signature).toBe(sig(chrf({}, 'sys-base', 2).signature));
    expect(out[2].signature).toBe(sig(ter({}, 'sys-base', 2).signature));
    // Positional references and -r are the same references.
    const viaR = JSON.parse(ok(await runCli(['bleu', '-r', refs[0], '-r', refs[1], '-i', sys['sys-base'], sys['sys-worse'], '-m', 'ter', 'chrf', 'bleu', '--json']))) as MetricJson[];
    expect(viaR).toEqual(out);
  });

  it('text format (the default): one line per system and metric, name, metric|signature = score', async () => {
    const lines = ok(await runCli(['bleu', refs[0], '-i', sys['sys-worse'], '-m', 'bleu', 'chrf', 'ter', '-w', '2'])).trim().split('\n');
    expect(lines).toHaveLength(3);
    const b = bleu('sys-worse', 1);
    const details = `${b.precisions.map((p) => pyFixed(p, 1)).join('/')} (BP = ${pyFixed(b.bp, 3)} ratio = ${pyFixed(b.sysLen / b.refLen, 3)} hyp_len = ${b.sysLen} ref_len = ${b.refLen})`;
    expect(lines[0]).toBe(`${sys['sys-worse']}: BLEU|${sig(b.signature)} = ${pyFixed(b.score, 2)} ${details}`);
    expect(lines[1]).toBe(`${sys['sys-worse']}: chrF2|${sig(chrf({}, 'sys-worse', 1).signature)} = ${pyFixed(chrf({}, 'sys-worse', 1).score, 2)}`);
    expect(lines[2]).toBe(`${sys['sys-worse']}: TER|${sig(ter({}, 'sys-worse', 1).signature)} = ${pyFixed(ter({}, 'sys-worse', 1).score, 2)}`);
  });

  it('-b: the scores only, one a line, metric by metric', async () => {
    const out = ok(await runCli(['bleu', refs[0], '-i', sys['sys-short'], '-m', 'bleu', 'chrf', 'ter', '-b', '-w', '3']));
    expect(out).toBe([bleu('sys-short', 1).score, chrf({}, 'sys-short', 1).score, ter({}, 'sys-short', 1).score].map((x) => pyFixed(x, 3)).join('\n') + '\n');
  });

  it('hypotheses on stdin without -i (TER of test_ter.py), and tab-separated columns as systems', async () => {
    const one = ok(await runWithStdin(['bleu', terRef, '-m', 'ter', '-b', '-w', '4'], TER_HYPS.join('\n') + '\n'));
    expect(Math.abs(Number(one.trim()) - 13.6)).toBeLessThan(1e-3);
    // Two systems pasted side by side: the hypotheses, and the references themselves (TER 0).
    const two = JSON.parse(ok(await runWithStdin(['bleu', terRef, '-m', 'ter', '--json'], TER_HYPS.map((h, i) => `${h}\t${TER_REFS[i]}`).join('\n') + '\n'))) as MetricJson;
    expect(two.systems.map((s) => s.name)).toEqual(['System 1', 'System 2']);
    expect(Math.abs(two.systems[0].score - 13.6)).toBeLessThan(1e-3);
    expect(two.systems[1].score).toBe(0);
  });

  it('-tok and -lc (BLEU), as sacreBLEU spells them', async () => {
    const r = JSON.parse(ok(await runCli(['bleu', refs[0], '-i', sys['sys-worse'], '-tok', 'intl', '-lc', '--format', 'json']))) as MetricJson;
    const e = bleu('sys-worse', 1, 'intl', true);
    expect(r.signature).toBe(sig(e.signature));
    expect(Math.abs(r.systems[0].score - e.score)).toBeLessThan(1e-9);
  });

  it('chrF and TER flags: --chrf-char-order/-cw/--chrf-beta and --ter-normalized/--ter-no-punct/--ter-asian-support/--ter-case-sensitive', async () => {
    const out = JSON.parse(ok(await runCli(['bleu', refs[0], refs[1], '-i', sys['sys-close'], '-m', 'chrf', 'ter', '--chrf-char-order', '4', '-cw', '1', '--chrf-beta', '1', '--ter-normalized', '--ter-no-punct', '--ter-asian-support', '--ter-case-sensitive', '--json']))) as MetricJson[];
    const c = chrf({ charOrder: 4, wordOrder: 1, beta: 1 }, 'sys-close', 2);
    const t = ter({ normalized: true, noPunct: true, asianSupport: true, caseSensitive: true }, 'sys-close', 2);
    expect(out[0].metric).toBe('chrF1+');
    expect(out[0].signature).toBe(sig(c.signature));
    expect(Math.abs(out[0].systems[0].score - c.score)).toBeLessThan(1e-9);
    expect(out[1].signature).toBe(sig(t.signature));
    expect(Math.abs(out[1].systems[0].score - t.score)).toBeLessThan(1e-9);
  });

  it('--paired-bs for chrF, chrF++ and TER: sacreBLEU p-values, means and intervals, per metric', async () => {
    const t = textFixture.tests.find((x) => x.test === 'bs')!;
    const args = ['bleu', refs[0], refs[1], '-i', ...names.map((n) => sys[n]), '--paired-bs', '--json'];
    const plain = JSON.parse(ok(await runCli([...args, '-m', 'chrf', 'ter']))) as MetricJson[];
    const plus = JSON.parse(ok(await runCli([...args, '-m', 'chrf', '--chrf-word-order', '2']))) as MetricJson;
    for (const [key, got] of [['chrF2', plain[0]], ['TER', plain[1]], ['chrF2++', plus]] as const) {
      const e = t.metrics[key];
      expect(got.metric).toBe(key);
      expect(got.signature).toBe(sig(e.signature));
      got.systems.forEach((s, i) => {
        const x = e.systems[i];
        expect(Math.abs(s.score - x.score)).toBeLessThan(1e-9);
        expect(s.pValue, `${key} ${x.name}`).toBe(x.name === 'sys-base-copy' ? 1 : x.pValue);
        expect(Math.abs(s.mean! - x.mean!)).toBeLessThan(1e-9);
        expect(Math.abs(s.ci! - x.ci!)).toBeLessThan(1e-9);
      });
    }
  });

  it('--paired-ar with intervals and --confidence for chrF++ and TER: sacreBLEU numbers', async () => {
    const t = textFixture.tests.find((x) => x.test === 'ar')!;
    const ar = JSON.parse(ok(await runCli(['bleu', refs[0], refs[1], '-i', ...names.map((n) => sys[n]), '-m', 'ter', '--paired-ar', '--paired-ar-n', String(t.n), '--seed', String(t.seed), '--confidence', '--confidence-n', String(t.nArConfidence), '--json']))) as MetricJson;
    expect(ar.signature).toBe(sig(t.metrics.TER.signature));
    ar.systems.forEach((s, i) => {
      const x = t.metrics.TER.systems[i];
      expect(s.pValue).toBe(x.name === 'sys-base-copy' ? 1 : x.pValue);
      expect(Math.abs(s.mean! - x.mean!)).toBeLessThan(1e-9);
    });
    const c = textFixture.confidence.find((x) => x.metric === 'chrf')!;
    const conf = JSON.parse(ok(await runCli(['bleu', refs[0], refs[1], '-i', sys[c.system], '-m', 'chrf', '-cw', '2', '--confidence', '--json']))) as MetricJson;
    expect(conf.signature).toBe(sig(c.signature));
    expect(Math.abs(conf.systems[0].mean! - c.mean)).toBeLessThan(1e-9);
    expect(Math.abs(conf.systems[0].ci! - c.ci)).toBeLessThan(1e-9);
  });

  it('-t/-l (test-set download) refused with one line saying to pass the references; other bad input as before', async () => {
    for (const args of [['bleu', '-t', 'wmt17', '-l', 'en-de', '-i', sys['sys-base']], ['bleu', refs[0], '-l', 'en-de', '-i', sys['sys-base']]]) {
      const r = await runCli(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^todeval: -[tl]\/--(test-set|language-pair): todeval does not download test sets; pass the reference file\(s\) instead: todeval bleu REF\.txt -i SYSTEM\.txt\n$/);
    }
    // todeval sacrebleu refuses them too, in one line, with argparse's exit code for a refused option.
    const drop = await runCli(['sacrebleu', '-t', 'wmt17', '-l', 'en-de', '-i', sys['sys-base']]);
    expect(drop.code).toBe(2);
    expect(drop.stderr).toMatch(/^todeval sacrebleu: -t: todeval does not download test sets .*\n$/);
    const bad = await runCli(['bleu', refs[0], '-i', sys['sys-base'], '-m', 'meteor']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/meteor/);
    const tabs = await runWithStdin(['bleu', refs[0]], readFileSync(sys['sys-base'], 'utf8'));
    expect(tabs.code).toBe(2);
    expect(tabs.stderr).toMatch(/^todeval: stdin: line \d+ has 2 tab-separated systems, line 1 has 1 .*-i - reads one system/);
  });
});
