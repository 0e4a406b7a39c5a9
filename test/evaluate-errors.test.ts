import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Evaluator } from '../src/metrics/mwz/evaluator.js';
import { validatePredictions } from '../src/metrics/mwz/input.js';
import { InputError } from '../src/util/errors.js';
import { DATA_DIR, hasData } from './helpers/shared.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const expectedTurns = { sng0073: 2, pmul4648: 3 };
const turn = (response: string) => ({ response });

function errorOf(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('expected an InputError');
}

describe('predictions validation', () => {
  it('names dialogue ids that are not in the test set', () => {
    const e = errorOf(() =>
      validatePredictions({ sng0073: [turn('a'), turn('b')], mul9999: [], pmul0001: [] }, { file: 'p.json', expectedTurns }),
    );
    expect(e.oneLine()).toBe('p.json: dialogue ids not in the MultiWOZ test set: mul9999, pmul0001');
  });

  it('names the dialogue with a wrong number of turns, expected vs given', () => {
    const e = errorOf(() => validatePredictions({ PMUL4648: [turn('a')] }, { file: 'p.json', expectedTurns }));
    expect(e.oneLine()).toBe('p.json: PMUL4648: expected 3 system turns, got 1');
  });

  it('names dialogue and turn of a malformed turn', () => {
    const e = errorOf(() =>
      validatePredictions({ sng0073: [turn('a'), { response: 'b', state: { hotel: { stars: ['4'] } } }] }, { expectedTurns }),
    );
    expect(e.where).toBe('sng0073/turn 1');
    expect(e.message).toMatch(/state\.hotel\.stars/);
  });

  it('lists invalid dialogues and keeps the rest under skipInvalid', () => {
    const r = validatePredictions(
      { 'SNG0073.json': [turn('a'), turn('b')], pmul4648: [turn('x')], foo: [] },
      { expectedTurns, skipInvalid: true },
    );
    expect(Object.keys(r.dialogues)).toEqual(['sng0073']);
    expect(r.invalid.map((e) => e.oneLine())).toEqual([
      'pmul4648: expected 3 system turns, got 1',
      'dialogue ids not in the MultiWOZ test set: foo',
    ]);
  });
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('evaluate on real data: placeholders and CLI', () => {
  // SNG0073 has 4 system turns (8 log entries in the ConvLab file, 4 rows in booked_domains.json)
  const sng0073 = (first: string) => [first, 'b', 'c', 'd'].map((r) => ({ response: r }));

  it('warns about unknown placeholders with dialogue and turn, and fails on them with strict', () => {
    const warnings: string[] = [];
    const ev = new Evaluator({ richness: true, dataDir: DATA_DIR, onWarning: (m) => warnings.push(m) });
    const r = ev.evaluate({ sng0073: sng0073('the [hotel_colour] one is [value_name]') }, 'p.json');
    expect(r.details.unknown_placeholders).toEqual([{ where: 'sng0073/turn 0', placeholders: ['hotel_colour'] }]);
    expect(warnings).toEqual(['p.json: 1 turn had unknown slot placeholders ([hotel_colour] x1; first at sng0073/turn 0), removed (mwzeval drops them too; --strict makes them errors)']);
    const strict = new Evaluator({ richness: true, dataDir: DATA_DIR, strict: true });
    const e = errorOf(() => strict.evaluate({ sng0073: sng0073('the [hotel_colour] one') }, 'p.json'));
    expect(e.oneLine()).toBe('p.json: sng0073/turn 0: unknown slot placeholder(s) [hotel_colour]');
  });

  it('exits 2 with one line naming the dialogue for a wrong turn count, and writes -o output', async () => {
    const dir = tempDir('eval');
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ sng0073: [{ response: 'hello' }] }));
    const cli = (args: string[]) => runCli(['evaluate', '--data-dir', DATA_DIR, ...args]);
    const r = await cli(['-i', bad, '--bleu']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`todeval: ${bad}: sng0073: expected 4 system turns, got 1`);

    const good = path.join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ sng0073: sng0073('[value_name] is a nice place .') }));
    const out = path.join(dir, 'out.json');
    const ok = await cli(['-i', good, '--richness', '--success', '-o', out]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/====== RICHNESS ======/);
    const saved = JSON.parse(readFileSync(out, 'utf8'));
    expect(Object.keys(saved)).toEqual(expect.arrayContaining(['bleu', 'success', 'richness', 'dst', 'signature']));
    expect(saved.bleu).toBeNull();
    expect(saved.signature.data).toMatch(/^multiwoz21-convlab@[0-9a-f]{12}$/);
    expect(saved.success.state_source).toBe('gold');

    // --sgsacc on delexicalized responses: refused in one line with the count, before any work;
    // with --skip-delexicalized nothing is left to score, said in one warning, no model loaded
    const delex = path.join(dir, 'delex.json');
    writeFileSync(delex, JSON.stringify({ sng0073: ['a', 'b', 'c', 'd'].map((w) => ({ response: `${w} [value_name]` })) }));
    const refused = await cli(['-i', delex, '--sgsacc', '--richness', '-o', path.join(dir, 'refused.json')]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      `todeval: ${delex}: --sgsacc: 4 of 4 turns hold delexicalization placeholders ([value_name]) and no "utterance": SGSAcc and SER score lexicalized text. ` +
        'Give each turn its lexicalized text as "utterance" (a lexicalized file), or pass --skip-delexicalized to score only the 0 turns without placeholders\n',
    );
    expect(existsSync(path.join(dir, 'refused.json'))).toBe(false);
    const sg = await cli(['-i', delex, '--sgsacc', '--skip-delexicalized', '--richness']);
    expect(sg.code).toBe(0);
    expect(sg.stderr.trim()).toBe('todeval: warning: --sgsacc: no turn carries lexicalized text ("utterance", or a response without placeholders)');
    const noSgsacc = await cli(['-i', delex, '--skip-delexicalized', '--richness']);
    expect([noSgsacc.code, noSgsacc.stderr]).toEqual([2, 'todeval: --skip-delexicalized sets which turns --sgsacc scores: give --sgsacc\n']);
  });
});

describe.skipIf(!hasData('multiwoz', 'convlab_mwz21_test.json'))('evaluate: one line per kind of warning (issue 21)', () => {
  // The first 60 test dialogues, their system turns as the ConvLab file has them: delexicalized
  // (`text_delex`, whose placeholders mwzeval partly does not know) and lexicalized (`text`).
  // Read when a test runs, not while the suite is collected: a skipped suite's body still runs then.
  const convlab = () =>
    JSON.parse(readFileSync(path.join(DATA_DIR, 'multiwoz', 'convlab_mwz21_test.json'), 'utf8')) as Record<string, { log: { text: string; text_delex?: string }[] }>;
  const predictions = (field: 'text' | 'text_delex') =>
    Object.fromEntries(
      Object.entries(convlab())
        .slice(0, 60)
        .map(([id, d]) => [id.toLowerCase().replace(/\.json$/, ''), d.log.filter((_, i) => i % 2 === 1).map((t) => ({ response: t[field] ?? t.text }))]),
    );
  const warningsOf = (input: unknown, metrics: { bleu?: boolean; success?: boolean; richness?: boolean } = { bleu: true, success: true, richness: true }) => {
    const warnings: string[] = [];
    new Evaluator({ ...metrics, dataDir: DATA_DIR, onWarning: (m) => warnings.push(m) }).evaluate(input, 'p.json');
    return warnings;
  };

  it('unknown placeholders in many turns: one line with the count, each kind with its count, and the first place (was: a line per turn)', () => {
    const input = predictions('text_delex');
    const unknown = new Evaluator({ richness: true, dataDir: DATA_DIR }).evaluate(input).details.unknown_placeholders;
    expect(unknown.length).toBeGreaterThan(1);
    const warnings = warningsOf(input);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^p\\.json: ${unknown.length} turns had unknown slot placeholders \\(\\[\\w+\\] x\\d+.*; first at ${unknown[0].where}\\), removed`));
  });

  it('lexicalized responses: warned once, naming the metrics it affects among those asked for (was: silent, Inform 22.1 / Success 2.5 for the gold text)', () => {
    const warnings = warningsOf(predictions('text'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^p\.json: the responses look lexicalized \(0 of the \d+ turns whose reference has a \[slot\] placeholder have one\): Inform\/Success .*, BLEU .* and richness .* mean little for them; /);
    expect(warningsOf(predictions('text'), { bleu: true })[0]).toMatch(/: BLEU \(its references are delexicalized\) means little for them; /);
    // Delexicalized output is not lexicalized, whatever its placeholders' names.
    expect(warningsOf(predictions('text_delex')).join('\n')).not.toContain('lexicalized');
  });
});

describe.skipIf(!hasData('multiwoz', 'predictions', 'augpt.json'))('evaluate --sgsacc on a delexicalized system (AuGPT)', () => {
  it('refuses in one line with how many turns hold placeholders and what to pass, before loading a model', async () => {
    const augpt = path.join(DATA_DIR, 'multiwoz', 'predictions', 'augpt.json');
    // No --model: the refusal comes before the model is looked for.
    const r = await runCli(['evaluate', '-i', augpt, '--sgsacc', '--data-dir', DATA_DIR]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    // 4,523 of AuGPT's 7,372 responses hold placeholders ([name], [type]...); the other 2,849 name no value.
    expect(r.stderr).toMatch(
      new RegExp(
        `^todeval: ${augpt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: --sgsacc: 4,523 of 7,372 turns hold delexicalization placeholders \\(\\[\\w+\\], \\[\\w+\\], \\[\\w+\\]\\) and no "utterance": ` +
          'SGSAcc and SER score lexicalized text\\. Give each turn its lexicalized text as "utterance" \\(a lexicalized file\\), or pass --skip-delexicalized to score only the 2,849 turns without placeholders\\n$',
      ),
    );
  });
});
