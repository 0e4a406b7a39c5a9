// `todeval sacrebleu` against the real sacreBLEU 2.6 (SACREBLEU_DIR, a source checkout; Debian's
// python3-numpy, -regex, -tabulate, -portalocker, -colorama): the same command lines, stdout equal
// byte for byte once the signature's version field is replaced on both sides, exit codes equal.
// sacreBLEU's main() runs once per command line inside one Python process
// (test/helpers/sacrebleu-driver.py); ours runs in-process through sacrebleuMain, the function the
// command calls, and a few command lines go through the real CLI too, stdin and exit codes included.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { sacrebleuMain } from '../src/cli/commands/sacrebleu.js';
import { sentenceBleu } from '../src/metrics/text/bleu.js';
import { sentenceChrf } from '../src/metrics/text/chrf.js';
import { sentenceTer } from '../src/metrics/text/ter.js';
import { BUILT_CLI, HAS_BUILT_CLI } from './helpers/cli.js';
import { loadFixture, type BleuSynthetic } from './helpers/sacrebleu-fixtures.js';
import { referenceCorpus, settled, yieldTurn } from './helpers/reference-corpus.js';
import { inputFolder, sacrebleuAnswer, type PeerAnswer } from './helpers/reference-memo.js';
import { REPO_ROOT } from './helpers/shared.js';
import { tempDir } from './helpers/temp.js';

const dir = process.env.SACREBLEU_DIR ? path.resolve(REPO_ROOT, process.env.SACREBLEU_DIR) : undefined;
const missing = !dir
  ? 'SACREBLEU_DIR is not set (a sacreBLEU 2.6 source checkout, e.g. ../shared/tools/sacrebleu)'
  : !existsSync(path.join(dir, 'sacrebleu', 'sacrebleu.py'))
    ? `SACREBLEU_DIR=${dir} holds no sacrebleu/sacrebleu.py`
    : undefined;
if (missing && process.env.TODEVAL_REQUIRE_REFERENCES) throw new Error(`the sacreBLEU comparisons must run here (TODEVAL_REQUIRE_REFERENCES is set): ${missing}`);
if (missing) console.warn(`[skip] todeval sacrebleu against sacreBLEU: ${missing}`);
const python = process.env.SACREBLEU_PYTHON ?? '/usr/bin/python3';

interface Case {
  argv: string[];
  stdin?: string;
  env?: Record<string, string>;
}
interface Outcome {
  stdout: string;
  stderr: string;
  code: number;
}

/** The one place the bytes may differ: the version the signature names (sacreBLEU's, or todeval's). */
const unversioned = (s: string) => s.replace(/\b(version|v):(2\.6\.0|todeval-[0-9A-Za-z.+-]+)/g, '$1:V').replace(/"version": "(2\.6\.0|todeval-[^"]+)"/g, '"version": "V"');

/** Runs the driver with `request` (or finds its answer to the same request: test/helpers/reference-memo.ts); resolves its JSON answer. */
async function sacrebleuPeer(request: object): Promise<{ cases: Outcome[]; sentence?: Record<'bleu' | 'chrf' | 'ter', number[]>; how: PeerAnswer['how'] }> {
  const r = await sacrebleuAnswer(python, path.join(REPO_ROOT, 'test', 'helpers', 'sacrebleu-driver.py'), dir!, JSON.stringify(request));
  if (r.code !== 0) throw new Error(`sacrebleu-driver.py exited ${r.code}: ${r.stderr}`);
  return { ...JSON.parse(r.stdout), how: r.how };
}

describe.skipIf(missing !== undefined)("todeval sacrebleu prints what sacreBLEU 2.6 prints", () => {
  const fixture = loadFixture<BleuSynthetic>('bleu-synthetic.json');
  let tmp = '';
  const f = (name: string) => path.join(tmp, name);
  const cases: Case[] = [];
  let peer: Outcome[] = [];
  let sentencePeer: Record<'bleu' | 'chrf' | 'ter', number[]> | undefined;
  const pairs: [string, string[]][] = [];

  beforeAll(async () => {
    const { references, systems } = fixture.corpus;
    const files = new Map<string, string | Buffer>();
    const write = (name: string, lines: string[]) => files.set(name, lines.join('\n') + '\n');
    references.forEach((r, k) => write(`ref${k}.txt`, r));
    for (const [name, lines] of Object.entries(systems)) write(`${name}.txt`, lines);
    // Short files for the slower paths (TER, paired tests): the first 60 segments.
    references.forEach((r, k) => write(`small-ref${k}.txt`, r.slice(0, 60)));
    for (const [name, lines] of Object.entries(systems)) write(`small-${name}.txt`, lines.slice(0, 60));
    write('refs-tab.txt', references[0].map((r, i) => `${r}\t${references[1][i]}`));
    write('refs-tab-bad.txt', references[0].map((r, i) => (i === 7 ? r : `${r}\t${references[1][i]}`)));
    write('empty.txt', []);
    files.set('ref0.txt.gz', gzipSync(references[0].join('\n') + '\n'));
    // Lines ending in ' .' (tokenized-looking) and CRLF line ends.
    files.set('crlf.txt', systems['sys-close'].map((l) => `${l} .`).join('\r\n') + '\r\n');
    // The same path whenever the files are the same (reference-memo.ts), so sacreBLEU's answer to these command lines can be remembered.
    tmp = inputFolder('sacrebleu-dropin', files, () => tempDir('sacrebleu-dropin'));
    for (let i = 0; i < 40; i++) pairs.push([systems['sys-worse'][i], [references[0][i], references[1][i]]]);

    const r0 = f('ref0.txt');
    const r1 = f('ref1.txt');
    const s = (n: string) => f(`${n}.txt`);
    const sr0 = f('small-ref0.txt');
    const sr1 = f('small-ref1.txt');
    const ss = (n: string) => f(`small-${n}.txt`);
    const base = s('sys-base');
    const worse = s('sys-worse');
    const add = (...argvs: (string[] | Case)[]) => cases.push(...argvs.map((a) => (Array.isArray(a) ? { argv: a } : a)));

    // One system: formats, metrics, references, -b, -w, --short.
    for (const format of [[], ['-f', 'text'], ['-f', 'json'], ['-f', 'latex']]) {
      add([r0, '-i', base, ...format], [r0, r1, '-i', worse, '-m', 'bleu', 'chrf', ...format], [r0, '-i', base, '-m', 'bleu', 'chrf', 'ter', '-b', ...format]);
    }
    add(
      [r0, '-i', base, '-m', 'ter', 'chrf', 'bleu', '-f', 'text', '-w', '3'],
      [r0, r1, '-i', s('sys-short'), '-m', 'chrf', 'ter', '-sh', '-f', 'text'],
      [r0, '-i', s('sys-close'), '-m', 'chrf', 'bleu', '-sh'],
      [r0, '-i', base, '-w', '0', '-f', 'text'],
      [r0, '-i', base, '-w', '4'],
      [r0, '-i', s('sys-base-copy'), '-b', '-w', '2'],
      [r0, '-i', base, '-b', '-m', 'bleu', 'chrf', '-f', 'text'],
      [r0, '-i', base, '-m', 'chrf', '-cw', '2', '-f', 'text'],
      [r0, '-i', base, '-m', 'chrf', '--chrf-word-order', '1', '--chrf-beta', '3', '--chrf-whitespace', '--chrf-lowercase'],
      [r0, r1, '-i', worse, '-m', 'chrf', '--chrf-eps-smoothing', '-cc', '4', '-f', 'text'],
      [sr0, '-i', ss('sys-worse'), '-m', 'ter', '--ter-normalized', '--ter-case-sensitive'],
      [sr0, sr1, '-i', ss('sys-base'), '-m', 'ter', '--ter-no-punct', '--ter-asian-support', '-f', 'text'],
      [sr0, '-i', ss('sys-close'), '-m', 'ter', '--ter-normalized', '--ter-asian-support', '-sh', '-f', 'text'],
    );
    // BLEU's options: tokenizers, case, smoothing.
    for (const tok of ['13a', 'none', 'intl', 'char', 'zh']) add([r0, '-i', worse, '-tok', tok, '-f', 'text']);
    add(
      [r0, '-i', worse, '-lc', '--tokenize', 'intl'],
      [r0, '-i', worse, '-s', 'floor', '-f', 'text'],
      [r0, '-i', worse, '-s', 'floor', '-sv', '0.3'],
      [r0, '-i', worse, '--smooth-method', 'add-k', '-f', 'text'],
      [r0, '-i', worse, '-s', 'add-k', '--smooth-value', '2', '-sh', '-f', 'text'],
      [r0, '-i', worse, '-s', 'none'],
      [r0, '-i', worse, '-s', 'exp', '-sv', '0.5', '-f', 'text'],
      [r0, '-i', worse, '-w2', '--format=text', '--force', '-q', '-e', 'utf-8'],
      [r0, '-i', f('crlf.txt'), '-f', 'text'],
      [f('ref0.txt.gz'), '-i', worse],
      [r0, '-i', base, '-d'],
      { argv: [r0, '-i', base, '-m', 'bleu', 'chrf'], env: { SACREBLEU_FORMAT: 'text' } },
      // --num-refs: tab-separated references in one file.
      [f('refs-tab.txt'), '-nr', '2', '-i', worse, '-m', 'bleu', 'chrf'],
      [f('refs-tab.txt'), '--num-refs', '2', '-i', base, worse, '-f', 'text'],
    );
    // Several systems: tables.
    const all = ['sys-base', 'sys-worse', 'sys-close', 'sys-short'].map(s);
    for (const format of [[], ['-f', 'text'], ['-f', 'latex']]) {
      add([r0, '-i', ...all, ...format], [r0, r1, '-i', base, worse, '-m', 'bleu', 'chrf', '-w', '2', ...format]);
    }
    add(
      [r0, '-i', base, worse, '-m', 'chrf', 'bleu', '-sh', '-f', 'text'],
      [sr0, '-i', ss('sys-base'), ss('sys-worse'), '-m', 'ter', 'bleu', '-b', '-f', 'text'],
      [r0, '-i', base, s('sys-base-copy'), '-w', '0', '-f', 'latex'],
    );
    // stdin: one system, several as tab-separated columns.
    const lines = fixture.corpus.systems;
    add(
      { argv: [r0], stdin: lines['sys-worse'].join('\n') + '\n' },
      { argv: [r0, '-m', 'chrf', '-f', 'text'], stdin: lines['sys-base'].join('\n') },
      { argv: [r0, r1, '-f', 'text'], stdin: lines['sys-base'].map((l, i) => `${l}\t${lines['sys-worse'][i]}\t${lines['sys-close'][i]}`).join('\n') + '\n' },
      { argv: [sr0, '-pbs', '-pbsn', '50', '-f', 'text'], stdin: lines['sys-base'].slice(0, 60).map((l, i) => `${l}\t${lines['sys-worse'][i]}`).join('\n') + '\n' },
      { argv: [r0], stdin: lines['sys-base'].map((l, i) => (i === 3 ? l : `${l}\t${lines['sys-worse'][i]}`)).join('\n') + '\n' },
      { argv: [r0, '-m', 'bleu'], stdin: '' },
    );
    // --confidence for one system.
    add(
      [sr0, '-i', ss('sys-base'), '-ci', '-cin', '200'],
      [sr0, '-i', ss('sys-worse'), '--confidence', '-m', 'bleu', 'chrf', 'ter', '-f', 'text'],
      [sr0, '-i', ss('sys-worse'), '-ci', '-cin', '100', '-b', '-m', 'bleu', 'chrf', '-f', 'text'],
      [sr0, '-i', ss('sys-close'), '-ci', '-cin', '100', '-m', 'chrf', '-b'],
      { argv: [sr0, '-i', ss('sys-close'), '-ci', '-cin', '100', '-sh', '-f', 'text'], env: { SACREBLEU_SEED: '42' } },
    );
    // Paired tests: tables in every format, p-values, means, intervals; -b is ignored there.
    const smallAll = ['sys-base', 'sys-worse', 'sys-close', 'sys-base-copy'].map(ss);
    for (const format of [[], ['-f', 'text'], ['-f', 'latex']]) {
      add([sr0, '-i', ...smallAll, '-pbs', '-pbsn', '100', '-m', 'bleu', 'chrf', ...format], [sr0, sr1, '-i', ...smallAll.slice(0, 3), '--paired-ar', '--paired-ar-n', '100', '-m', 'ter', 'bleu', ...format]);
    }
    add(
      [sr0, '-i', ss('sys-base'), ss('sys-worse'), '-pbs', '-pbsn', '100', '-b', '-w', '2', '-f', 'text'],
      [sr0, '-i', ss('sys-base'), ss('sys-close'), ss('sys-base'), '-par', '-parn', '200', '-m', 'chrf', '-cw', '2', '-f', 'text'],
      [sr0, '-i', ss('sys-base'), ss('sys-worse'), ss('sys-close'), '-pbs', '-pbsn', '100', '-j', '2', '-sh', '-f', 'text'],
      [sr0, '-i', ss('sys-base'), ss('sys-short'), '-par', '-parn', '50', '-m', 'bleu', 'chrf', 'ter', '-w', '3', '-f', 'json'],
      { argv: [sr0, '-i', ss('sys-base'), ss('sys-worse'), '-pbs', '-pbsn', '60', '-f', 'text'], env: { SACREBLEU_SEED: '7' } },
    );
    // --sentence-level: BLEU with every smoothing, chrF, chrF++, TER.
    for (const smooth of [[], ['-s', 'floor'], ['-s', 'floor', '-sv', '0.25'], ['-s', 'add-k'], ['-s', 'add-k', '-sv', '3'], ['-s', 'none']]) {
      add([sr0, '-i', ss('sys-worse'), '-sl', ...smooth]);
    }
    add(
      [sr0, sr1, '-i', ss('sys-short'), '--sentence-level', '-lc', '-tok', 'char'],
      [sr0, '-i', ss('sys-worse'), '-sl', '-m', 'chrf'],
      [sr0, sr1, '-i', ss('sys-worse'), '-sl', '-m', 'chrf', '-cw', '2', '-w', '3'],
      [sr0, '-i', ss('sys-close'), '-sl', '-m', 'ter', '-b'],
      [sr0, sr1, '-i', ss('sys-close'), '-sl', '-m', 'ter', '--ter-normalized', '-sh'],
      { argv: [sr0, '-sl', '-m', 'chrf', '-b', '-w', '2'], stdin: lines['sys-short'].slice(0, 60).join('\n') + '\n' },
    );
    // Refusals, with sacreBLEU's exit codes.
    add(
      ['-i', base],
      [r0, '-i', base, '--bogus'],
      [r0, '-i', base, '-m', 'rouge'],
      [r0, '-i', base, worse, '-pbs', '-par'],
      [r0, '-i', s('sys-short'), '-w'],
      [r0, '-i', base, '-cc', 'x'],
      [sr0, '-i', base],
      [r0, '-i', base, base],
      [r0, '-i', base, '-pbs'],
      [r0, '-i', base, worse, '-ci'],
      [r0, '-i', base, '-sl', '-m', 'bleu', 'chrf'],
      [r0, '-i', base, worse, '-sl'],
      [r0, '-i', base, '-sl', '-ci'],
      [r0, '-i', f('no-such-file.txt')],
      [r0, '-i', f('empty.txt')],
      [r0, r1, '-nr', '2', '-i', base],
      [f('refs-tab-bad.txt'), '-nr', '2', '-i', base],
      [r0, '-i', base, 'stray', '-b', r1],
    );
    const answer = await sacrebleuPeer({ cases, sentence: { pairs } });
    peer = answer.cases;
    sentencePeer = answer.sentence;
    console.log(`[sacreBLEU] ${dir} under ${python} (${answer.how}): ${cases.length} command lines and ${pairs.length} sentence pairs`);
  }, 600_000);

  it('at least 80 command lines: stdout byte for byte (the version field aside), exit codes equal', async () => {
    expect(cases.length).toBeGreaterThanOrEqual(80);
    expect(peer).toHaveLength(cases.length);
    const differ: string[] = [];
    for (const [k, c] of cases.entries()) {
      await yieldTurn();
      const ours = await sacrebleuMain(c.argv, { stdin: () => Buffer.from(c.stdin ?? ''), env: c.env ?? {} });
      const same = unversioned(ours.stdout) === unversioned(peer[k].stdout) && ours.code === peer[k].code;
      if (!same) differ.push(`${c.argv.map((a) => path.basename(a)).join(' ')} (exit ${ours.code} vs ${peer[k].code})\n--- ours\n${ours.stdout}${ours.stderr}--- sacreBLEU\n${peer[k].stdout}${peer[k].stderr}`);
    }
    expect(differ.join('\n')).toBe('');
    // The comparison is not vacuous: most command lines printed something, and some failed.
    expect(peer.filter((p) => p.code === 0 && p.stdout.length > 0).length).toBeGreaterThan(60);
    expect(new Set(peer.map((p) => p.code))).toEqual(new Set([0, 1, 2, 17]));
  });

  it('the real CLI prints the same: stdin columns, a paired table, sentence level, exit code 17', async () => {
    const pick = (test: (c: Case) => boolean) => cases.findIndex(test);
    const picks = [
      pick((c) => (c.stdin ?? '').includes('\t') && c.argv.includes('-f')),
      pick((c) => c.argv.includes('-par') && c.argv.includes('text')),
      pick((c) => c.argv.includes('-sl') && c.stdin !== undefined),
      pick((c) => c.stdin !== undefined && c.argv.length === 1 && c.stdin.split('\n')[3]?.includes('\t') === false),
    ];
    expect(picks.every((k) => k >= 0)).toBe(true);
    expect(peer[picks[3]].code).toBe(17);
    for (const k of picks) {
      const c = cases[k];
      const r = await runCliStdin(['sacrebleu', ...c.argv], c.stdin ?? '', c.env);
      expect({ argv: c.argv, stdout: unversioned(r.stdout), code: r.code }).toEqual({ argv: c.argv, stdout: unversioned(peer[k].stdout), code: peer[k].code });
    }
  }, 240_000);

  it("sentenceBleu, sentenceChrf and sentenceTer equal sacreBLEU's sentence_bleu, sentence_chrf, sentence_ter", () => {
    expect(sentencePeer).toBeDefined();
    const ours = {
      bleu: pairs.map(([h, r]) => sentenceBleu(h, r).score),
      chrf: pairs.map(([h, r]) => sentenceChrf(h, r).score),
      ter: pairs.map(([h, r]) => sentenceTer(h, r).score),
    };
    // The same arithmetic in the same order, BLEU's exp and log correctly rounded as the C library's
    // are (src/metrics/text/libm.ts): equal to the last bit.
    expect(ours).toEqual(sentencePeer);
    expect(new Set(ours.bleu).size).toBeGreaterThan(10);
  });
});

/** The CLI (built, as users run it, or else from source) with `input` on stdin; never rejects. */
function runCliStdin(args: string[], input: string, env: Record<string, string> = {}): Promise<Outcome> {
  const entry = HAS_BUILT_CLI ? [BUILT_CLI] : ['--import', 'tsx', 'src/cli/main.ts'];
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...entry, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
      resolve({ stdout, stderr, code: error ? ((error as { code?: number }).code ?? 1) : 0 }),
    );
    child.stdin!.end(input);
  });
}

// --sentence-level on a real corpus: sacreBLEU's WMT17 en-de systems (3,004 segments each) where the
// sacreBLEU source has them (a git checkout), else the five MultiWOZ systems' responses (CI, whose
// ../shared has the package source only; test/helpers/reference-corpus.ts): BLEU with every
// smoothing, chrF, chrF++ and TER, printed to four decimals, byte for byte.
const corpus = missing === undefined ? await referenceCorpus() : missing;
if (missing === undefined && typeof corpus === 'string') console.warn(`[skip] --sentence-level on a real corpus: ${corpus}`);

if (typeof corpus !== 'string') {
  // The command lines, and sacreBLEU's answer to them, start before the file's first suite: sacreBLEU
  // prints a line per turn for 17 command lines in its own process (about half this file's CPU time)
  // on one core while the worker compares the synthetic corpus on the other. The files are made in a hook
  // (tempDir removes them after the file's last test), so a run that skips the file makes none.
  const cases: Case[] = [];
  let peerAnswer: (() => Promise<{ cases: Outcome[]; how: PeerAnswer['how'] }>) | undefined;
  beforeAll(() => {
    const inputs = new Map<string, string>([['ref.txt', corpus.refs[0].join('\n') + '\n']]);
    corpus.systems.slice(0, 2).forEach(([, lines], k) => inputs.set(`sys${k}.txt`, lines.join('\n') + '\n'));
    const tmp = inputFolder('sacrebleu-sentence-level', inputs, () => tempDir('sacrebleu-sentence-level'));
    const ref = path.join(tmp, 'ref.txt');
    const files = corpus.systems.slice(0, 2).map(([name], k) => ({ name, file: path.join(tmp, `sys${k}.txt`) }));
    for (const { file } of files) {
      for (const smooth of [['-s', 'exp'], ['-s', 'floor'], ['-s', 'floor', '-sv', '0.5'], ['-s', 'add-k'], ['-s', 'add-k', '-sv', '2'], ['-s', 'none']]) {
        cases.push({ argv: [ref, '-i', file, '-sl', '-w', '4', ...smooth] });
      }
      cases.push({ argv: [ref, '-i', file, '-sl', '-w', '4', '-m', 'chrf'] }, { argv: [ref, '-i', file, '-sl', '-w', '4', '-m', 'chrf', '-cw', '2'] });
    }
    // TER is slow in Python: one system.
    cases.push({ argv: [ref, '-i', files[0].file, '-sl', '-w', '4', '-m', 'ter'] });
    peerAnswer = settled(sacrebleuPeer({ cases }));
  });

  describe(`todeval sacrebleu --sentence-level equals sacreBLEU on ${corpus.label}`, () => {
    it(`BLEU (exp, floor, add-k, none) and chrF, chrF++ of ${corpus.systems[0][0]} and ${corpus.systems[1][0]}, TER of ${corpus.systems[0][0]}, segment by segment`, async () => {
      expect(cases).toHaveLength(17);
      // Ours first, while sacreBLEU may still be computing; then each command line's output compared.
      const outputs: Outcome[] = [];
      for (const c of cases) {
        // sacrebleuMain's work is synchronous: a turn of the event loop between command lines keeps
        // the worker answering vitest (awaiting an already settled promise would not).
        await yieldTurn();
        outputs.push(await sacrebleuMain(c.argv, { stdin: () => Buffer.alloc(0), env: {} }));
      }
      const answer = await peerAnswer!();
      console.log(`[sacreBLEU] ${dir} under ${python} (${answer.how}): --sentence-level on ${corpus.label}`);
      const peer = answer.cases;
      for (const [k, c] of cases.entries()) {
        const ours = outputs[k];
        expect(peer[k].code, peer[k].stderr).toBe(0);
        expect(unversioned(ours.stdout).split('\n').length).toBe(corpus.refs[0].length + 1);
        if (unversioned(ours.stdout) !== unversioned(peer[k].stdout)) {
          const a = unversioned(ours.stdout).split('\n');
          const b = unversioned(peer[k].stdout).split('\n');
          const i = a.findIndex((line, j) => line !== b[j]);
          expect(`${c.argv.slice(3).join(' ')} segment ${i + 1}: ${a[i]}`).toBe(`${c.argv.slice(3).join(' ')} segment ${i + 1}: ${b[i]}`);
        }
      }
    }, 600_000);
  });
}
